#!/usr/bin/env bash
# The metrics endpoint after the recording ends (issue 42): st-analyze
# --follow --metrics keeps serving the final values until SIGINT, so a
# scraper sees the end (sttrace_recording_ended 1, the I/O count fio made)
# and its target stays up; only latencies are in sttrace_io_latency_seconds
# (Q2Q in sttrace_io_interval_seconds), no stage the recording could not
# measure (every observation 0) is exported; promtool accepts the page.
# SIGINT then ends the follower, exit 0.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"
. "$(dirname "$0")/common.sh"

NAMES="live.metrics_end.serves live.metrics_end.count live.metrics_end.stages live.metrics_end.promtool live.metrics_end.sigint"
live_require $NAMES
if ! command -v promtool >/dev/null || ! command -v curl >/dev/null; then
	for n in $NAMES; do skip "$n" "promtool or curl not installed (scripts/install-deps.sh)"; done
	exit 0
fi

IOS=2000
st_tmpdir dir
st_loopdev dev 64
st_nomerges "$dev"
name=$(basename "$dev")
mport=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

rec_start "$dir/run.sttrace" "$dir/record.log" -d "$dev" -e block ||
	{ fail live.metrics_end.serves "st-record did not start"; exit 1; }
st-analyze --follow --metrics "127.0.0.1:$mport" "$dir/run.sttrace" >"$dir/follow.out" 2>"$dir/follow.err" &
follower=$!
at_exit "kill -KILL $follower"
live_fio "$dev" "$dir/fio.json" $IOS
fio_ios=$(jq '.jobs[0].read.total_ios' "$dir/fio.json")
rec_stop
live_wait_line "$dir/follow.out" "^--- end of the recording" 30
live_wait_line "$dir/follow.err" "serves its final values until SIGINT" 30
sleep 2
curl -s -m 5 -o "$dir/metrics.txt" "http://127.0.0.1:$mport/metrics"
sel="dev=\"$name\",op=\"read\""
if kill -0 $follower 2>/dev/null && grep -q '^sttrace_recording_ended{host="[^"]*"} 1$' "$dir/metrics.txt"; then
	pass live.metrics_end.serves
else
	fail live.metrics_end.serves "2 s after the end: follower $(kill -0 $follower 2>/dev/null && echo up || echo gone), $(wc -c <"$dir/metrics.txt" 2>/dev/null) bytes served: $(tail -1 "$dir/follow.err")"
fi

devno=$(rec_devno "$dev")
uncompleted=$(($(rec_issued "$dir/run.sttrace" dev | grep -cx "$devno") -
	$(rec_completed "$dir/run.sttrace" dev | grep -cx "$devno")))
count=$(sed -n "s/^sttrace_io_total{host=\"[^\"]*\",$sel} //p" "$dir/metrics.txt")
if [ "$fio_ios" = "$IOS" ] && [ "${count:-}" = "$((fio_ios - uncompleted))" ]; then
	pass live.metrics_end.count
else
	fail live.metrics_end.count "served sttrace_io_total{$sel} ${count:-none}, fio: $fio_ios ($uncompleted without a completion)"
fi

# -e block on this kernel: the queue time is the request's allocation (no bio
# stamps), so Q2G is 0 for every I/O; D2C is measured; Q2Q is no latency.
if grep -q "^sttrace_io_latency_seconds_count{host=\"[^\"]*\",$sel,stage=\"D2C\"} " "$dir/metrics.txt" &&
   ! grep -q 'stage="Q2Q"' "$dir/metrics.txt" &&
   grep -q "^sttrace_io_interval_seconds_count{host=\"[^\"]*\",$sel} " "$dir/metrics.txt" &&
   ! grep -q "^sttrace_io_latency_seconds_sum{[^}]*} 0.000000000$" "$dir/metrics.txt"; then
	pass live.metrics_end.stages
else
	fail live.metrics_end.stages "stages served: $(grep -o 'stage="[^"]*"' "$dir/metrics.txt" | sort -u | tr '\n' ' ')"
fi

if promtool check metrics <"$dir/metrics.txt" >"$dir/promtool.out" 2>&1; then
	pass live.metrics_end.promtool
else
	fail live.metrics_end.promtool "$(head -3 "$dir/promtool.out" | tr '\n' ' ')"
fi

kill -INT $follower
for ((i = 0; i < 40; i++)); do kill -0 $follower 2>/dev/null || break; sleep 0.05; done
if kill -0 $follower 2>/dev/null; then
	fail live.metrics_end.sigint "still serving 2 s after SIGINT"
else
	wait $follower
	rc=$?
	if [ $rc -eq 0 ]; then pass live.metrics_end.sigint; else fail live.metrics_end.sigint "exit $rc"; fi
fi
