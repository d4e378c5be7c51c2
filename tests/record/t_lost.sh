#!/usr/bin/env bash
# Honest about loss: with the smallest ring buffer st-record takes (two of
# the probes' batches) and every probe of -e all on a stream of direct reads,
# reservations fail (thousands of 110,000 events here), and the file stores
# exactly the count st-record reports.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
rec_require_bpf record_lost

st_tmpdir T
st_loopdev L 64

st-record -o "$T/l.sttrace" -e all -d "$L" --ringbuf-size 16K -- \
	dd if="$L" of=/dev/null bs=4k count=16384 iflag=direct status=none 2>"$T/log"
reported=$(sed -n 's/.* events, \([0-9]*\) lost,.*/\1/p' "$T/log")
stored=$(rec_lost "$T/l.sttrace")
kept=$(rec_issued "$T/l.sttrace" ts | wc -l)
if [ "${reported:-0}" -gt 0 ] && [ "$stored" = "$reported" ]; then
	pass record_lost_counted
else
	fail record_lost_counted "summary says ${reported:-?} lost, file stores ${stored:-?}, $kept of 16384 requests kept: $(tail -1 "$T/log")"
fi
