#!/usr/bin/env bash
# Help, usage errors and bad input: one clear line naming what is wrong and
# exit 2 (usage) or 1 (an input that cannot be read or cannot answer); never
# a crash. A cut file is read up to its last complete chunk.
. "$(dirname "$0")/../lib.sh"

st_tmpdir dir
st-format synth -o "$dir/a.sttrace" --ios 2000 --seed 5 >/dev/null || { fail analyze.errors "synth failed"; exit 1; }

st-analyze --help | grep -q '^usage: st-analyze' && st-analyze --help | grep -q 'Q2G' &&
	st-analyze diff --help | grep -q '^usage: st-analyze diff' && pass analyze.help ||
	fail analyze.help "--help text missing"

# libmicrohttpd (and the TLS libraries it brings) is loaded for --metrics
# only (metrics.c): a summary maps zstd, never it.
LD_DEBUG=libs st-analyze "$dir/a.sttrace" 2>"$dir/libs" >/dev/null
if ! grep -q 'calling init: .*libzstd' "$dir/libs"; then
	fail analyze.metrics_loaded_lazily "LD_DEBUG=libs listed no library: $(head -1 "$dir/libs")"
elif grep -q microhttpd "$dir/libs"; then
	fail analyze.metrics_loaded_lazily "a summary loaded $(grep -o '[^ /]*microhttpd[^ ]*' "$dir/libs" | head -1)"
else
	pass analyze.metrics_loaded_lazily
fi

# expect_error NAME WORD ARGS...: exit $RC (default 2) and one stderr line mentioning WORD.
expect_error() {
	local name=$1 word=$2 rc
	shift 2
	st-analyze "$@" >/dev/null 2>"$dir/err"
	rc=$?
	if [ $rc = "${RC:-2}" ] && [ "$(wc -l <"$dir/err")" = 1 ] && grep -q -- "$word" "$dir/err" &&
		grep -q '^st-analyze' "$dir/err"; then
		pass "$name"
	else
		fail "$name" "exit $rc: $(head -2 "$dir/err")"
	fi
}
expect_error analyze.error.no_file "no input file"
RC=1 expect_error analyze.error.missing "/nonexistent.sttrace" /nonexistent.sttrace
head -c 5000 /dev/urandom >"$dir/garbage"
RC=1 expect_error analyze.error.garbage "garbage" "$dir/garbage"
expect_error analyze.error.option "--bogus" --bogus "$dir/a.sttrace"
expect_error analyze.error.quantile "101" --quantile 101 "$dir/a.sttrace"
expect_error analyze.error.stage "Z2Z" --stage Z2Z "$dir/a.sttrace"
expect_error analyze.error.by "nothing" --by nothing "$dir/a.sttrace"
RC=1 expect_error analyze.error.dev "nosuchdev" --dev nosuchdev "$dir/a.sttrace"
expect_error analyze.error.interval "--interval" --interval 0 "$dir/a.sttrace"
RC=1 expect_error analyze.error.too_many_bins "--interval" --interval 1ns "$dir/a.sttrace"
expect_error analyze.error.threads_zero "--threads 0" --threads 0 "$dir/a.sttrace"
# nan passes every range check strtod's result gets (a comparison with it is
# false): each number option refuses it, and inf, as not a number.
for opt in quantile pid top exact-limit heatmap-rows threads; do
	expect_error "analyze.error.${opt}_nan" "--$opt nan" --"$opt" nan "$dir/a.sttrace"
	expect_error "analyze.error.${opt}_inf" "--$opt inf" --"$opt" inf "$dir/a.sttrace"
	expect_error "analyze.error.${opt}_hex" "--$opt 0x10" --"$opt" 0x10 "$dir/a.sttrace"
done
# Numbers and durations are decimal (strtod took hexadecimal and its floats).
expect_error analyze.error.interval_hex_float "--interval 0x1p-3" --interval 0x1p-3 "$dir/a.sttrace"
expect_error analyze.error.stale_hex "--stale 0x10" --stale 0x10 "$dir/a.sttrace"
expect_error analyze.error.from_hex_float "--from 0x1p-3" --from 0x1p-3 "$dir/a.sttrace"
expect_error analyze.error.quantile_hex_float "--quantile 0x1p-3" diff --quantile 0x1p-3 "$dir/a.sttrace" \
	"$dir/a.sttrace"
st-analyze --csv --interval 1e-3 "$dir/a.sttrace" >"$dir/exp.csv" 2>/dev/null &&
	st-analyze --csv --interval 1ms "$dir/a.sttrace" >"$dir/ms.csv" 2>/dev/null &&
	cmp -s "$dir/exp.csv" "$dir/ms.csv" && pass analyze.interval_exponent_taken ||
	fail analyze.interval_exponent_taken "--interval 1e-3 is not --interval 1ms"
# A +4000 % regression is no "no regression" because the threshold was nan.
st-format synth -o "$dir/slow.sttrace" --ios 2000 --seed 2 --slow-factor 40 >/dev/null
for t in nan inf -inf 0x10 0x1p-3; do
	expect_error "analyze.error.threshold_$t" "--threshold $t" diff --threshold "$t" "$dir/a.sttrace" \
		"$dir/slow.sttrace"
done

# A file cut in the middle: analyzed up to its last complete chunk, said so.
size=$(stat -c %s "$dir/a.sttrace")
head -c $((size / 2)) "$dir/a.sttrace" >"$dir/cut.sttrace"
st-analyze "$dir/cut.sttrace" >"$dir/cut.out" 2>&1
rc=$?
[ $rc = 0 ] && grep -q 'recovered' "$dir/cut.out" && pass analyze.error.cut_file ||
	fail analyze.error.cut_file "exit $rc: $(head -1 "$dir/cut.out")"
