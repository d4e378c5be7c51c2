#!/usr/bin/env bash
# Two concurrent dd workloads on two loop devices; -d, -c, -p and --cgroup
# (of a cgroup v2 group, and of a v1 blkio group where one is mounted) each
# keep exactly the chosen one's requests.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
rec_require_bpf record_filters

st_tmpdir T
st_loopdev L1 32
st_loopdev L2 32
DEV1=$(rec_devno "$L1")
DEV2=$(rec_devno "$L2")
# own command names, so that no other dd on this machine matches -c
cp "$(command -v dd)" "$T/ddone"
cp "$(command -v dd)" "$T/ddtwo"

# gated NAME DEV COUNT: a dd waiting for $T/go; its pid in $GATED_PID
gated() {
	sh -c 'while [ ! -e "$1/go" ]; do sleep 0.02; done
		exec "$1/$2" if="$3" of=/dev/null bs=4k count="$4" iflag=direct status=none' \
		gated "$T" "$1" "$2" "$3" &
	GATED_PID=$!
}

# run_filter NAME WANT_DEV WANT_COUNT OTHER_DEV FILTER...: both workloads under
# the filter; WANT_COUNT requests on WANT_DEV, none on OTHER_DEV. (Other disks
# are not looked at: starting a process may read its binary from the root disk.)
run_filter() {
	local name=$1 want_dev=$2 want=$3 other_dev=$4 out="$T/$1.sttrace" pid1 got other
	shift 4
	rm -f "$T/go"
	gated ddone "$L1" 50
	pid1=$GATED_PID
	gated ddtwo "$L2" 70
	[ -n "${MOVE_TWO_TO:-}" ] && echo "$GATED_PID" >"$MOVE_TWO_TO/cgroup.procs"
	FILTER_ARGS=("$@")
	[ "${FILTER_ARGS[0]}" = "-p" ] && FILTER_ARGS[1]=$pid1
	if ! rec_start "$out" "$T/$name.log" -e block "${FILTER_ARGS[@]}"; then
		touch "$T/go"
		wait "$pid1" "$GATED_PID"
		fail "$name" "$(cat "$T/$name.log")"
		return
	fi
	touch "$T/go"
	wait "$pid1" "$GATED_PID"
	rec_stop
	got=$(rec_issued "$out" dev | grep -cx "$want_dev")
	other=$(rec_issued "$out" dev | grep -cx "$other_dev")
	if [ "$got" -eq "$want" ] && [ "$other" -eq 0 ]; then
		pass "$name"
	else
		fail "$name" "$got requests on $want_dev (want $want), $other on $other_dev (want 0)"
	fi
}

run_filter record_filter_device "$DEV1" 50 "$DEV2" -d "$L1"
# -d keeps no other disk at all, the root disk included
elsewhere=$(rec_issued "$T/record_filter_device.sttrace" dev | grep -cvx "$DEV1")
if [ "$elsewhere" -eq 0 ]; then
	pass record_filter_device_only
else
	fail record_filter_device_only "$elsewhere requests on other devices"
fi
run_filter record_filter_comm "$DEV2" 70 "$DEV1" -c ddtwo
run_filter record_filter_pid "$DEV1" 50 "$DEV2" -p PID

# --cgroup: the second workload runs in a cgroup v2 group of its own
if rec_cgroup CG sttrace-test; then
	MOVE_TWO_TO=$CG run_filter record_filter_cgroup "$DEV2" 70 "$DEV1" --cgroup "$CG"
else
	fail record_filter_cgroup "cannot create a cgroup v2 group"
fi

# --cgroup of a v1 blkio group: the second workload runs in one of its own
V1=$(findmnt -n -t cgroup -o TARGET,OPTIONS | awk '$2 ~ /(^|,)blkio(,|$)/ { print $1; exit }')
if [ -z "$V1" ]; then
	skip record_filter_cgroup_v1 "no cgroup v1 blkio hierarchy"
elif mkdir "$V1/sttrace-filter.$$"; then
	at_exit "rmdir '$V1/sttrace-filter.$$'"
	MOVE_TWO_TO=$V1/sttrace-filter.$$ run_filter record_filter_cgroup_v1 "$DEV2" 70 "$DEV1" \
		--cgroup "$V1/sttrace-filter.$$"
else
	fail record_filter_cgroup_v1 "cannot create $V1/sttrace-filter.$$"
fi
