#!/usr/bin/env bash
# Every I/O carries its cgroup: st-analyze --by cgroup and --top-by cgroup.
#
# Two fio jobs make direct 4k reads of one loop device, 300 with psync
# (the cgroup of a syscall) and 500 with io_uring (of a submission), each
# from a cgroup v2 group of its own (the shell that starts it joins the
# group first); then a dd of 50 reads runs in a cgroup v1 blkio group only,
# where one is mounted. Recorded system-wide, `-e all -d DEV`. Truth: fio's JSON
# (each job's read count), dd's count, the groups' directories' inodes.
# - record_cgroup_by: `--by cgroup --csv` counts each group's reads (by its
#   path under the cgroup2 mount, from the file's cgroup.* metadata) as its
#   fio did.
# - record_cgroup_v1_blkio: the dd's reads, in a v1 blkio group without a
#   limit (its task in the v2 root), are that group's ("blkio:/NAME"): the
#   cgroup of an I/O is the one that charged it, where one did (the fio jobs'
#   I/O is charged to the blkio root: theirs is their task's, in v2).
# - record_cgroup_v2_io: where cgroup2 holds the io controller, a fio of 200
#   reads in a group with io enabled, recorded `-e block` (no call carries
#   its task's cgroup): `--by cgroup` names the group with fio's count.
# - record_cgroup_top: `--top-by cgroup` lists the two groups, the one of
#   500 reads first.
# - record_cgroup_anonymized: `st-format anonymize` leaves no group's name.
# - record_cgroup_rotate: recorded in files of 200 ms (--rotate), each file
#   that holds reads of a fio running through several of them names its
#   group by its directory's inode.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
rec_require_bpf record_cgroup
rec_require_fio record_cgroup

st_tmpdir T
st_loopdev L 64
st_nomerges "$L"
DISK=$(basename "$L")
rec_cgroup CGA sttrace-cga || { fail record_cgroup "cannot create a cgroup v2 group"; exit 1; }
rec_cgroup CGB sttrace-cgb || { fail record_cgroup "cannot create a cgroup v2 group"; exit 1; }
V2=$(findmnt -n -t cgroup2 -o TARGET | head -1)
V1=$(findmnt -n -t cgroup -o TARGET,OPTIONS | awk '$2 ~ /(^|,)blkio(,|$)/ { print $1; exit }')
if [ -n "$V1" ]; then
	CGV1=$V1/sttrace-cgv1.$$
	mkdir "$CGV1" || { fail record_cgroup "cannot create $CGV1"; exit 1; }
	at_exit "rmdir '$CGV1'"
fi

# in_cgroup CGROUP CMD...: CMD run from a shell that joined CGROUP first
# shellcheck disable=SC2016
in_cgroup() {
	sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$@"
}
# fio_in CGROUP NAME COUNT ENGINE: COUNT direct 4k random reads of $L
fio_in() {
	in_cgroup "$1" fio --name="$2" --filename="$L" --rw=randread --bs=4k --direct=1 \
		--ioengine="$4" --size=32M --number_ios="$3" --output-format=json --output="$T/$2.json"
}
# One after the other: blk-mq may issue a request of one process from
# another's context, and the issue then names the wrong thread.
workload() {
	fio_in "$CGA" a 300 psync
	fio_in "$CGB" b 500 io_uring
	[ -z "$V1" ] || in_cgroup "$CGV1" dd if="$L" of=/dev/null bs=4k count=50 iflag=direct status=none
}
if ! rec_start "$T/cg.sttrace" "$T/cg.log" -e all -d "$L"; then
	fail record_cgroup "$(cat "$T/cg.log")"
	exit 1
fi
workload
rec_stop

