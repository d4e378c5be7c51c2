#!/usr/bin/env bash
# st-analyze --follow of a file st-record is writing, started before the file
# exists (it waits, saying so), and of a rotating set (--rotate 1s, followed
# as 'run.*.sttrace' from part to part, stopped while fio runs and resumed
# after, when the parts are there already): each ends by itself when the
# recording does, and its final report is st-analyze's of the same files; the
# set's last view, caught up from part to part, has the reads' IOPS of that
# report (the trace's time, not the follower's).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"
. "$(dirname "$0")/common.sh"

live_require live.file.wait live.file.report live.set.parts live.set.report live.set.rates

st_tmpdir dir
st_loopdev dev 64

# --- a growing file, followed before it exists
st-analyze --follow "$dir/grow.sttrace" >"$dir/grow.out" 2>"$dir/grow.err" &
follower=$!
at_exit "kill -KILL $follower"
live_wait_line "$dir/grow.err" "waiting for $dir/grow.sttrace to appear" 5
rec_start "$dir/grow.sttrace" "$dir/grow.log" -d "$dev" -e block ||
	{ fail live.file.wait "st-record did not start"; exit 1; }
live_fio "$dev" "$dir/fio.json" 4000
rec_stop
# The follower ends once it has read the trailer.
for ((i = 0; i < 100; i++)); do kill -0 $follower 2>/dev/null || break; sleep 0.1; done
wait $follower
rc=$?
if [ $rc -eq 0 ] && grep -q "waiting for $dir/grow.sttrace to appear" "$dir/grow.err" &&
	grep -q "^--- live" "$dir/grow.out"; then
	pass live.file.wait
else
	fail live.file.wait "exit $rc: $(head -3 "$dir/grow.err" | tr '\n' ' ')"
fi
st-analyze "$dir/grow.sttrace" >"$dir/grow.offline" 2>&1
live_report "$dir/grow.out" >"$dir/grow.final"
if [ -s "$dir/grow.final" ] && cmp -s "$dir/grow.final" "$dir/grow.offline"; then
	pass live.file.report
else
	fail live.file.report "$(diff "$dir/grow.final" "$dir/grow.offline" | head -5 | tr '\n' ' ')"
fi

# --- a rotating set
mkdir "$dir/set"
rec_start "$dir/set/run.sttrace" "$dir/set.log" -d "$dev" -e block --rotate 1s ||
	{ fail live.set.parts "st-record did not start"; exit 1; }
st-analyze --follow "$dir/set/run.*.sttrace" >"$dir/set.out" 2>"$dir/set.err" &
follower=$!
at_exit "kill -KILL $follower"
# A follower that falls behind (stopped while fio runs) slows nothing: the
# recorder writes its files whoever reads them; resumed, it catches up.
sleep 0.5
kill -STOP $follower
live_fio "$dev" "$dir/fio2.json" 8000
kill -CONT $follower
rec_stop
for ((i = 0; i < 100; i++)); do kill -0 $follower 2>/dev/null || break; sleep 0.1; done
wait $follower
rc=$?
parts=$(ls "$dir/set"/run.*.sttrace | wc -l)
st-analyze "$dir/set"/run.*.sttrace >"$dir/set.offline" 2>&1
live_report "$dir/set.out" >"$dir/set.final"
if [ $rc -eq 0 ] && [ "$parts" -ge 3 ] && head -1 "$dir/set.final" | grep -q "^$parts files,"; then
	pass live.set.parts
else
	fail live.set.parts "exit $rc, $parts parts, report: $(head -1 "$dir/set.final") $(head -2 "$dir/set.err")"
fi
if [ -s "$dir/set.final" ] && cmp -s "$dir/set.final" "$dir/set.offline"; then
	pass live.set.report
else
	fail live.set.report "$(diff "$dir/set.final" "$dir/set.offline" | head -5 | tr '\n' ' ')"
fi
group="$(basename "$dev") read"
view=$(sed '/^--- end of the recording/,$d' "$dir/set.out" |
	awk -v g="$group" '!/^ / { group = $0 } group == g && /^  run so far/ { iops = $4 } END { print iops }')
offline=$(awk -v g="$group:" 'index($0, g) == 1 { print $5 }' "$dir/set.offline")
# within 1 %: the last view may come before the recording's last few I/Os
# are handed over (measured 1599 against 1604.1 under load); the follower's
# own clock was 2.6 % off here (1357 against 1322.5)
if awk -v v="$view" -v o="$offline" 'BEGIN { d = v - o; exit !(o > 0 && d * d <= o * o / 10000) }'; then
	pass live.set.rates
else
	fail live.set.rates "last view: ${view:-no} IOPS, offline report: ${offline:-no} IOPS"
fi
