#!/usr/bin/env bash
# IOPS and MB/s of the summary are over the time the group was busy (its
# first I/O's start to its last one's end), not over the recording, so they
# are fio's own: fio psync 4 KiB O_DIRECT random reads of a loop device for
# 3 s, recorded two ways:
#   - st-record -e all -- fio (the recording outlasts fio's I/O by its
#     start-up and exit),
#   - system-wide, -e block, started 1 s before fio and stopped 1 s after;
# each within 3 % of fio's read IOPS and bandwidth (its JSON: total I/Os
# over its runtime), with the recording's span (longer) beside them. And
# Q2G where it was measured only (not as zeros).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"
rec_require_bpf analyze.iops
command -v jq >/dev/null || { skip analyze.iops "jq not installed"; exit 0; }

st_tmpdir T
st_loopdev L 128
FIO=(fio --name=iops --filename="$L" --direct=1 --rw=randread --bs=4k --size=100M --ioengine=psync
	--time_based --runtime=3 --output-format=json)

check analyze.iops.record_command st-record -o "$T/cmd.sttrace" -e all -- "${FIO[@]}" --output="$T/cmd.json"
rec_start "$T/sys.sttrace" "$T/sys.log" -e block ||
	{ fail analyze.iops.record_system "st-record did not start: $(cat "$T/sys.log")"; exit 1; }
sleep 1
"${FIO[@]}" --output="$T/sys.json"
sleep 1
rec_stop
check analyze.iops.record_system test -s "$T/sys.sttrace"

# within3 A B: |A / B - 1| <= 3 %
within3() { awk -v a="$1" -v b="$2" 'BEGIN { r = a / b; exit !(b > 0 && r >= 0.97 && r <= 1.03) }'; }

for run in cmd sys; do
	fio_iops=$(jq '.jobs[0].read.iops' "$T/$run.json")
	fio_mbs=$(jq '.jobs[0].read.bw_bytes / 1e6' "$T/$run.json")
	st-analyze "$T/$run.sttrace" --dev "$L" --csv >"$T/$run.csv" 2>/dev/null
	st-analyze "$T/$run.sttrace" --dev "$L" >"$T/$run.txt" 2>&1
	read -r iops mbs busy <<<"$(awk -F, '$1 ~ / read$/ && $7 == "total" { print $3, $4, $18 }' "$T/$run.csv")"
	span=$(awk '/^1 file, / { print $(NF - 4) }' "$T/$run.txt")
	if [ -n "$iops" ] && within3 "$iops" "$fio_iops" && within3 "$mbs" "$fio_mbs"; then
		pass "analyze.iops.$run"
	else
		fail "analyze.iops.$run" "st-analyze $iops IOPS $mbs MB/s, fio $fio_iops IOPS $fio_mbs MB/s"
	fi
	# the text says over what: the busy time, and the recording's span beside it
	if grep -q " read: .* IOPS, .* MB/s over [0-9.]* s busy (of [0-9.]* s)" "$T/$run.txt" &&
		awk -v b="$busy" -v s="$span" 'BEGIN { exit !(b > 0 && s > b) }'; then
		pass "analyze.iops.$run.span"
	else
		fail "analyze.iops.$run.span" "busy $busy s, recording $span s: $(grep " read: " "$T/$run.txt")"
	fi
	# Q2G: measured with the -- fio recording's bio queue events; not
	# measured system-wide (-e block: no block_bio_queue, and this kernel
	# stamps no bio's queueing): no row, rather than a row of zeros
	q2g=$(awk -F, '$1 ~ / read$/ && $7 == "Q2G" { print $16 }' "$T/$run.csv")
	if { [ $run = cmd ] && awk -v m="$q2g" 'BEGIN { exit !(m > 0) }'; } || { [ $run = sys ] && [ -z "$q2g" ]; }; then
		pass "analyze.iops.$run.q2g"
	else
		fail "analyze.iops.$run.q2g" "Q2G max '$q2g' us (want > 0 with -- fio, no row system-wide)"
	fi
	echo "iops: $run: st-analyze $iops IOPS $mbs MB/s over $busy s busy of $span s; fio $fio_iops IOPS $fio_mbs MB/s"
done
