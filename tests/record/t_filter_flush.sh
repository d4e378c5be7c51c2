#!/usr/bin/env bash
# Under each task filter (-- CMD, -p, -c, --cgroup) the device flushes that
# the traced task's fsyncs caused are recorded, although kernel threads
# issue and complete them. An fsync of a file whose data is already on disk
# sends one empty PREFLUSH bio, and the kernel flushes the device cache once
# for it; nothing else writes to this file system (made without lazy inode
# table or journal init). Truth: the number of fsync calls the task made,
# against the device flushes in the file and st-analyze's fsyncs joined to
# one (a D2C stage: the device flush's issue -> the fsync's request done).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
rec_require_bpf record_filter_flush
command -v python3 >/dev/null || { skip record_filter_flush "python3 not installed"; exit 0; }

CALLS=50
st_tmpdir T
st_loopdev L 64
DEV=$(rec_devno "$L")
rec_ext4 record_filter_flush "$L" "$T/mnt" -E lazy_itable_init=0,lazy_journal_init=0
# own command name, so that -c matches nothing else on this machine
cp "$(readlink -f "$(PATH=/usr/bin:/bin command -v python3)")" "$T/fsyncer"
FSYNCS='import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY)
while not os.path.exists(sys.argv[2]):
    time.sleep(0.02)
for i in range(int(sys.argv[3])):
    os.fsync(fd)'
"$T/fsyncer" -c 'import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT)
os.write(fd, b"x" * 4096)
os.fsync(fd)' "$T/mnt/f" || { fail record_filter_flush "cannot write the file"; exit 1; }
sync

# check_flushes NAME FILE: one device flush recorded per fsync, each fsync joined to it.
check_flushes() {
	local name=$1 file=$2 flushes joined
	flushes=$(rec_issued "$file" dev opf |
		awk -v d="$DEV" "$AWK_HEX"' $1 == d && hex($2) % 256 == 2' | wc -l)
	joined=$(st-analyze --csv --comm fsyncer "$file" 2>/dev/null |
		awk -F, '{ g = $1; gsub(/"/, "", g) } g ~ / fsync$/ && $7 == "D2C" { print $8 }')
	if [ "$flushes" -eq $CALLS ] && [ "${joined:-0}" -eq $CALLS ]; then
		pass "$name"
	else
		fail "$name" "$flushes device flushes recorded, ${joined:-0} fsyncs joined to one; want $CALLS"
	fi
}

# the command itself
touch "$T/go"
st-record -o "$T/cmd.sttrace" -e all -d "$L" -- "$T/fsyncer" -c "$FSYNCS" "$T/mnt/f" "$T/go" $CALLS \
	>"$T/cmd.log" 2>&1 || fail record_filter_flush_command "st-record failed: $(tail -1 "$T/cmd.log")"
check_flushes record_filter_flush_command "$T/cmd.sttrace"

# run_gated NAME FILTER...: the task started before the recorder (rec_run_gated).
run_gated() {
	local name=$1
	shift
	rec_run_gated "$T/$name.sttrace" "$T/$name.log" "$T/go" -e all -d "$L" "$@" -- \
		"$T/fsyncer" -c "$FSYNCS" "$T/mnt/f" "$T/go" $CALLS ||
		{ fail "$name" "$(cat "$T/$name.log")"; return; }
	check_flushes "$name" "$T/$name.sttrace"
}

run_gated record_filter_flush_pid -p PID
run_gated record_filter_flush_comm -c fsyncer
if rec_cgroup CG sttrace-flush; then
	MOVE_TO=$CG run_gated record_filter_flush_cgroup --cgroup "$CG"
else
	fail record_filter_flush_cgroup "cannot create a cgroup v2 group"
fi
