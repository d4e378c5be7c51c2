#!/bin/sh
# check-calls.sh [BUILD]: no two files of format/lib, record/ or analyze/lib
# call each other in a circle, read from their objects under BUILD (default:
# the tree's build/): file a calls file b when a.o leaves undefined a
# function that b.o defines (nm). A call through a pointer handed in is no arrow:
# that is how a lower file reads from a higher one (whole.c from the
# cursor's source); inline functions of a header are compiled into each
# file and are no arrow either.
#
# Fails (exit 1, one line per circle naming its files and the functions
# that close it) on a circle of calls; exit 2 when BUILD holds no object
# of those folders (build first).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=${1:-$(dirname "$0")/../build}
DIRS="format/lib record analyze/lib"

objs=
for d in $DIRS; do
	for o in "$BUILD/$d"/*.o; do
		[ -f "$o" ] && objs="$objs $o"
	done
done
[ -n "$objs" ] || { echo "check-calls: no object of $DIRS under $BUILD (build first)" >&2; exit 2; }

for o in $objs; do
	f=${o#"$BUILD"/}
	f=${f%.o}.c
	nm "$o" | awk -v f="$f" '$1 == "U" { print "use", f, $2; next }
		NF == 3 && $2 ~ /^[TW]$/ { print "def", f, $3 }'
done | awk -f "$HERE/circles.awk" -f /dev/fd/3 3<<'EOF'
function fault(msg) { print "check-calls: " msg; bad = 1 }
$1 == "def" { owner[$3] = $2; next }
{ uses[++nuse] = $2 " " $3 }
END {
	for (i = 1; i <= nuse; i++) {
		split(uses[i], w, " ")
		u = w[1]; sym = w[2]
		if (!(sym in owner)) continue
		v = owner[sym]
		if (u == v || (u SUBSEP v) in why) continue
		why[u SUBSEP v] = u " calls " sym "() of " v
		adj[u] = adj[u] " " v
		if (!(u in seen)) { seen[u] = 1; order[++nnodes] = u }
	}
	circles("calls")
	exit bad
}
EOF
