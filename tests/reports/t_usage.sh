#!/usr/bin/env bash
# The report options' usage errors: exit 2 and one line that says what is
# wrong (WHAT) and names --help.
. "$(dirname "$0")/../lib.sh"
st_tmpdir T
st-format synth -o "$T/a.sttrace" --ios 200 --seed 1 >/dev/null || { fail reports_usage "synth failed"; exit 1; }
usage_error() {
	local name=$1 what=$2 rc=0
	shift 2
	st-analyze "$T/a.sttrace" "$@" >/dev/null 2>"$T/err" || rc=$?
	if [ $rc -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q -- "--help)$" "$T/err" &&
		grep -qF -- "$what" "$T/err"; then
		pass "$name"
	else
		fail "$name" "exit $rc: $(cat "$T/err")"
	fi
}
usage_error reports_usage_top_by_key "--top-by dev: not file, comm, pid or cgroup" --top-by dev
usage_error reports_usage_top_by_rank "--top-by comm:p99: rank by ios, bytes or tail" --top-by comm:p99
usage_error reports_usage_top_by_summary "not a --top-by list" --top-by comm --save-summary "$T/s.sum"
usage_error reports_usage_quantile_sizes "reports of their own" --quantile 99 --sizes
usage_error reports_usage_html_csv "--html writes a page of its own" --html "$T/x.html" --csv
ln -s "$T/elsewhere.html" "$T/link.html"
rc=0
st-analyze "$T/a.sttrace" --html "$T/link.html" 2>"$T/err" || rc=$?
[ $rc -eq 1 ] && [ ! -e "$T/elsewhere.html" ] && grep -q "symbolic link" "$T/err" &&
	pass reports_usage_html_symlink || fail reports_usage_html_symlink "exit $rc: $(cat "$T/err")"
st-analyze "$T/a.sttrace" --html "$T/page.html" >/dev/null 2>&1
[ "$(stat -c %a "$T/page.html")" = 600 ] && pass reports_usage_html_0600 ||
	fail reports_usage_html_0600 "mode $(stat -c %a "$T/page.html" 2>&1)"
