#!/usr/bin/env bash
# Writeback named with its file, and kept under task filters.
#
# A task writes 4 MiB to a new file through the page cache and calls sync(2):
# the kernel's flusher threads (kworkers), not the task, write the pages
# back. Truth: the file's size and inode as stat(1) gives them.
# - Recorded system-wide (-d alone), the write I/Os st-analyze names with the
#   file (its path: the task opened it inside the recording) carry exactly
#   the file's bytes (record_writeback_named).
# - Under each task filter (-- CMD, -p, -c, --cgroup) the same writeback is
#   recorded although the kworkers do not pass the filter: the file is one
#   the traced task wrote to (record_writeback_filter_*). The task opened the
#   file before the recorder started in the -p, -c and --cgroup runs, so
#   there the I/O may be named by the inode alone ("ino MAJ:MIN/INO").
# - A task that writes the file through a shared mapping makes no write call
#   at all: its writeback is kept under -- CMD, the file opened for writing
#   inside the recording (record_writeback_mmap_command), and under -p, the
#   file open for writing before the recorder started
#   (record_writeback_mmap_pid).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
rec_require_bpf record_writeback
command -v python3 >/dev/null || { skip record_writeback "python3 not installed"; exit 0; }

st_tmpdir T
st_loopdev L 128
DEV=$(rec_devno "$L")
rec_ext4 record_writeback "$L" "$T/mnt" -E lazy_itable_init=0,lazy_journal_init=0
# own command name, so that -c matches nothing else on this machine
cp "$(readlink -f "$(PATH=/usr/bin:/bin command -v python3)")" "$T/wbwriter"
FILE=$T/mnt/wb.dat
WRITE='import os, sys, time
while not os.path.exists(sys.argv[2]):
    time.sleep(0.02)
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
for i in range(256):
    os.write(fd, bytes([i]) * 16384)
os.sync()'
# the gated runs open the file before the recorder starts
WRITE_OPEN_FIRST='import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
while not os.path.exists(sys.argv[2]):
    time.sleep(0.02)
for i in range(256):
    os.write(fd, bytes([i]) * 16384)
os.sync()'

# the same 4 MiB through a shared mapping, the file opened first
WRITE_MMAP='import mmap, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT | os.O_TRUNC)
os.ftruncate(fd, 4194304)
while not os.path.exists(sys.argv[2]):
    time.sleep(0.02)
m = mmap.mmap(fd, 4194304)
for i in range(256):
    m[i * 16384:(i + 1) * 16384] = bytes([i]) * 16384
os.sync()'

fresh_file() {
	rm -f "$FILE" "$T/go"
	sync
}

# check_named NAME TRACE PATH_ONLY: the write I/Os that reached the device
# (a dev: the task's buffered write calls have none) named with the file
# carry its bytes: by path, or (PATH_ONLY 0) by the inode stat(1) gives.
check_named() {
	local name=$1 trace=$2 path_only=$3 size ino bytes
	size=$(stat -c %s "$FILE")
	ino="ino $DEV/$(stat -c %i "$FILE")"
	[ "$path_only" = 1 ] && ino=$FILE
	bytes=$(st-analyze --csv --quantile 0.0001 --top 10000000 "$trace" 2>/dev/null |
		awk -F, -v path="$FILE" -v ino="$ino" '
			NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
			{ f = $(col["file"]); gsub(/"/, "", f) }
			$(col["op"]) == "write" && $(col["dev"]) != "-" && (f == path || f == ino) {
				n += $(col["bytes"]) }
			END { print n + 0 }')
	if [ "$bytes" -eq "$size" ] && [ "$size" -eq 4194304 ]; then
		pass "$name"
	else
		fail "$name" "$bytes bytes written back named with $FILE (or $ino); the file has $size"
	fi
}

# system-wide: the writer runs inside the recording
fresh_file
rec_start "$T/all.sttrace" "$T/all.log" -e all -d "$L" || { fail record_writeback_named "$(cat "$T/all.log")"; exit 1; }
touch "$T/go"
"$T/wbwriter" -c "$WRITE" "$FILE" "$T/go"
rec_stop
check_named record_writeback_named "$T/all.sttrace" 1

# the command itself
fresh_file
touch "$T/go"
st-record -o "$T/cmd.sttrace" -e all -d "$L" -- "$T/wbwriter" -c "$WRITE" "$FILE" "$T/go" \
	>"$T/cmd.log" 2>&1 || fail record_writeback_filter_command "st-record failed: $(tail -1 "$T/cmd.log")"
check_named record_writeback_filter_command "$T/cmd.sttrace" 0

fresh_file
touch "$T/go"
st-record -o "$T/mmap.sttrace" -e all -d "$L" -- "$T/wbwriter" -c "$WRITE_MMAP" "$FILE" "$T/go" \
	>"$T/mmap.log" 2>&1 || fail record_writeback_mmap_command "st-record failed: $(tail -1 "$T/mmap.log")"
check_named record_writeback_mmap_command "$T/mmap.sttrace" 0

# run_gated NAME FILTER...: the writer started before the recorder (rec_run_gated),
# writing with ${GATED_WRITE:-$WRITE_OPEN_FIRST}.
run_gated() {
	local name=$1
	shift
	fresh_file
	rec_run_gated "$T/$name.sttrace" "$T/$name.log" "$T/go" -e all -d "$L" "$@" -- \
		"$T/wbwriter" -c "${GATED_WRITE:-$WRITE_OPEN_FIRST}" "$FILE" "$T/go" ||
		{ fail "$name" "$(cat "$T/$name.log")"; return; }
	check_named "$name" "$T/$name.sttrace" 0
}

run_gated record_writeback_filter_pid -p PID
run_gated record_writeback_filter_comm -c wbwriter
GATED_WRITE=$WRITE_MMAP run_gated record_writeback_mmap_pid -p PID
if rec_cgroup CG sttrace-writeback; then
	MOVE_TO=$CG run_gated record_writeback_filter_cgroup --cgroup "$CG"
else
	fail record_writeback_filter_cgroup "cannot create a cgroup v2 group"
fi
