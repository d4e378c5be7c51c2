#!/usr/bin/env bash
# A crafted trace fills neither the disk nor the memory of st-replay:
#   hugeoff   tests/format/hostile/replay-hugeoff.sttrace (one pwrite at
#             1 PiB) at file level into a 64 MiB tmpfs:
#             refused up front, one line, nothing filled (du of the tmpfs)
#   max_io    a request of 4 GiB - 4 KiB (blktrace records built here, then
#             import-blktrace): refused, naming --max-io
#   memory    a 16 MiB read at --qd 64: peak RSS (/usr/bin/time -v) under
#             128 MiB; buffers per I/O in flight would pin 1 GiB
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
rp_require replay_hostile
DATA=$(cd "$(dirname "$0")/../format/hostile" && pwd)

st_tmpdir T

if [ "$(id -u)" -eq 0 ]; then
	mkdir "$T/small"
	mount -t tmpfs -o size=64M sttrace-replaysafe "$T/small" && at_exit "umount '$T/small'"
	timeout 60 st-replay "$DATA/replay-hugeoff.sttrace" --level file --target "$T/small" \
		--allow-write --timing afap >"$T/out" 2>"$T/err"
	rc=$?
	used=$(du -sb "$T/small" | cut -f1)
	if [ "$rc" -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "more than the .* free there" "$T/err" &&
		[ "$used" -lt 1048576 ]; then
		pass replay_hostile_hugeoff
	else
		fail replay_hostile_hugeoff "exit $rc, $used bytes in the tmpfs: $(head -2 "$T/err")"
	fi
else
	skip replay_hostile_hugeoff "needs root to mount a small tmpfs"
fi

# blktrace TRACE BYTES: a trace of one read of BYTES at sector 0 of loop0,
# issued (D) and completed (C), from struct blk_io_trace (linux/blktrace_api.h).
blktrace() {
	python3 - "$T/loop0" "$2" <<'EOF'
import struct, sys
prefix, nbytes = sys.argv[1], int(sys.argv[2])
MAGIC = 0x65617400 | 0x07
TC_READ, TC_ISSUE, TC_COMPLETE, TC_FS = 1, 64, 128, 256
ISSUE, COMPLETE = 7, 8
def rec(seq, time, action):
    return struct.pack("<IIQQIIIIIHH", MAGIC, seq, time, 0, nbytes, action, 100, 7 << 20, 0, 0, 0)
with open(prefix + ".blktrace.0", "wb") as f:
    f.write(rec(1, 1000, ISSUE | (TC_READ | TC_ISSUE | TC_FS) << 16) +
            rec(2, 9000, COMPLETE | (TC_READ | TC_COMPLETE | TC_FS) << 16))
EOF
	st-format import-blktrace "$T/loop0.blktrace.0" -o "$1" >/dev/null
}

truncate -s 32M "$T/target"
blktrace "$T/huge.sttrace" $((4294967296 - 4096))
timeout 60 st-replay "$T/huge.sttrace" --target "$T/target" --wrap >"$T/out" 2>"$T/err"
rc=$?
if [ "$rc" -eq 1 ] && grep -q "an I/O of 4294963200 bytes .* longer than --max-io" "$T/err"; then
	pass replay_hostile_max_io
else
	fail replay_hostile_max_io "exit $rc: $(head -2 "$T/err")"
fi

blktrace "$T/16m.sttrace" $((16 << 20))
/usr/bin/time -v -o "$T/time" timeout 60 st-replay "$T/16m.sttrace" --target "$T/target" --qd 64 \
	--timing afap --report "$T/r.json" >"$T/out" 2>"$T/err"
rc=$?
rss=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$T/time")
if [ "$rc" -eq 0 ] && [ "$(rp_json "$T/r.json" .completed)" = 1 ] && [ "${rss:-999999}" -lt 131072 ]; then
	pass replay_hostile_memory
else
	fail replay_hostile_memory "exit $rc, peak RSS ${rss:-?} KiB: $(head -2 "$T/err")"
fi
