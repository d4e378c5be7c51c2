#!/usr/bin/env bash
# Honest about loss: with the smallest ring buffer st-record takes (two of
# the probes' batches) and the recorder stopped (SIGSTOP) while direct reads
# run, the ring fills and reservations fail; the file stores exactly the
# count st-record reports, and the I/Os it kept are fewer than dd's.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
rec_require_bpf record_lost

st_tmpdir T
st_loopdev L 64

rec_start "$T/l.sttrace" "$T/log" -e block -d "$L" --ringbuf-size 16K || {
	fail record_lost_counted "st-record did not start: $(tail -1 "$T/log")"
	exit 1
}
kill -STOP "$REC_PID"
dd if="$L" of=/dev/null bs=4k count=16384 iflag=direct status=none
kill -CONT "$REC_PID"
rec_stop
reported=$(sed -n 's/.* events, \([0-9]*\) lost,.*/\1/p' "$T/log")
stored=$(rec_lost "$T/l.sttrace")
kept=$(rec_issued "$T/l.sttrace" ts | wc -l)
if [ "${reported:-0}" -gt 0 ] && [ "$stored" = "$reported" ] && [ "$kept" -lt 16384 ]; then
	pass record_lost_counted
else
	fail record_lost_counted "summary says ${reported:-?} lost, file stores ${stored:-?}, $kept of 16384 requests kept: $(tail -1 "$T/log")"
fi

# The ring that lost events was full when st-record drained it after SIGCONT:
# the fill it stores (record.ringbuf_used_max_bytes) is more than half its size.
size=$(st-format info "$T/l.sttrace" | sed -n 's/^  record.ringbuf_bytes = //p')
used=$(st-format info "$T/l.sttrace" | sed -n 's/^  record.ringbuf_used_max_bytes = //p')
if [ "${reported:-0}" -gt 0 ] && [ "${size:-0}" = 16384 ] && [ "${used:-0}" -gt 8192 ] &&
   [ "$used" -le "$size" ]; then
	pass record_lost_ring_full
else
	fail record_lost_ring_full "${reported:-?} lost, ring ${size:-?} bytes, at most ${used:-?} used"
fi
