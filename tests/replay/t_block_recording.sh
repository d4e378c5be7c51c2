#!/usr/bin/env bash
# A genuine -e block recording of 16 direct 64 KiB writes (dd count=16):
#   file_level  replayed with --level file by st-replay built with ASan and
#               UBSan: exit 1, one line saying there is no file I/O and
#               that --level block replays it; no sanitizer report (an
#               empty plan once went to qsort as NULL)
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"
. "$(dirname "$0")/common.sh"
rp_require replay_block_recording
rec_require_bpf replay_block_recording
ASAN_REPLAY=$(cd "$(dirname "$0")/../.." && pwd)/build-asan/st-replay

st_tmpdir T
st_loopdev A 64

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
