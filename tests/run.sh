#!/usr/bin/env bash
# Runs every test program given on the command line and sums their results.
#
# A test program prints one line per check: "PASS: name", "FAIL: name: why" or
# "SKIP: name: why" (anything else is shown as is). A program that exits
# non-zero without printing a FAIL line counts as one failure, so a crash is
# never lost. Exit status: 0 only when nothing failed.
set -u
export ST_BUILD=${ST_BUILD:-$PWD/build}
export PATH="$ST_BUILD:$PATH"
passed=0 failed=0 skipped=0
failures=()
for t in "$@"; do
	echo "== $t"
	out=$(mktemp)
	"$t" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	p=$(grep -c '^PASS: ' "$out")
	f=$(grep -c '^FAIL: ' "$out")
	s=$(grep -c '^SKIP: ' "$out")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "FAIL: $t: exited with status $rc"
		f=1
	fi
	[ "$f" -gt 0 ] && failures+=("$t")
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	rm -f "$out"
done
echo
[ ${#failures[@]} -gt 0 ] && echo "failed programs: ${failures[*]}"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
