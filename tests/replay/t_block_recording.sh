#!/usr/bin/env bash
# A genuine -e block recording of 16 direct 64 KiB writes (dd count=16):
#   file_level  replayed with --level file by st-replay built with ASan and
#               UBSan: exit 1, one line saying there is no file I/O and
#               that --level block replays it; no sanitizer report (an
#               empty plan once went to qsort as NULL)
#   afap_rate   replayed afap onto another loop device: the report's span
#               (first submission to last completion) is not 0, its IOPS
#               times its span is the 16 writes dd made, which the device's
#               /sys/block/X/stat counts too, the text's IOPS is not 0.0, and
#               the span is inside the time st-replay ran (clock of the test)
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"
. "$(dirname "$0")/common.sh"
rp_require replay_block_recording
rec_require_bpf replay_block_recording
ASAN_REPLAY=$(cd "$(dirname "$0")/../.." && pwd)/build-asan/st-replay

st_tmpdir T
st_loopdev A 64
st_loopdev B 64
st_nomerges "$B"	# 16 writes in flight at once would merge into fewer requests

check replay_block_recording_record st-record -o "$T/run.sttrace" -e block -d "$A" -- \
	dd if=/dev/zero of="$A" bs=64k count=16 oflag=direct status=none

if [ ! -x "$ASAN_REPLAY" ]; then
	fail replay_block_recording_file_level "$ASAN_REPLAY not built (make builds it with the tests)"
else
	"$ASAN_REPLAY" "$T/run.sttrace" --level file --target "$T" >"$T/out" 2>"$T/err"
	rc=$?
	if [ "$rc" -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] &&
		grep -q "no file I/O to replay (.*--level block replays its block I/O)" "$T/err"; then
		pass replay_block_recording_file_level
	else
		fail replay_block_recording_file_level "exit $rc, stderr: $(head -3 "$T/err" | tr '\n' ' ')"
	fi
fi

# Writes completed on B (field 5 of /sys/block/X/stat), counted by the kernel.
writes_done() { awk '{ print $5 }' "/sys/block/$(basename "$B")/stat"; }
before=$(writes_done)
t0=$(date +%s%N)
st-replay "$T/run.sttrace" --target "$B" --allow-write --timing afap --report "$T/r.json" >"$T/out" 2>"$T/err"
rc=$?
ran_ns=$(($(date +%s%N) - t0))
done_writes=$(($(writes_done) - before))
span=$(rp_json "$T/r.json" .replayed.span_s)
iops=$(rp_json "$T/r.json" .replayed.iops)
text_iops=$(awk '$1 == "IOPS" { print $3 }' "$T/out")
echo "replay_block_recording_afap_rate: span $span s, IOPS $iops (text $text_iops), $done_writes writes on $(basename "$B"), st-replay ran $ran_ns ns"
if [ "$rc" -eq 0 ] && [ "$done_writes" -eq 16 ] && [ "$text_iops" != "0.0" ] &&
	awk -v s="$span" -v i="$iops" -v r="$ran_ns" \
		'BEGIN { exit !(s > 0 && s * 1e9 < r && i * s > 16 * 0.999 && i * s < 16 * 1.001) }'; then
	pass replay_block_recording_afap_rate
else
	fail replay_block_recording_afap_rate "exit $rc: $(head -2 "$T/err" | tr '\n' ' ')"
fi
