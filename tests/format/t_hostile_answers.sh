#!/usr/bin/env bash
# The crafted files of tests/format/hostile/ get answers that say what is
# wrong, never a crash, an overflow or a plausible-looking 0 (issue 45):
# - CPU 0xffffffff or random CPUs: convert --to blkparse|blktrace ends at
#   once with one line naming the CPU, and leaves no file behind;
# - per-CPU lost counts whose sum passes 2^64: "or more", not 0;
# - a chunk header's range of 0..2^64-1: the span and rates of the records
#   (the truth: the first and last timestamps `st-format cat` prints);
# - an index or chunk header whose counts lie: info prints, says so on
#   stderr and exits 1 (a damaged file); verify fails;
# - a clock offset of 2^64-1 or -2^63: no signed overflow (the ASan+UBSan
#   build, when built: make check builds it) and no wall clock shown.
. "$(dirname "$0")/../lib.sh"
st_tmpdir T
H=$(dirname "$0")/hostile

for f in cpu_max__synth cpu_random__synth; do
	for to in blkparse blktrace; do
		mkdir -p "$T/$f.$to"
		(ulimit -v 2097152; exec timeout 20 st-format convert "$H/$f.sttrace" --to $to -o "$T/$f.$to/x") \
			>/dev/null 2>"$T/err"
		rc=$?
		if [ $rc != 1 ] || ! grep -q 'on CPU [0-9]*: CPU numbers end at 8191' "$T/err"; then
			fail "hostile.cpu.$f.$to" "exit $rc: $(head -c 300 "$T/err")"
		elif [ -n "$(ls "$T/$f.$to")" ]; then
			fail "hostile.cpu.$f.$to" "left $(ls "$T/$f.$to" | wc -l) files"
		else
			pass "hostile.cpu.$f.$to"
		fi
	done
done

f=$H/lost_sum_overflow__synth.sttrace
out=$(st-format info "$f" | grep '^lost events')
case $out in
*"18446744073709551615 or more"*) pass hostile.lost_sum.info ;;
*) fail hostile.lost_sum.info "$out" ;;
esac
out=$(st-analyze "$f" | head -1)
case $out in
*"lost events: 18446744073709551615 or more"*) pass hostile.lost_sum.analyze ;;
*) fail hostile.lost_sum.analyze "$out" ;;
esac

# hdr_range_wide: the records' own first and last timestamps
f=$H/hdr_range_wide__synth.sttrace
read -r first last < <(st-format cat --csv "$f" | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "ts") c = i; next }
	{ if (min == "" || $c < min) min = $c; if ($c > max) max = $c } END { printf "%.0f %.0f\n", min, max }')
want=$(awk -v a="$first" -v b="$last" 'BEGIN { printf "%.6f", (b - a) / 1e9 }')
out=$(st-format info "$f" | grep '^time span')
[ "$out" = "time span     $first .. $last ns (event clock), $want s" ] && pass hostile.wide.info ||
	fail hostile.wide.info "$out; the records span $first .. $last"
head=$(st-analyze "$f" | head -1)
zero=$(st-analyze "$f" | grep -c ' 0.0 IOPS')
[[ "$head" == *" $want s,"* ]] && [ "$zero" = 0 ] && pass hostile.wide.analyze ||
	fail hostile.wide.analyze "$head; $zero groups at 0.0 IOPS; the records span $want s"

for f in idx_typecount_plus1000__synth hdr_events_plus1__synth; do
	st-format info "$H/$f.sttrace" >"$T/out" 2>"$T/err"
	rc=$?
	[ $rc = 1 ] && [ "$(wc -l <"$T/err")" = 1 ] && grep -q '^events ' "$T/out" && pass "hostile.lie.$f.info" ||
		fail "hostile.lie.$f.info" "exit $rc: $(head -c 300 "$T/err")"
	st-format verify "$H/$f.sttrace" >/dev/null 2>&1
	rc=$?
	[ $rc = 1 ] && pass "hostile.lie.$f.verify" || fail "hostile.lie.$f.verify" "exit $rc"
done
st-format synth -o "$T/good.sttrace" --ios 50 --seed 2 >/dev/null &&
	check hostile.lie.honest.info st-format info "$T/good.sttrace" >/dev/null

asan=$(dirname "$ST_BUILD")/build-asan
for f in meta_clock_max__synth meta_clock_neg__real; do
	st-format info "$H/$f.sttrace" | grep -q '^wall clock' && fail "hostile.clock.$f.wall" "a wall clock shown" ||
		pass "hostile.clock.$f.wall"
	if [ ! -x "$asan/st-format" ] || [ ! -x "$asan/st-analyze" ]; then
		skip "hostile.clock.$f.ubsan" "no ASan+UBSan build in $asan"
		continue
	fi
	bad=""
	for cmd in "st-format info" "st-format info --json" "st-format convert @ --to blktrace -o $T/bt" \
		"st-analyze" "st-analyze --save-summary $T/s.sum"; do
		run=${cmd//@/$H/$f.sttrace}
		[ "$run" = "$cmd" ] && run="$cmd $H/$f.sttrace"
		# shellcheck disable=SC2086
		"$asan"/$run >/dev/null 2>"$T/err"
		grep -q 'runtime error\|AddressSanitizer' "$T/err" && bad="$bad $cmd: $(grep -m1 'runtime error\|Sanitizer' "$T/err");"
	done
	[ -z "$bad" ] && pass "hostile.clock.$f.ubsan" || fail "hostile.clock.$f.ubsan" "$bad"
done
