#!/usr/bin/env bash
# The probes are one bpf/*.bpf.c per concern, linked into one object
# (record/module.mk): each file compiles alone with the build's flags, no
# .bpf.h holds a program or a license, the skeleton is one struct
# sttrace_bpf holding every file's programs, and in the linked object each
# shared map and setting sits where its symbol says (libbpf 1.1's linker
# left a map declared extern before its definition at offset 0).
. "$(dirname "$0")/../lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
skel=$ST_BUILD/sttrace.skel.h
linked=$ST_BUILD/bpf/sttrace.bpf.o
for tool in clang bpftool llvm-readelf; do
	command -v $tool >/dev/null || { skip bpf_units "no $tool"; exit 0; }
done
[ -r "$skel" ] && [ -r "$linked" ] && [ -r "$ST_BUILD/vmlinux.h" ] ||
	{ skip bpf_units "st-record not built (make)"; exit 0; }
st_tmpdir T
arch=$(uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')

# The programs of an object: its global functions outside .text (subprograms).
programs() {
	llvm-readelf -SW "$1" | sed -n 's/^ *\[ *\([0-9]*\)\] \([^ ]*\) .*/\1 \2/p' >"$T/sections"
	llvm-readelf -sW "$1" | awk 'NR == FNR { name[$1] = $2; next }
		$4 == "FUNC" && $5 == "GLOBAL" && $7 ~ /^[0-9]+$/ && name[$7] != ".text" { print $8 }' \
		"$T/sections" -
}

# The members of the skeleton's struct { ... } progs.
sed -n '/^\tstruct {$/,/^\t} progs;$/p' "$skel" | sed -n 's/^\t\tstruct bpf_program \*\(.*\);$/\1/p' |
	sort >"$T/skel_progs"

units=0
for src in "$root"/bpf/*.bpf.c; do
	unit=$(basename "$src" .bpf.c)
	units=$((units + 1))
	if ! (cd "$root" && clang -g -O2 -target bpf -D__TARGET_ARCH_"$arch" -Wall -Werror \
		-I"$ST_BUILD" -Ibpf -Iformat/lib -c "$src" -o "$T/$unit.o") 2>"$T/$unit.err"; then
		fail "bpf_unit_${unit}_compiles_alone" "$(head -3 "$T/$unit.err")"
		continue
	fi
	pass "bpf_unit_${unit}_compiles_alone"
	missing=$(programs "$T/$unit.o" | sort | comm -23 - "$T/skel_progs")
	[ -z "$missing" ] && pass "bpf_unit_${unit}_in_skeleton" ||
		fail "bpf_unit_${unit}_in_skeleton" "programs not in $skel: $missing"
done
check bpf_units_several test "$units" -gt 1

included=$(grep -n '#include.*\.bpf\.c' "$root"/bpf/*.bpf.[ch])
[ -z "$included" ] && pass bpf_units_include_no_unit || fail bpf_units_include_no_unit "$included"
# A program's or the license's section: SEC("name") not starting with '.' (.maps is a declaration).
programs_in_headers=$(grep -nE 'SEC\("[^.]|BPF_PROG\(' "$root"/bpf/*.bpf.h)
[ -z "$programs_in_headers" ] && pass bpf_headers_hold_no_programs ||
	fail bpf_headers_hold_no_programs "$(echo "$programs_in_headers" | head -3)"

n=$(grep -c '^struct sttrace_bpf {$' "$skel")
check bpf_skeleton_one_object test "$n" -eq 1

# Each variable of .maps, .rodata and .bss at its symbol's offset.
llvm-readelf -sW "$linked" | awk '
	function hex(s,  n, i) { for (i = 1; i <= length(s); i++) n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return n }
	$4 == "OBJECT" && $7 ~ /^[0-9]+$/ { print $8, hex($2) }' |
	sort >"$T/symbols"
bpftool btf dump file "$linked" | awk '
	/^\[[0-9]+\] DATASEC / { sec = $3; next }
	/^\[/ { sec = "" }
	sec ~ /^.\.(maps|rodata|bss).$/ && /VAR/ {
		off = $2; sub("offset=", "", off); name = $NF; gsub(/[\047)]/, "", name); print name, off }' |
	sort >"$T/datasec"
if [ ! -s "$T/datasec" ]; then
	fail bpf_link_offsets "no variables in the DATASECs of $linked"
elif misplaced=$(join -a 1 "$T/datasec" "$T/symbols" | awk '$2 != $3') && [ -z "$misplaced" ]; then
	pass bpf_link_offsets
else
	fail bpf_link_offsets "BTF offset vs symbol: $(echo "$misplaced" | head -3 | tr '\n' ' ')"
fi
