#!/usr/bin/env bash
# The C unit tests' harness (tests/check.h): a test program in which no
# check ran fails with a FAIL line, one whose checks pass exits 0.
. "$(dirname "$0")/../lib.sh"
st_tmpdir T
root=$(cd "$(dirname "$0")/../.." && pwd)

printf '#include "tests/check.h"\nint main(void) { return check_failures != 0; }\n' >"$T/none.c"
printf '#include "tests/check.h"\nint main(void) { check(1, "one", "x"); return check_failures != 0; }\n' >"$T/one.c"
for t in none one; do
	cc -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -I"$root" -o "$T/$t" "$T/$t.c" ||
		fail "harness_build_$t" "does not compile"
done
"$T/none" >"$T/none.out"
check harness_no_check_fails test $? -eq 1
check harness_no_check_says_so grep -qx "FAIL: none: no check ran" "$T/none.out"
check harness_one_check_passes test "$("$T/one")" = "PASS: one"
