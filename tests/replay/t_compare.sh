#!/usr/bin/env bash
# The README's compare command end to end: record fio on loop device A,
# record st-replay re-issuing it on loop device B, st-analyze diff the two.
# diff runs (exit 0 or 1, never 2) and its D2C stage counts, per op, exactly
# the I/Os fio logged, on both sides: one request each, the block layer's
# merging being off. The I/O counts themselves may be higher on the replay's
# side: io_uring submits a bio with REQ_NOWAIT, and when the device has no
# free request it is failed with BLK_STS_AGAIN (a bio that completes without
# a request) and submitted again by an io-wq worker; both bios are I/Os to
# the correlator, only one reached the device. That happened once in 13
# runs, on a loaded machine where the replay fell behind and issued a
# backlog of 128 at once (the loop device has 128 requests).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"
. "$(dirname "$0")/common.sh"
rp_require replay_compare
rec_require_bpf replay_compare

st_tmpdir T
st_loopdev A 64
st_loopdev B 64
st_nomerges "$A" "$B"

check replay_compare_record st-record -o "$T/run.sttrace" -e block -d "$A" -- \
	fio --name=rw --filename="$A" --direct=1 --ioengine=io_uring --iodepth=4 --rw=randrw --bs=4k \
	--number_ios=1000 --size=48M --randrepeat=1 --write_iolog="$T/iolog" --output="$T/fio.out"

# The documented command.
check replay_compare_replay st-record -o "$T/replay.sttrace" -e block -d "$B" -- \
	st-replay "$T/run.sttrace" --target "$B" --allow-write
st-analyze diff "$T/run.sttrace" "$T/replay.sttrace" --stage D2C >"$T/diff.out" 2>&1
rc=$?

reads=$(awk '$3 == "read"' "$T/iolog" | wc -l)
writes=$(awk '$3 == "write"' "$T/iolog" | wc -l)
got=$(awk '/^(read|write): / { op = $1 } /^  D2C / { sub(/:$/, "", $5); printf "%s %s %s ", op, $3, $5 }' "$T/diff.out")
want="read: $reads $reads write: $writes $writes "
if { [ "$rc" = 0 ] || [ "$rc" = 3 ]; } && [ "$got" = "$want" ] && [ $((reads + writes)) -eq 1000 ]; then
	pass replay_compare_diff
else
	fail replay_compare_diff "diff exit $rc, counts '$got', want '$want': $(head -12 "$T/diff.out")"
fi
