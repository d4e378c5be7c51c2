#!/usr/bin/env bash
# Attaching and detaching the 50-odd probes of `-e all` takes the kernel
# milliseconds each, while the probes attached so far already fire: on a
# workload running flat out, st-record must drain the ring buffer meanwhile
# and lose nothing, at start and at stop.
#
# Every probe records over one window, opened after the last attach and
# closed before the first detach, and -t ends it on the event clock: the
# recording spans at most 2 s, and less only by the gaps before its first
# and after its last event. fio at QD 32 completes an I/O every few us, but
# on this shared 2-CPU machine it can be kept off the CPU for tens of ms:
#   span 2 s - 50 ms .. 2 s; each layer's first and last event within 50 ms
#   of the recording's (before the window, attaching 47 probes took seconds
#   and layers began up to 7 s apart).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
rec_require_bpf record_busy

st_tmpdir T
st_loopdev L 256

fio --name=busy --filename="$L" --direct=1 --ioengine=io_uring --iodepth=32 --rw=randread \
	--bs=4k --time_based --runtime=8 --randrepeat=0 --output=/dev/null &
fio_pid=$!
at_exit "kill $fio_pid"
sleep 1
if st-record -o "$T/b.sttrace" -e all -d "$L" -t 2 2>"$T/log"; then
	pass record_busy_runs
else
	fail record_busy_runs "$(cat "$T/log")"
fi
wait "$fio_pid"
n=$(rec_count "$T/b.sttrace" block_rq_complete_compact)
if [ "${n:-0}" -gt 10000 ]; then
	pass record_busy_recorded
else
	fail record_busy_recorded "only ${n:-no} completions recorded in 2 s of fio"
fi
rec_check_no_loss record_busy_no_loss "$T/b.sttrace"

# "first last" event clock ns of every event, or of one type
span_of() {
	if [ -n "${1:-}" ]; then rec_rows "$T/b.sttrace" "$1" ts; else st-format cat --csv "$T/b.sttrace" | cut -d, -f4 | tail -n +2; fi |
		sort -n | awk 'NR == 1 { f = $1 } { l = $1 } END { printf "%.0f %.0f\n", f, l }'
}
read -r first last <<<"$(span_of)"
start=$(st-format info "$T/b.sttrace" | awk '$1 == "record.start_ts" { print $3 }')
if awk -v f="$first" -v l="$last" -v s="$start" 'BEGIN { d = l - f; exit !(d >= 1.95e9 && d <= 2e9 && f >= s && l < s + 2e9) }'; then
	pass record_busy_window
else
	fail record_busy_window "events from $first to $last ns, window opened at $start: want 2 s - 50 ms .. 2 s inside [start, start + 2 s)"
fi
late=""
for type in block_rq_issue_stamped block_rq_complete_compact io_uring_submit_req io_uring_complete sys_enter_io_uring_enter; do
	read -r f l <<<"$(span_of "$type")"
	awk -v f="$f" -v l="$l" -v F="$first" -v L="$last" 'BEGIN { exit !(f > 0 && f - F <= 5e7 && L - l <= 5e7) }' ||
		late="$late $type ($(( (f - first) / 1000000 )) ms after the first event, $(( (last - l) / 1000000 )) ms before the last)"
done
if [ -z "$late" ]; then pass record_busy_layers_same_window; else fail record_busy_layers_same_window "$late"; fi
