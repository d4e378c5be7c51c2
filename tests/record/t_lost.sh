#!/usr/bin/env bash
# Honest about loss: with a ring buffer far too small for the event rate,
# reservations fail, and the file stores exactly the count st-record reports.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
rec_require_bpf record_lost

st_tmpdir T
st_loopdev L 64

st-record -o "$T/l.sttrace" -e block -d "$L" --ringbuf-size 4K -- \
	dd if="$L" of=/dev/null bs=4k count=20000 iflag=direct status=none 2>"$T/log"
reported=$(sed -n 's/.* events, \([0-9]*\) lost,.*/\1/p' "$T/log")
stored=$(rec_lost "$T/l.sttrace")
kept=$(rec_issued "$T/l.sttrace" ts | wc -l)
if [ "${reported:-0}" -gt 0 ] && [ "$stored" = "$reported" ] && [ "$kept" -lt 20000 ]; then
	pass record_lost_counted
else
	fail record_lost_counted "summary says ${reported:-?} lost, file stores ${stored:-?}, $kept of 20000 requests kept: $(tail -1 "$T/log")"
fi
