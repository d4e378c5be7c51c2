#!/usr/bin/env bash
# The drain timer: an idle recorder wakes about 20 times a second (every
# 50 ms), not 100. Each wakeup costs CPU whether or not events wait, so the
# number of wakeups is counted, not the CPU time (which other users' load
# changes): the main thread's voluntary context switches (one per wait in
# epoll_wait) over 3 s of a recording of an idle loop device. Expected: 60
# from the timer, plus the once-a-second duties (a datasync through io_uring,
# a chunk seal) and the odd threshold wakeup: at most 35 a second. The 10 ms
# timer gave 100 or more.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
rec_require_bpf record_drain

st_tmpdir T
st_loopdev L 16

rec_start "$T/idle.sttrace" "$T/log" -e block -d "$L" || { fail record_drain_start "$(cat "$T/log")"; exit 1; }
switches() { awk '$1 == "voluntary_ctxt_switches:" { print $2 }' "/proc/$REC_PID/status"; }
sleep 0.5	# past the start's one-off work
before=$(switches)
sleep 3
after=$(switches)
rec_stop
per_s=$(( (after - before) / 3 ))
if [ -n "$before" ] && [ -n "$after" ] && [ "$per_s" -le 35 ]; then
	pass record_drain_wakeups
else
	fail record_drain_wakeups "$per_s wakeups a second ($before -> $after in 3 s), want <= 35"
fi