# reads per group label, from the summary's CSV
st-analyze --by cgroup --csv --dev "$DISK" "$T/cg.sttrace" >"$T/by.csv" 2>"$T/by.err"
reads_of() {
	rec_group_ios "$T/by.csv" "$1"
}
A=/${CGA#"$V2"/}
B=/${CGB#"$V2"/}
fio_a=$(jq '.jobs[0].read.total_ios' "$T/a.json")
fio_b=$(jq '.jobs[0].read.total_ios' "$T/b.json")
got_a=$(reads_of "$A")
got_b=$(reads_of "$B")
if [ "$fio_a" = 300 ] && [ "$fio_b" = 500 ] && [ "$got_a" = "$fio_a" ] && [ "$got_b" = "$fio_b" ]; then
	pass record_cgroup_by
else
	fail record_cgroup_by "$A: $got_a reads (fio $fio_a), $B: $got_b (fio $fio_b): $(tr '\n' '|' <"$T/by.csv" | head -c 600)"
fi

if [ -z "$V1" ]; then
	skip record_cgroup_v1_blkio "no cgroup v1 blkio hierarchy"
elif [ "$(reads_of "blkio:/${CGV1#"$V1"/}")" = 50 ] && [ "$(reads_of /)" = 0 ]; then
	pass record_cgroup_v1_blkio
else
	fail record_cgroup_v1_blkio "$(reads_of "blkio:/${CGV1#"$V1"/}") reads in blkio:/${CGV1#"$V1"/}, $(reads_of /) in / (dd made 50 in v1 $CGV1 only)"
fi

# the io controller in cgroup2: a group with io enabled charges its I/O
if ! grep -qw io "$V2/cgroup.controllers"; then
	skip record_cgroup_v2_io "the io controller is not in the cgroup2 hierarchy (v1 blkio holds it)"
elif ! { grep -qw io "$V2/cgroup.subtree_control" || { echo +io >"$V2/cgroup.subtree_control" &&
	at_exit "echo -io >'$V2/cgroup.subtree_control'"; }; }; then
	fail record_cgroup_v2_io "cannot enable io in $V2/cgroup.subtree_control"
elif rec_cgroup CGIO sttrace-cgio && rec_start "$T/io.sttrace" "$T/io.log" -e block -d "$L"; then
	fio_in "$CGIO" io 200 psync
	rec_stop
	st-analyze --by cgroup --csv --dev "$DISK" "$T/io.sttrace" >"$T/io.csv" 2>&1
	fio_io=$(jq '.jobs[0].read.total_ios' "$T/io.json")
	got_io=$(rec_group_ios "$T/io.csv" "/${CGIO#"$V2"/}")
	if [ "$fio_io" = 200 ] && [ "$got_io" = "$fio_io" ]; then
		pass record_cgroup_v2_io
	else
		fail record_cgroup_v2_io "/${CGIO#"$V2"/}: $got_io reads (fio $fio_io): $(tr '\n' '|' <"$T/io.csv" | head -c 400)"
	fi
else
	fail record_cgroup_v2_io "cannot record fio in a cgroup v2 group: $(cat "$T/io.log" 2>/dev/null)"
fi

st-analyze --top-by cgroup --dev "$DISK" "$T/cg.sttrace" >"$T/top.txt" 2>&1
order=$(grep -oE "^($A|$B):" "$T/top.txt" | tr -d : | tr '\n' ' ')
if [ "$order" = "$B $A " ]; then
	pass record_cgroup_top
else
	fail record_cgroup_top "order '$order', want '$B $A': $(head -c 600 "$T/top.txt")"
fi

st-format anonymize -o "$T/anon.sttrace" "$T/cg.sttrace" >/dev/null 2>&1
if st-format info "$T/anon.sttrace" | grep -q '^  cgroup\.' &&
	! st-format info "$T/anon.sttrace" | grep -q sttrace-cg; then
	pass record_cgroup_anonymized
else
	fail record_cgroup_anonymized "$(st-format info "$T/anon.sttrace" 2>&1 | grep -m3 'cgroup')"
fi

# --rotate: every file names the group (ids are the directories' inodes)
if rec_start "$T/rot.sttrace" "$T/rot.log" -e all -d "$L" --rotate 200ms; then
	# 600 reads at 1000 a second: calls of the group in three files or more
	in_cgroup "$CGA" fio --name=rot --filename="$L" --rw=randread --bs=4k --direct=1 \
		--ioengine=psync --size=32M --number_ios=600 --rate_iops=1000 --output=/dev/null
	rec_stop
	unnamed=0
	files=0
	for f in "$T"/rot.*.sttrace; do
		# -d records only the calls on the device: a file before fio's first
		# read has none of the group's (its start-up reads other files)
		st-format info "$f" | grep -q '^  sys_enter_pread64 ' || continue
		files=$((files + 1))
		st-format info "$f" | grep -qx "  cgroup.$(stat -c %i "$CGA") = $A" || unnamed=$((unnamed + 1))
	done
	if [ "$files" -ge 2 ] && [ "$unnamed" = 0 ]; then
		pass record_cgroup_rotate
	else
		fail record_cgroup_rotate "$unnamed of $files files with fio's reads do not name $A"
	fi
else
	fail record_cgroup_rotate "$(cat "$T/rot.log")"
fi
