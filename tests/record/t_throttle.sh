#!/usr/bin/env bash
# Bios blk-throttle held back stay in the trace under task filters.
#
# fio makes 500 direct 4k psync reads of a loop device from a cgroup whose
# read IOPS are limited to 250 on it (cgroup v1 blkio.throttle.read_iops_device,
# v2 io.max riops). The throttle lets each 100 ms slice's first 25 reads
# through, and queues the next one in its worker (a kworker) once the next
# slice begins: about one read in 25 waits ~100 ms, in no task of fio's.
# Truth: fio's JSON (its I/O count, clat p99 and max).
# - Recorded `-e all -- fio` (record_throttle_command) and `-e all -p PID`
#   (record_throttle_pid): st-analyze counts fio's 500 reads on the device,
#   and the p99 and max of their total are within 5 % of fio's clat p99 and
#   max (the slow reads are the held-back ones: without them the device's
#   reads end at a few ms); every read slower than half of fio's max shows
#   the time the throttle held it (sys2q) as most of its total.
# - Recorded system-wide, `-e all -d DEV` (record_throttle_system): the same.
#   There the `block` preset has no queue event, and the held-back request's
#   issue says it (the worker issues it as it unplugs).
# - In each, `st-analyze --by cgroup` names the throttled group by its path
#   in its I/O controller's hierarchy ("blkio:/x" in v1's, "/x" in v2's)
#   with fio's read count (record_throttle_*_cgroup): the cgroup that charged
#   the I/O, not the task's v2 cgroup (the root, where v1 blkio holds fio).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
rec_require_bpf record_throttle
rec_require_fio record_throttle

st_tmpdir T
st_loopdev L 64
DEV=$(rec_devno "$L")
DISK=$(basename "$L")
READS=500

rec_throttle_cgroup CG "$DEV" 250
case $? in
0) ;;
2) skip record_throttle "no cgroup v1 blkio and no cgroup v2 io controller"; exit 0 ;;
*) fail record_throttle "cannot make a cgroup with a read IOPS limit on $L"; exit 1 ;;
esac

# the reads, from inside the cgroup once $T/go exists
FIO=(fio --name=throttle --filename="$L" --rw=randread --bs=4k --direct=1 --ioengine=psync
	--size=32M --number_ios=$READS --output-format=json)
# shellcheck disable=SC2016
IN_CGROUP='echo $$ >"$1/cgroup.procs" && while [ ! -e "$2" ]; do sleep 0.02; done && shift 2 && exec "$@"'

# check_reads NAME TRACE JSON: the device's reads against fio's
check_reads() {
	local name=$1 trace=$2 json=$3 fio_n fio_p99 fio_max n p99 max held
	fio_n=$(jq '.jobs[0].read.total_ios' "$json")
	fio_p99=$(jq '.jobs[0].read.clat_ns.percentile["99.000000"] / 1000' "$json")
	fio_max=$(jq '.jobs[0].read.clat_ns.max / 1000' "$json")
	st-analyze --csv --quantile 0.0001 --top 10000000 --dev "$DISK" "$trace" 2>/dev/null |
		awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
			$(col["op"]) == "read" { print $(col["total_us"]), $(col["sys2q_us"]) }' |
		sort -n >"$T/$name.reads"
	n=$(wc -l <"$T/$name.reads")
	p99=$(awk -v n="$n" 'NR == int((n * 99 + 99) / 100) { print $1 }' "$T/$name.reads")
	max=$(tail -1 "$T/$name.reads" | cut -d' ' -f1)
	# the slow reads each spent most of their total held back (sys2q)
	held=$(awk -v half="$fio_max" '$1 > half / 2 && !($2 > $1 * 0.9) { bad++ }
		END { print bad + 0 }' "$T/$name.reads")
	if [ "$fio_n" = $READS ] && [ "$n" = "$fio_n" ] &&
		awk -v a="$p99" -v b="$fio_p99" -v c="$max" -v d="$fio_max" 'BEGIN {
			exit !(a >= b * 0.95 && a <= b * 1.05 && c >= d * 0.95 && c <= d * 1.05) }' &&
		[ "$held" = 0 ]; then
		pass "$name"
	else
		fail "$name" "$n reads on $DISK (fio $fio_n), total p99 ${p99:-none} us max ${max:-none} us (fio clat p99 $fio_p99 max $fio_max), $held slow reads without sys2q covering them"
	fi
}

# the group's label: its path under its hierarchy's mount, "blkio:" before it in v1's
CG_MOUNT=$(findmnt -n -o TARGET -T "$CG")
CG_LABEL=/${CG#"$CG_MOUNT"/}
[ "$(findmnt -n -o FSTYPE -T "$CG")" = cgroup ] && CG_LABEL=blkio:$CG_LABEL

# check_cgroup NAME TRACE JSON: the group's reads against fio's
check_cgroup() {
	local name=$1 trace=$2 json=$3 fio_n n
	fio_n=$(jq '.jobs[0].read.total_ios' "$json")
	st-analyze --by cgroup --csv --dev "$DISK" "$trace" >"$T/$name.csv" 2>/dev/null
	n=$(rec_group_ios "$T/$name.csv" "$CG_LABEL")
	if [ "$fio_n" = $READS ] && [ "$n" = "$fio_n" ]; then
		pass "$name"
	else
		fail "$name" "$CG_LABEL: ${n:-no} reads (fio $fio_n): $(tr '\n' '|' <"$T/$name.csv" | head -c 400)"
	fi
}

# -- CMD: the recorder starts fio (through a shell that joins the cgroup)
touch "$T/go"
st-record -o "$T/cmd.sttrace" -e all -- sh -c "$IN_CGROUP" sh "$CG" "$T/go" \
	"${FIO[@]}" --output="$T/cmd.json" >"$T/cmd.log" 2>&1 ||
	fail record_throttle_command "st-record failed: $(tail -1 "$T/cmd.log")"
check_reads record_throttle_command "$T/cmd.sttrace" "$T/cmd.json"
check_cgroup record_throttle_command_cgroup "$T/cmd.sttrace" "$T/cmd.json"

# -p: fio joins the cgroup and waits for the recorder
rm -f "$T/go"
sh -c "$IN_CGROUP" sh "$CG" "$T/go" "${FIO[@]}" --output="$T/pid.json" &
FIO_PID=$!
if rec_start "$T/pid.sttrace" "$T/pid.log" -e all -p "$FIO_PID"; then
	touch "$T/go"
	wait "$FIO_PID"
	rec_stop
	check_reads record_throttle_pid "$T/pid.sttrace" "$T/pid.json"
	check_cgroup record_throttle_pid_cgroup "$T/pid.sttrace" "$T/pid.json"
else
	kill "$FIO_PID"
	fail record_throttle_pid "$(cat "$T/pid.log")"
fi

# system-wide: the device alone
rm -f "$T/go"
sh -c "$IN_CGROUP" sh "$CG" "$T/go" "${FIO[@]}" --output="$T/all.json" &
FIO_PID=$!
if rec_start "$T/all.sttrace" "$T/all.log" -e all -d "$L"; then
	touch "$T/go"
	wait "$FIO_PID"
	rec_stop
	check_reads record_throttle_system "$T/all.sttrace" "$T/all.json"
	check_cgroup record_throttle_system_cgroup "$T/all.sttrace" "$T/all.json"
else
	kill "$FIO_PID"
	fail record_throttle_system "$(cat "$T/all.log")"
fi
