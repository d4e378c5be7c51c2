#!/usr/bin/env bash
# st-analyze on synthetic traces with known contents: I/O counts, CSV, the
# --quantile list, --by, the filters, several files as one, incomplete I/Os.
. "$(dirname "$0")/../lib.sh"

IOS=4000
st_tmpdir dir
t="$dir/a.sttrace"
st-format synth -o "$t" --ios $IOS --seed 7 >/dev/null || { fail analyze.summary "synth failed"; exit 1; }

# Sum of a CSV column over the groups' "total" rows (one per group).
sum_total() { awk -F, -v c="$1" '$7 == "total" { s += $c } END { print s + 0 }'; }

st-analyze --csv "$t" >"$dir/s.csv" 2>"$dir/s.err"
ios=$(sum_total 2 <"$dir/s.csv")
inc=$(sum_total 5 <"$dir/s.csv")
if [ "$ios" = $IOS ] && [ "$inc" = 0 ] && head -1 "$dir/s.csv" | grep -q '^group,ios,iops'; then
	pass analyze.summary.count
else
	fail analyze.summary.count "CSV counts $ios I/Os ($inc incomplete), synth wrote $IOS"
fi
grep -q 'lost events: 0' "$dir/s.err" && st-analyze "$t" | grep -q '^  total ' &&
	pass analyze.summary.text || fail analyze.summary.text "header or stage table missing"

# Nearest rank: with exact quantiles, exactly IOS - ceil(0.99 * IOS) + 1 I/Os are
# at or above p99 (latencies are distinct ns values), listed slowest first.
st-analyze --csv --exact-limit 100000 --quantile 99 --top 1000 "$t" >"$dir/q.csv" 2>"$dir/q.err"
rows=$(tail -n +2 "$dir/q.csv" | wc -l)
sorted=$(tail -n +2 "$dir/q.csv" | awk -F, 'NR > 1 && $3 > prev { bad = 1 } { prev = $3 } END { print !bad }')
if [ "$rows" = 41 ] && [ "$sorted" = 1 ] && grep -q '41 I/Os at or above' "$dir/q.err"; then
	pass analyze.quantile.list
else
	fail analyze.quantile.list "$rows rows (want 41), sorted=$sorted: $(grep p99 "$dir/q.err")"
fi
st-analyze --quantile 99.95 --top 3 "$t" | grep -Eq '^ +3 ' && ! st-analyze --quantile 99.95 --top 3 "$t" | grep -Eq '^ +4 ' &&
	pass analyze.quantile.top || fail analyze.quantile.top "--top 3 did not list exactly 3"

# --by comm: the four synthetic processes, together every I/O.
st-analyze --csv --by comm "$t" >"$dir/c.csv" 2>/dev/null
comms=$(awk -F, '$7 == "total" { gsub(/"/, "", $1); print $1 }' "$dir/c.csv" | sort | tr '\n' ' ')
if [ "$comms" = "dd fio postgres rocksdb " ] && [ "$(sum_total 2 <"$dir/c.csv")" = $IOS ]; then
	pass analyze.by.comm
else
	fail analyze.by.comm "groups: $comms"
fi

# Filters select what --by shows separately.
fio_n=$(awk -F, '$1 == "fio" && $7 == "total" { print $2 }' "$dir/c.csv")
got=$(st-analyze --csv --by comm --comm fio "$t" 2>/dev/null | sum_total 2)
[ -n "$fio_n" ] && [ "$got" = "$fio_n" ] && pass analyze.filter.comm ||
	fail analyze.filter.comm "--comm fio counted $got, --by comm says $fio_n"
st-analyze --csv --by pid "$t" 2>/dev/null >"$dir/p.csv"
pid=$(awk -F, '$7 == "total" { gsub(/"/, "", $1); split($1, a, " "); print a[1]; exit }' "$dir/p.csv")
pid_n=$(awk -F, '$7 == "total" { print $2; exit }' "$dir/p.csv")
got=$(st-analyze --csv --pid "$pid" "$t" 2>/dev/null | sum_total 2)
[ "$got" = "$pid_n" ] && pass analyze.filter.pid || fail analyze.filter.pid "--pid $pid: $got, want $pid_n"
st-analyze --csv --by dev "$t" 2>/dev/null >"$dir/d.csv"
dev_n=$(awk -F, '$1 == "nvme0n1" && $7 == "total" { print $2 }' "$dir/d.csv")
got=$(st-analyze --csv --by dev --dev nvme0n1 "$t" 2>/dev/null | awk -F, '$7 == "total"' | wc -l)
got_n=$(st-analyze --csv --dev nvme0n1 "$t" 2>/dev/null | sum_total 2)
[ "$got" = 1 ] && [ "$got_n" = "$dev_n" ] && pass analyze.filter.dev ||
	fail analyze.filter.dev "$got groups, $got_n I/Os, want 1 and $dev_n"
