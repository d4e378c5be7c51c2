#!/usr/bin/env bash
# The house's floors (scripts/check-layers.sh): this tree has no include from
# a lower floor to a higher one and no circle of files; crafted trees with a
# back arrow, a circle, one program including another's header, or a file in
# no floor make the checker fail and name the file and the include.
. "$(dirname "$0")/../lib.sh"
st_tmpdir T
root=$(cd "$(dirname "$0")/../.." && pwd)
checker=$root/scripts/check-layers.sh

"$checker" "$root" >"$T/tree.out" 2>&1
check layers_tree_passes test $? -eq 0
[ -s "$T/tree.out" ] && fail layers_tree_silent "$(head -3 "$T/tree.out")" || pass layers_tree_silent

# layer TREE FILE=LINES...: a tree of files with the given lines.
layer() {
	local tree=$T/$1 spec
	shift
	for spec in "$@"; do
		mkdir -p "$tree/$(dirname "${spec%%=*}")"
		printf '%b\n' "${spec#*=}" >"$tree/${spec%%=*}"
	done
	echo "$tree"
}

ok=$(layer ok 'format/lib/a.h=int a;' 'format/lib/a.c=#include "a.h"' \
	'analyze/lib/b.h=#include "format/lib/a.h"' 'analyze/lib/b.c=#include "analyze/lib/b.h"' \
	'replay/main.c=#include "analyze/lib/b.h"\n#include "common/c.h"' 'common/c.h=int c;' \
	'tests/t.c=#include "replay/r.h"' 'replay/r.h=int r;')
"$checker" "$ok" >"$T/ok.out" 2>&1
check layers_floors_downward_pass test $? -eq 0

back=$(layer back 'format/lib/a.c=#include "analyze/lib/b.h"' 'analyze/lib/b.h=int b;')
expect_fault layers_back_arrow "$back" 'format/lib/a.c: #include "analyze/lib/b.h": back arrow from floor 0 up to floor 2'
lib_prog=$(layer lib_prog 'analyze/lib/b.c=#include "analyze/st-analyze/p.h"' 'analyze/st-analyze/p.h=int p;')
expect_fault layers_library_includes_program "$lib_prog" 'analyze/lib/b.c: #include "analyze/st-analyze/p.h": back arrow from floor 2 up to floor 3'
circle=$(layer circle 'analyze/lib/x.c=#include "analyze/lib/x.h"\n#include "analyze/lib/y.h"' \
	'analyze/lib/x.h=int x;' 'analyze/lib/y.h=#include "analyze/lib/x.h"')
expect_fault layers_circle "$circle" 'circle of includes: analyze/lib/x -> analyze/lib/y -> analyze/lib/x'
# b.h includes c.h, whose c.c includes a.h: c.c and c.h are one file.
long=$(layer long 'common/a.h=#include "common/b.h"' 'common/b.h=#include "c.h"' 'common/c.h=int c;' \
	'common/c.c=#include "c.h"\n#include "a.h"')
expect_fault layers_circle_of_three "$long" 'common/a -> common/b -> common/c -> common/a'
programs=$(layer programs 'replay/main.c=#include "analyze/st-analyze/p.h"' 'analyze/st-analyze/p.h=int p;')
expect_fault layers_program_includes_program "$programs" "replay/main.c: #include \"analyze/st-analyze/p.h\": one program includes another program's header"
nofloor=$(layer nofloor 'misc/m.c=#include "format/lib/a.h"' 'format/lib/a.h=int a;')
expect_fault layers_no_floor "$nofloor" 'misc/m.c: in no floor'
