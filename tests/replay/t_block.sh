#!/usr/bin/env bash
# Block level: fio randrw recorded on loop device A, replayed onto loop device
# B as fast as possible; recording the replay shows exactly the requests fio
# logged on A (op, offset, size), and the report counts them as fio did.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"
. "$(dirname "$0")/common.sh"
rp_require replay_block
rec_require_bpf replay_block

st_tmpdir T
st_loopdev A 64
st_loopdev B 64
st_nomerges "$A" "$B"

check replay_block_record st-record -o "$T/run.sttrace" -e block -d "$A" -- \
	fio --name=rw --filename="$A" --direct=1 --ioengine=io_uring --iodepth=4 --rw=randrw \
	--bssplit=4k/50:16k/30:64k/20 --number_ios=600 --size=48M --randrepeat=1 \
	--write_iolog="$T/iolog" --output="$T/fio.out"

# fio's own view of its I/Os (iolog v3: ts file action offset len).
awk '$3 == "read" || $3 == "write" { print ($3 == "read" ? "R" : "W"), $4, $5 }' "$T/iolog" | sort >"$T/fio"

# Nothing is written without --allow-write: refused with one line, B untouched.
st-replay "$T/run.sttrace" --target "$B" --timing afap >"$T/out" 2>"$T/err"
rc=$?
if [ "$rc" -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q -- "--allow-write" "$T/err" &&
	cmp -s -n 67108864 "$B" /dev/zero; then
	pass replay_block_refuses_writes
else
	fail replay_block_refuses_writes "exit $rc, stderr: $(cat "$T/err")"
fi

check replay_block_run st-record -o "$T/replay.sttrace" -e block -d "$B" -- \
	st-replay "$T/run.sttrace" --target "$B" --allow-write --timing afap --qd 8 --report "$T/r.json"

rp_requests "$T/replay.sttrace" "$(rec_devno "$B")" >"$T/replayed"
rp_requests "$T/run.sttrace" "$(rec_devno "$A")" >"$T/recorded"
n=$(wc -l <"$T/fio")
if [ "$n" -eq 600 ] && cmp -s "$T/fio" "$T/replayed"; then
	pass replay_block_same_requests
else
	fail replay_block_same_requests "fio logged $n I/Os on A, the replay issued $(wc -l <"$T/replayed") on B; diff: $(diff "$T/fio" "$T/replayed" | head -5 | tr '\n' ' ')"
fi
check replay_block_recorded_matches_fio cmp -s "$T/fio" "$T/recorded"

# The report's counts against fio's: every I/O issued and completed, none failed.
reads=$(grep -c '^R' "$T/fio")
got="$(rp_json "$T/r.json" '[.planned, .issued, .completed, .failed, .latency_us.read.replayed.count] | join(" ")')"
if [ "$got" = "600 600 600 0 $reads" ]; then
	pass replay_block_report_counts
else
	fail replay_block_report_counts "planned issued completed failed reads: $got, want 600 600 600 0 $reads"
fi
grep -q '^I/Os: 600 planned, 600 issued, 600 completed, 0 failed' <(st-replay "$T/run.sttrace" --target "$B" --allow-write --timing afap) &&
	pass replay_block_report_text || fail replay_block_report_text "no I/Os line with 600 issued"

# The written data reached B: fio's writes were 4k..64k blocks, so B is no longer all zero.
if ! cmp -s -n 67108864 "$B" /dev/zero; then pass replay_block_wrote; else fail replay_block_wrote "B still all zero"; fi

# --bios: the bios as queued; fio's I/Os were one bio each, so the same multiset.
check replay_block_bios_run st-record -o "$T/bios.sttrace" -e block -d "$B" -- \
	st-replay "$T/run.sttrace" --bios --target "$B" --allow-write --timing afap --qd 8
rp_requests "$T/bios.sttrace" "$(rec_devno "$B")" >"$T/bios"
cmp -s "$T/fio" "$T/bios" && pass replay_block_bios ||
	fail replay_block_bios "fio logged $(wc -l <"$T/fio") I/Os, the bio replay issued $(wc -l <"$T/bios") requests"

# Discards and flushes: blkdiscard, dd with O_DSYNC (the loop device has a
# write cache and no FUA: a write, then a flush) and fio writes with fsync,
# recorded on A and replayed on B: the same multiset of requests, discards
# (replayed as fallocate(PUNCH_HOLE), which a block device turns into
# write-zeroes of the range) and flushes included. One I/O at a time (--qd 1):
# flushes in flight together are served by one (the block layer's flush
# sequencing, which nomerges does not turn off).
check replay_block_ops_record st-record -o "$T/ops.sttrace" -e block -d "$A" -- sh -c "
	blkdiscard -o 1048576 -l 1048576 '$A' &&
	dd if=/dev/zero of='$A' bs=4k count=4 seek=100 oflag=direct,dsync status=none &&
	fio --name=f --filename='$A' --direct=1 --rw=write --bs=4k --size=64k --offset=2M --fsync=4 --output=/dev/null"
check replay_block_ops_run st-record -o "$T/ops-replay.sttrace" -e block -d "$B" -- \
	st-replay "$T/ops.sttrace" --target "$B" --allow-write --timing afap --qd 1
rp_requests "$T/ops.sttrace" "$(rec_devno "$A")" >"$T/ops-recorded"
rp_requests "$T/ops-replay.sttrace" "$(rec_devno "$B")" >"$T/ops-replayed"
kinds=$(awk '{ print $1 }' "$T/ops-recorded" | sort -u | tr -d '\n')
if [[ $kinds == D*F*W ]] && cmp -s "$T/ops-recorded" "$T/ops-replayed"; then
	pass replay_block_ops
else
	fail replay_block_ops "recorded kinds '$kinds' (want D, F, W); diff: $(diff "$T/ops-recorded" "$T/ops-replayed" | head -4 | tr '\n' ' ')"
fi
