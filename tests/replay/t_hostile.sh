#!/usr/bin/env bash
# A crafted trace fills neither the disk nor the memory of st-replay:
#   hugeoff   tests/format/hostile/replay-hugeoff.sttrace (one pwrite at
#             1 PiB) at file level into a 64 MiB tmpfs:
#             refused up front, one line, nothing filled (du of the tmpfs)
#   max_io    a request of 4 GiB - 4 KiB (blktrace records, rp_blktrace, then
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

truncate -s 32M "$T/target"
rp_blktrace "$T/huge.sttrace" R $((4294967296 - 4096)) 0
timeout 60 st-replay "$T/huge.sttrace" --target "$T/target" --wrap >"$T/out" 2>"$T/err"
rc=$?
if [ "$rc" -eq 1 ] && grep -q "an I/O of 4294963200 bytes .* longer than --max-io" "$T/err"; then
	pass replay_hostile_max_io
else
	fail replay_hostile_max_io "exit $rc: $(head -2 "$T/err")"
fi

rp_blktrace "$T/16m.sttrace" R $((16 << 20)) 0
/usr/bin/time -v -o "$T/time" timeout 60 st-replay "$T/16m.sttrace" --target "$T/target" --qd 64 \
	--timing afap --report "$T/r.json" >"$T/out" 2>"$T/err"
rc=$?
rss=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$T/time")
if [ "$rc" -eq 0 ] && [ "$(rp_json "$T/r.json" .completed)" = 1 ] && [ "${rss:-999999}" -lt 131072 ]; then
	pass replay_hostile_memory
else
	fail replay_hostile_memory "exit $rc, peak RSS ${rss:-?} KiB: $(head -2 "$T/err")"
fi