# An I/O belongs to the window it starts in: two windows split the trace exactly.
early=$(st-analyze --csv --to 20ms "$t" 2>/dev/null | sum_total 2)
late=$(st-analyze --csv --from 20ms "$t" 2>/dev/null | sum_total 2)
[ "$early" -gt 0 ] && [ "$late" -gt 0 ] && [ $((early + late)) = $IOS ] && pass analyze.filter.time ||
	fail analyze.filter.time "before 20ms $early + after $late != $IOS"

# Several files as one: two time slices analyzed together give the whole trace.
st-format slice "$t" -o "$dir/1.sttrace" --to 20ms >/dev/null &&
	st-format slice "$t" -o "$dir/2.sttrace" --from 20000001ns >/dev/null ||
	{ fail analyze.files.merged "slice failed"; exit 1; }
st-analyze --csv "$dir/1.sttrace" "$dir/2.sttrace" >"$dir/m.csv" 2>"$dir/m.err"
got=$(sum_total 2 <"$dir/m.csv")
inc=$(sum_total 5 <"$dir/m.csv")
[ "$got" = $IOS ] && [ "$inc" = 0 ] && grep -q '^2 files' "$dir/m.err" && pass analyze.files.merged ||
	fail analyze.files.merged "$got I/Os, $inc incomplete from two slices, want $IOS and 0"

# Alone, the first slice ends with I/Os open, the second starts with their ends.
st-analyze "$dir/1.sttrace" | grep -Eq 'I/Os in the trace: [0-9]+ correlated, [1-9][0-9]* incomplete' &&
	pass analyze.incomplete.end || fail analyze.incomplete.end "no incomplete I/Os at the cut"
st-analyze "$dir/2.sttrace" | grep -Eq 'begun before the trace: [1-9][0-9]* exits' &&
	pass analyze.incomplete.start || fail analyze.incomplete.start "no I/Os begun before the cut"

# Lost events are shown.
st-format synth -o "$dir/lost.sttrace" --ios 200 --lost 17 >/dev/null
st-analyze "$dir/lost.sttrace" | grep -q 'lost events: 17' && pass analyze.lost ||
	fail analyze.lost "lost event count not reported"

# Time series and heatmaps: one row per interval, every I/O counted once.
rows=$(st-analyze --csv --interval 10ms "$t" 2>/dev/null | tail -n +2 | awk -F, '{ n++; s += $2 } END { print n, s }')
[ "${rows#* }" = $IOS ] && pass analyze.series ||
	fail analyze.series "intervals and I/Os: $rows, want all $IOS I/Os"
for kind in lat pos; do
	got=$(st-analyze --csv --heatmap $kind "$t" 2>/dev/null | tail -n +2 |
		awk -F, '{ for (i = 2; i <= NF; i++) s += $i; n++ } END { print n, s }')
	[ "$got" = "100 $IOS" ] && pass analyze.heatmap.$kind ||
		fail analyze.heatmap.$kind "rows and counts: $got, want 100 $IOS"
done

# Quantiles are exact up to --exact-limit samples per group and stage, and the
# report says when the sketch answered instead.
st-analyze "$t" --exact-limit 1000000 | grep -q '^quantiles: exact' &&
	st-analyze --csv "$t" --exact-limit 1000000 2>/dev/null | awk -F, 'NR > 1 && $17 != "exact" { bad = 1 } END { exit bad }' &&
	st-analyze "$t" --exact-limit 100 | grep -q '^quantiles: log-linear sketch' &&
	st-analyze --csv "$t" --exact-limit 100 2>/dev/null | grep -q ',total,.*,sketch,[0-9.]*$' &&
	pass analyze.exact_limit || fail analyze.exact_limit "exact/sketch not reported as configured"
