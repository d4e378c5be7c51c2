#!/usr/bin/env bash
# No circle of calls between the files of format/lib, record/ or analyze/lib
# (scripts/check-calls.sh, from the built objects): this build has none;
# crafted objects whose files call each other in a circle (of two, of
# three) make the checker fail and name the files and the call; a call
# through a pointer handed in is no circle.
. "$(dirname "$0")/../lib.sh"
st_tmpdir T
root=$(cd "$(dirname "$0")/../.." && pwd)
checker=$root/scripts/check-calls.sh

"$checker" "$ST_BUILD" >"$T/tree.out" 2>&1
check calls_tree_passes test $? -eq 0
[ -s "$T/tree.out" ] && fail calls_tree_silent "$(head -3 "$T/tree.out")" || pass calls_tree_silent

# objs BUILD FILE=SOURCE...: each C source compiled to BUILD/FILE.o.
objs() {
	local build=$T/$1 spec o
	shift
	for spec in "$@"; do
		o=$build/${spec%%=*}.o
		mkdir -p "$(dirname "$o")"
		printf '%b\n' "${spec#*=}" | cc -x c -c -o "$o" - || return 1
	done
	echo "$build"
}

two=$(objs two 'format/lib/a=int b(void); int a(void) { return b(); }' \
	'format/lib/b=int a(void); int b(void) { return a() + 1; }')
expect_fault calls_circle_of_two "$two" \
	'circle of calls: format/lib/a.c -> format/lib/b.c -> format/lib/a.c (format/lib/b.c calls a() of format/lib/a.c)'
three=$(objs three 'record/x=int y(void); int x(void) { return y(); }' \
	'record/y=int z(void); int y(void) { return z(); }' \
	'record/z=int x(void); int z(void) { return x(); }')
expect_fault calls_circle_of_three "$three" 'record/x.c -> record/y.c -> record/z.c -> record/x.c'
# the correlator's files: a family calls the core, never the other way
corr=$(objs corr 'analyze/lib/corr_io=int bio(void); int io(void) { return bio(); }' \
	'analyze/lib/corr_bio=int io(void); int bio(void) { return io() + 1; }')
expect_fault calls_circle_in_analyze "$corr" \
	'circle of calls: analyze/lib/corr_bio.c -> analyze/lib/corr_io.c -> analyze/lib/corr_bio.c'
# the cursor hands whole.c its source: whole.c calls it through a pointer
handed=$(objs handed \
	'format/lib/cursor=struct src { int (*next)(void *); void *ctx; };\nint whole_next(struct src *s);\nstatic int stored(void *c) { return c != 0; }\nint cursor_next(void *c) { struct src s = { stored, c }; return whole_next(&s); }' \
	'format/lib/whole=struct src { int (*next)(void *); void *ctx; };\nint whole_next(struct src *s) { return s->next(s->ctx); }')
"$checker" "$handed" >"$T/handed.out" 2>&1
check calls_through_pointer_pass test $? -eq 0
"$checker" "$T/none" >"$T/none.out" 2>&1
check calls_no_objects_refused test $? -eq 2
