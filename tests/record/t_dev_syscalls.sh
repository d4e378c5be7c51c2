#!/usr/bin/env bash
# -d DEV selects that device's I/O at the syscall and io_uring layers too:
# the data calls and io_uring requests on the device itself and on the
# files of a file system on it, not a pipe, /dev/zero, nor another device or
# its file system's files. Recorded system-wide (-e all -d A) while, at once:
#   - fio preads A directly and a file of the ext4 on A, and reads A through
#     io_uring (200 O_DIRECT reads each): recorded, entry and exit;
#   - another fio reads B through io_uring, dd reads device B and a file of
#     the ext4 on B, and `dd | cat` moves data through a pipe from
#     /dev/zero: none of their calls or requests recorded, nor an exit
#     without its entry.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
rec_require_bpf record_dev_syscalls

st_tmpdir T
st_loopdev A 128
st_loopdev B 128
rec_ext4 record_dev_syscalls "$A" "$T/a"
rec_ext4 record_dev_syscalls "$B" "$T/b"
FIO=(--direct=1 --ioengine=psync --bs=4k --rw=randread --number_ios=200 --randrepeat=1 --output=/dev/null)
fio --name=layout --filename="$T/a/f" --size=16M --create_only=1 --output=/dev/null
dd if=/dev/urandom of="$T/b/g" bs=1M count=16 status=none && sync

rec_start "$T/r.sttrace" "$T/log" -e all -d "$A" ||
	{ fail record_dev_syscalls_start "$(cat "$T/log")"; exit 1; }
dd if=/dev/zero bs=4k count=2000 status=none | cat >/dev/null &
pipe=$!
dd if="$B" of=/dev/null bs=4k count=500 iflag=direct status=none &
raw_b=$!
dd if="$T/b/g" of=/dev/null bs=4k count=500 iflag=direct status=none &
file_b=$!
fio "${FIO[@]}" --ioengine=io_uring --name=uring_b --filename="$B" --size=64M &
uring_b=$!
fio "${FIO[@]}" --name=raw --filename="$A" --size=64M --name=file --filename="$T/a/f" --size=16M \
	--name=uring --filename="$A" --size=64M --ioengine=io_uring
wait $pipe $raw_b $file_b $uring_b
rec_stop || { fail record_dev_syscalls_stop "st-record failed: $(tail -2 "$T/log")"; exit 1; }

# fio's calls and requests on A, all of them and none on B; other
# processes' data calls: none; no exit or completion without its entry
st-analyze "$T/r.sttrace" --by comm --csv >"$T/comm.csv" 2>"$T/head.txt"
counts=""
for type in sys_enter_pread64 sys_exit_pread64 io_uring_submit_req io_uring_complete; do
	counts+="$(rec_count "$T/r.sttrace" "$type") "
done
exits=$(sed -n 's/.*begun before the trace: \([0-9]*\) exits.*/\1/p' "$T/head.txt")
if [ "$counts" = "400 400 200 200 " ]; then
	pass record_dev_syscalls_device_and_fs
else
	fail record_dev_syscalls_device_and_fs "pread64 entries, exits, io_uring submissions, completions: $counts; want 400 (200 on $A, 200 on its ext4) and 200 (on $A, none on $B)"
fi
others=$(awk -F, 'NR > 1 && $1 != "fio" && $7 == "total" { printf "%s %s; ", $1, $2 }' "$T/comm.csv")
calls=$(awk -F, 'NR > 1 && ($1 == "cat" || $1 == "dd") && $7 == "total" { n += $2 } END { print n + 0 }' "$T/comm.csv")
if [ "$calls" = 0 ] && [ "${exits:-x}" = 0 ]; then
	pass record_dev_syscalls_others_excluded
else
	fail record_dev_syscalls_others_excluded "cat/dd I/Os: $calls (groups: $others); exits without entry: $exits"
fi
echo "dev_syscalls: pread64 enter/exit, io_uring submit/complete: $counts; cat/dd $calls, exits without entry $exits; other groups: $others"
