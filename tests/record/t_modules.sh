#!/usr/bin/env bash
# Each module of modules/ records (st-record --config) and analyzes
# (st-analyze --config) real I/O on a loop device; the spans it defines
# match what the workload did: one ext4 buffered-write span per dd write and
# none unpaired, the written file's inode among the writeback spans after
# sync, one XFS buffered-write span per dd write and none unpaired.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
rec_require_bpf record_modules

WRITES=100
M=$(cd "$(dirname "$0")/../../modules" && pwd)
st_tmpdir T

# span_line FILE MODULE SPAN: the header line st-analyze gives the span
span_line() {
	st-analyze "$1" --config "$2" 2>/dev/null | grep "^span $3 "
}
# want_pairs NAME LINE N: LINE says N paired and nothing unpaired
want_pairs() {
	if [[ $2 == *": $3 paired, 0 unpaired starts, 0 unpaired ends" ]]; then pass "$1"; else
		fail "$1" "${2:-no span line} (want $3 paired)"; fi
}

st_loopdev L 64
rec_ext4 record_modules "$L" "$T/mnt"
# ext4 buffered writes: dd's writes, counted by dd
st-record -o "$T/e.sttrace" --config "$M/ext4-buffered-write.json" -d "$L" -- \
	dd if=/dev/zero of="$T/mnt/e" bs=4k count=$WRITES status=none 2>"$T/elog" ||
	fail module_ext4_record "$(cat "$T/elog")"
want_pairs module_ext4_buffered_write "$(span_line "$T/e.sttrace" "$M/ext4-buffered-write.json" ext4_bw)" $WRITES
# its analyze defaults: groups by command, the dd group holds every span
n=$(st-analyze "$T/e.sttrace" --config "$M/ext4-buffered-write.json" --csv 2>/dev/null |
	awk -F, '{ gsub(/"/, "", $1) } $1 == "dd" && $7 == "ext4_bw" { print $8 }')
if [ "$n" = $WRITES ]; then pass module_ext4_defaults; else fail module_ext4_defaults "dd's ext4_bw: n=${n:-none}"; fi

# writeback of an inode: the file dd dirtied is written back by sync
rec_start "$T/w.sttrace" "$T/wlog" --config "$M/writeback-inode.json" ||
	{ fail module_writeback_start "$(cat "$T/wlog")"; exit 1; }
dd if=/dev/zero of="$T/mnt/w" bs=4k count=$WRITES status=none
sync
check module_writeback_stop rec_stop
ino=$(stat -c %i "$T/mnt/w")
line=$(span_line "$T/w.sttrace" "$M/writeback-inode.json" wb_inode)
n=$(st-analyze "$T/w.sttrace" --config "$M/writeback-inode.json" --csv 2>/dev/null |
	awk -F, -v f="ino 0:0/$ino" '{ gsub(/"/, "", $1) } $1 == f && $7 == "wb_inode" { print $8 }')
# system-wide: other inodes' writeback may be cut by the recording's start or end
# (counted unpaired); the file dd wrote is written back inside it
if [[ $line == *" paired, "*" unpaired ends" ]] && [ "${n:-0}" -ge 1 ]; then
	pass module_writeback_inode
else
	fail module_writeback_inode "$line; inode $ino: ${n:-no} spans"
fi

# XFS buffered writes (mkfs.xfs wants 300 MB)
st_loopdev X 320
mkfs.xfs -q "$X" || { fail module_xfs "mkfs.xfs $X failed"; exit 1; }
mkdir -p "$T/xfs"
mount "$X" "$T/xfs" || { fail module_xfs "mount $X failed"; exit 1; }
at_exit "umount '$T/xfs'"
st-record -o "$T/x.sttrace" --config "$M/xfs-buffered-write.json" -- \
	dd if=/dev/zero of="$T/xfs/x" bs=4k count=$WRITES status=none 2>"$T/xlog" ||
	fail module_xfs_record "$(cat "$T/xlog")"
want_pairs module_xfs_buffered_write "$(span_line "$T/x.sttrace" "$M/xfs-buffered-write.json" xfs_bw)" $WRITES
