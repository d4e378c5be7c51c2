#!/usr/bin/env bash
# fsync on ext4 over a loop device: one sys_enter/exit_fsync pair and one
# ext4_sync_file_enter/exit pair per call, and cache flushes (a flush request
# or PREFLUSH/FUA writes) reach the device.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
rec_require_bpf record_fsync

CALLS=8
st_tmpdir T
st_loopdev L 64
DEV=$(rec_devno "$L")
rec_ext4 record_fsync "$L" "$T/mnt"

# No task filter: the journal commit that flushes runs in jbd2, not in dd.
rec_start "$T/f.sttrace" "$T/log" -e fsync -d "$L" || { fail record_fsync_start "$(cat "$T/log")"; exit 1; }
for ((i = 0; i < CALLS; i++)); do
	# conv=fsync: exactly one fsync(2) per dd
	dd if=/dev/zero of="$T/mnt/f" bs=4k count=1 conv=fsync,notrunc oflag=append status=none
done
check record_fsync_stop rec_stop

# The fsyncs of this file system, then the syscalls of the tasks that made them.
rec_rows "$T/f.sttrace" ext4_sync_file_enter dev pid | awk -v d="$DEV" '$1 == d { print $2 }' |
	sort -u >"$T/pids"
enters=$(rec_rows "$T/f.sttrace" ext4_sync_file_enter dev | grep -cx "$DEV")
exits=$(rec_rows "$T/f.sttrace" ext4_sync_file_exit dev ret | grep -cx "$DEV 0")
sys_in=$(rec_rows "$T/f.sttrace" sys_enter_fsync pid | grep -cxFf "$T/pids")
sys_out=$(rec_rows "$T/f.sttrace" sys_exit_fsync pid ret | awk '$2 == 0 { print $1 }' | grep -cxFf "$T/pids")
if [ "$enters" -eq $CALLS ] && [ "$exits" -eq $CALLS ]; then
	pass record_fsync_fs_pairs
else
	fail record_fsync_fs_pairs "ext4_sync_file enter $enters, exit $exits; want $CALLS"
fi
if [ "$sys_in" -eq $CALLS ] && [ "$sys_out" -eq $CALLS ]; then
	pass record_fsync_syscall_pairs
else
	fail record_fsync_syscall_pairs "sys_enter_fsync $sys_in, sys_exit_fsync $sys_out; want $CALLS"
fi

# op 2 = flush; 0x400 FUA, 0x800 PREFLUSH (format/lib/sttrace_events.h)
flushes=$(rec_issued "$T/f.sttrace" dev opf |
	awk "$AWK_HEX"' $1 == "'"$DEV"'" { v = hex($2); if (v % 256 == 2 || int(v / 1024) % 4) n++ } END { print n + 0 }')
# every fsync commits the journal, which flushes the device's cache
if [ "$flushes" -ge $CALLS ]; then
	pass record_fsync_flush
else
	fail record_fsync_flush "$flushes flush, PREFLUSH or FUA requests on $DEV for $CALLS fsyncs"
fi
rec_check_no_loss record_fsync_no_loss "$T/f.sttrace"
