#!/usr/bin/env bash
# libanalyze.a is made anew when rebuilt: the object of a source gone since
# (a renamed file's) leaves the archive, where the linker would still take
# it before the source that replaced it (correlate.c became corr_core.c).
. "$(dirname "$0")/../lib.sh"
st_tmpdir T
root=$(cd "$(dirname "$0")/../.." && pwd)
lib=$T/build/analyze/libanalyze.a

if ! make -s -C "$root" -j2 B="$T/build" "$lib" >"$T/make.out" 2>&1; then
	fail archive_built "$(head -c 300 "$T/make.out")"
else
	# an object of a source no longer in the tree, put in the archive as the last build left it
	printf 'int gone_source_symbol(void) { return 1; }\n' | cc -x c -c -o "$T/gone.o" -
	ar q "$lib" "$T/gone.o"
	touch -d '2000-01-01' "$lib"
	make -s -C "$root" -j2 B="$T/build" "$lib" >"$T/make2.out" 2>&1
	check archive_rebuilt test $? -eq 0
	ar t "$lib" >"$T/members"
	check archive_keeps_sources grep -qx corr_core.o "$T/members"
	if grep -qx gone.o "$T/members"; then
		fail archive_drops_gone_objects "gone.o still a member of libanalyze.a"
	else
		pass archive_drops_gone_objects
	fi
fi
