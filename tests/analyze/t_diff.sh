#!/usr/bin/env bash
# st-analyze diff as a CI gate: a trace with an injected device slowdown
# (st-format synth --slow-factor) is a regression (exit 3); another seed of
# the same distribution is not (exit 0); bad input is exit 2.
. "$(dirname "$0")/../lib.sh"

st_tmpdir dir
st-format synth -o "$dir/base.sttrace" --ios 20000 --seed 1 >/dev/null &&
	st-format synth -o "$dir/same.sttrace" --ios 20000 --seed 2 >/dev/null &&
	st-format synth -o "$dir/slow.sttrace" --ios 20000 --seed 2 --slow-factor 1.5 >/dev/null ||
	{ fail analyze.diff "synth failed"; exit 1; }

st-analyze diff "$dir/base.sttrace" "$dir/slow.sttrace" >"$dir/slow.out" 2>&1
rc=$?
[ $rc = 3 ] && grep -q 'REGRESSED (gate)' "$dir/slow.out" && pass analyze.diff.regression ||
	fail analyze.diff.regression "exit $rc for a 1.5x slower device, want 3"

st-analyze diff "$dir/base.sttrace" "$dir/same.sttrace" >"$dir/same.out" 2>&1
rc=$?
[ $rc = 0 ] && grep -q 'result: no regression' "$dir/same.out" && pass analyze.diff.same ||
	fail analyze.diff.same "exit $rc for the same distribution, want 0: $(grep REGRESSED "$dir/same.out")"

# A threshold above the injected change lets it pass; CSV names the gate row.
st-analyze diff --threshold 200 "$dir/base.sttrace" "$dir/slow.sttrace" >/dev/null 2>&1
rc=$?
[ $rc = 0 ] && pass analyze.diff.threshold || fail analyze.diff.threshold "exit $rc with --threshold 200"
st-analyze diff --csv --stage D2C --quantile 90 "$dir/base.sttrace" "$dir/slow.sttrace" 2>/dev/null |
	grep -q '^read,D2C,90,.*REGRESSED (gate)$' && pass analyze.diff.csv ||
	fail analyze.diff.csv "no regressed D2C p90 gate row for read"

st-analyze diff "$dir/base.sttrace" "$dir/missing.sttrace" >/dev/null 2>"$dir/err"
rc=$?
[ $rc = 1 ] && [ "$(wc -l <"$dir/err")" = 1 ] && grep -q "missing.sttrace" "$dir/err" &&
	pass analyze.diff.bad_file || fail analyze.diff.bad_file "exit $rc: $(cat "$dir/err")"
st-analyze diff "$dir/base.sttrace" 2>/dev/null
[ $? = 2 ] && pass analyze.diff.usage || fail analyze.diff.usage "one file accepted"
