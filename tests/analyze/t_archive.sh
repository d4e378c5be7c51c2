#!/usr/bin/env bash
# The libraries' archives are made anew when rebuilt: the object of a source
# gone since (a renamed file's) leaves the archive, where the linker would
# still take it before the source that replaced it (correlate.c became
# corr_core.c, and an st-analyze built over an old build linked the old one).
. "$(dirname "$0")/../lib.sh"
st_tmpdir T
root=$(cd "$(dirname "$0")/../.." && pwd)
printf 'int gone_source_symbol(void) { return 1; }\n' | cc -x c -c -o "$T/gone.o" -

# archive NAME PATH MEMBER: PATH (under the build) rebuilt after gone.o was
# put into it keeps MEMBER, one of its sources, and drops gone.o.
archive() {
	local name=$1 lib=$T/build/$2 member=$3
	if ! make -s -C "$root" -j2 B="$T/build" "$lib" >"$T/make.out" 2>&1; then
		fail "archive_${name}_built" "$(head -c 300 "$T/make.out")"
		return
	fi
	ar q "$lib" "$T/gone.o"
	touch -d '2000-01-01' "$lib"
	make -s -C "$root" -j2 B="$T/build" "$lib" >"$T/make2.out" 2>&1
	check "archive_${name}_rebuilt" test $? -eq 0
	ar t "$lib" >"$T/members"
	check "archive_${name}_keeps_sources" grep -qx "$member" "$T/members"
	if grep -qx gone.o "$T/members"; then
		fail "archive_${name}_drops_gone_objects" "gone.o still a member of $2"
	else
		pass "archive_${name}_drops_gone_objects"
	fi
}
archive analyze analyze/libanalyze.a corr_core.o
archive sttrace libsttrace.a reader.o
archive common libcommon.a csv.o
