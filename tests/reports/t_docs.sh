#!/usr/bin/env bash
# Each report of issue 28 is named by st-analyze --help, its man page, the
# README and analyze/README.md.
. "$(dirname "$0")/../lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
st_tmpdir T
# the page as a reader sees it: options at the start of their paragraph
mandoc -T ascii "$root/analyze/st-analyze/st-analyze.1" | col -b >"$T/man.txt"
for opt in --sizes --seek --hist --depth --top-by --html; do
	missing=""
	st-analyze --help | grep -q -- "^  $opt" || missing="$missing --help"
	grep -q -- "^ *$opt" "$T/man.txt" || missing="$missing st-analyze.1"
	grep -q -- "\`$opt" "$root/README.md" || missing="$missing README.md"
	grep -q -- "\`$opt" "$root/analyze/README.md" || missing="$missing analyze/README.md"
	[ -z "$missing" ] && pass "reports_docs_${opt#--}" || fail "reports_docs_${opt#--}" "not in$missing"
done

# The README is the page a newcomer reads whole: 250 lines at most; the
# detail lives in each folder's README and the man pages.
lines=$(wc -l <"$root/README.md")
[ "$lines" -le 250 ] && pass readme_length || fail readme_length "README.md has $lines lines, more than 250"
