#!/bin/sh
# check-layers.sh [ROOT]: the house's floors, from the #include "..." lines of
# every .c and .h under ROOT (default: this tree), build output left out.
#
#   floor 0  format/lib (libsttrace), bpf
#   floor 1  common, format/synth
#   floor 2  analyze/lib (libanalyze)
#   floor 3  the programs: format/st-format, analyze/st-analyze, record,
#            replay, spec (its table generator)
#   tests/ and scripts/ may include anything; nothing may include them.
#
# Fails (exit 1, one line per fault naming the file and the include) on an
# include from a lower floor to a higher one, on a program including another
# program's header, on a file in no floor, and on a circle of includes, where
# foo.c and foo.h are one node (foo.c including foo.h is no circle).
# An include is looked up as the compiler does: beside the file, then from
# ROOT (-I.), then in format/lib (the BPF build's -Iformat/lib); one found
# nowhere is generated (vmlinux.h, the skeletons) and not checked.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=${1:-$(dirname "$0")/..}
cd "$ROOT"

files=$(find . \( -path ./build -o -path ./build-asan -o -path ./.git -o -path ./bpf/vmlinux \) -prune -o \
	-type f \( -name '*.c' -o -name '*.h' \) -print | sed 's|^\./||' | LC_ALL=C sort)
[ -n "$files" ] || { echo "check-layers: no .c or .h file under $ROOT" >&2; exit 1; }
{
	printf 'file %s\n' $files
	printf '%s\n' $files | xargs awk '/^[ \t]*#[ \t]*include[ \t]*"/ {
		inc = $0; sub(/^[^"]*"/, "", inc); sub(/".*/, "", inc); print "inc", FILENAME, inc }'
} | awk -f "$HERE/circles.awk" -f /dev/fd/3 3<<'EOF'
function floor_of(p) {
	if (p ~ /^(tests|scripts)\//) return 4
	if (p ~ /^format\/lib\// || p ~ /^bpf\//) return 0
	if (p ~ /^common\// || p ~ /^format\/synth\//) return 1
	if (p ~ /^analyze\/lib\//) return 2
	if (p ~ /^(format\/st-format|analyze\/st-analyze|record|replay|spec)\//) return 3
	return -1
}
# The folder a program lives in (floor 3), to tell one program from another.
function program_dir(p,   parts) {
	split(p, parts, "/")
	if (p ~ /^(format\/st-format|analyze\/st-analyze)\//) return parts[1] "/" parts[2]
	return parts[1]
}
function dir_of(p) { return sub(/\/[^\/]*$/, "", p) ? p : "" }
function node_of(p) { sub(/\.[ch]$/, "", p); return p }
function fault(msg) { print "check-layers: " msg; bad = 1 }
function resolve(f, inc,   d) {
	d = dir_of(f)
	if ((d == "" ? inc : d "/" inc) in known) return d == "" ? inc : d "/" inc
	if (inc in known) return inc
	if (("format/lib/" inc) in known) return "format/lib/" inc
	return ""
}
$1 == "file" { known[$2] = 1; next }
{ incs[++ninc] = $2 " " $3 }
END {
	for (i = 1; i <= ninc; i++) {
		split(incs[i], w, " ")
		f = w[1]; inc = w[2]
		ff = floor_of(f)
		if (ff == 4) continue
		if (ff < 0) { if (!(f in nofloor)) fault(f ": in no floor (place its folder in scripts/check-layers.sh)"); nofloor[f] = 1; continue }
		t = resolve(f, inc)
		if (t == "") continue
		ft = floor_of(t)
		if (ft < 0)
			fault(f ": #include \"" inc "\": " t " is in no floor (place its folder in scripts/check-layers.sh)")
		else if (ft > ff)
			fault(f ": #include \"" inc "\": back arrow from floor " ff " up to " (ft == 4 ? "tests/scripts" : "floor " ft))
		else if (ff == 3 && ft == 3 && program_dir(f) != program_dir(t))
			fault(f ": #include \"" inc "\": one program includes another program's header")
		u = node_of(f); v = node_of(t)
		if (u == v || (u SUBSEP v) in why) continue
		why[u SUBSEP v] = f " includes " t
		adj[u] = adj[u] " " v
		if (!(u in seen)) { seen[u] = 1; order[++nnodes] = u }
	}
	circles("includes")
	exit bad
}
EOF
