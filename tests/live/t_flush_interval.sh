#!/usr/bin/env bash
# st-record --flush-interval bounds how long a record waits in an open chunk,
# which bounds how late a follower sees it: with fio reading steadily for 3 s
# (2000 IOPS), no events chunk spans more than the interval plus the time a
# record takes to reach the writer (drain periods of 50 ms, records staged
# in the kernel for one more, metadata held 150 ms: 250 ms of margin). At the
# default (250 ms) and at 100 ms; at 10 s the chunks span the run, as the
# option's effect. Values outside 10ms..10s are usage errors.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"
. "$(dirname "$0")/common.sh"

live_require live.flush.default live.flush.100ms live.flush.10s live.flush.usage

st_tmpdir dir
st_loopdev dev 64

# longest_chunk FILE: the longest time range (ms) of its events chunks
longest_chunk() {
	st-format info --json --chunks "$1" |
		jq '[.chunk_list[] | select(.kind == "events") | (.last_ts - .first_ts)] | max / 1e6'
}

# case NAME BOUND_MS CMP ARGS...: record 3 s of fio with ARGS; the longest chunk CMP BOUND_MS
case_flush() {
	local name=$1 bound=$2 cmp=$3 longest
	shift 3
	rec_start "$dir/$name.sttrace" "$dir/$name.log" -d "$dev" -e block "$@" ||
		{ fail "$name" "st-record did not start"; return; }
	live_fio "$dev" "$dir/$name.json" 6000
	rec_stop
	longest=$(longest_chunk "$dir/$name.sttrace")
	if awk -v l="$longest" -v b="$bound" -v c="$cmp" 'BEGIN { exit !(c == "le" ? l <= b : l >= b) }'; then
		pass "$name"
	else
		fail "$name" "longest events chunk $longest ms (want $cmp $bound ms)"
	fi
	echo "$name: longest events chunk $longest ms"
}
case_flush live.flush.default 500 le
case_flush live.flush.100ms 350 le --flush-interval 100ms
case_flush live.flush.10s 2000 ge --flush-interval 10s

bad=0
for v in 5ms 11s abc; do
	st-record -o "$dir/x.sttrace" --flush-interval "$v" -- true >/dev/null 2>"$dir/usage.err"
	rc=$?
	[ $rc -eq 2 ] && [ "$(wc -l <"$dir/usage.err")" -eq 1 ] && grep -q "flush-interval" "$dir/usage.err" ||
		{ bad=1; echo "--flush-interval $v: exit $rc: $(head -1 "$dir/usage.err")"; }
done
[ $bad -eq 0 ] && pass live.flush.usage || fail live.flush.usage "a bad value was not a one-line usage error"
