#!/usr/bin/env bash
# A real recording of fio (psync, O_DIRECT, 4k random reads of a loop device
# over /dev/shm, a fixed number of I/Os): the analyzer must count exactly the
# I/Os fio reports, and its syscall-level total latency percentiles must agree
# with fio's own clat percentiles.
#
# Tolerance, derived: fio takes its clat timestamps in user space around each
# pread64, so every I/O's sys_enter -> sys_exit interval lies inside fio's
# measured interval: ours <= fio for every I/O, hence for every percentile,
# up to the quantization of the two reports: fio's histogram reports a bucket
# value (64 buckets per power of two: <= 1.6 %), the analyzer's sketch <= 0.39 %.
# Below, the gap is fio's per-I/O time outside the syscall: clock reads and
# syscall entry/exit (a few us, seen at p50), plus, in the tail, the thread
# being preempted between its clock read and the syscall, which on a shared
# 2-CPU machine under load was measured at 7.5 % of fio's p99. At p50 the gap
# was 5.7 us of fio's 17.3 (ours 11.6) in a clean-clone run after
# drop_caches, so p50's lower bound is the truth suite's (t_fio_truth.sh).
#   p50: fio * 0.75 - 5 us  <=  analyzer  <=  fio * 1.02
#   p99: fio * 0.80 - 5 us  <=  analyzer  <=  fio * 1.02
# The upper bound is the sharp one: the analyzer can only exceed fio by
# mis-joining events or mis-measuring.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"	# a recording: rec_devno, rec_rows

why=$(bpf_unavailable)
if [ -n "$why" ]; then
	skip analyze.fio.count "$why"
	skip analyze.fio.latency "$why"
	exit 0
fi
command -v fio >/dev/null && command -v jq >/dev/null || {
	skip analyze.fio.count "fio or jq not installed"
	skip analyze.fio.latency "fio or jq not installed"
	exit 0
}

IOS=20000
st_tmpdir dir
st_loopdev dev 128
st-record -o "$dir/fio.sttrace" -e dio -- fio --name=randread --filename="$dev" \
	--rw=randread --bs=4k --direct=1 --ioengine=psync --size=128M --number_ios=$IOS \
	--output-format=json --output="$dir/fio.json" >"$dir/record.log" 2>&1 ||
	{ fail analyze.fio.record "st-record failed: $(tail -1 "$dir/record.log")"; exit 1; }

fio_ios=$(jq '.jobs[0].read.total_ios' "$dir/fio.json")
fio_p50=$(jq '.jobs[0].read.clat_ns.percentile["50.000000"] / 1000' "$dir/fio.json")
fio_p99=$(jq '.jobs[0].read.clat_ns.percentile["99.000000"] / 1000' "$dir/fio.json")

# The total stage of the device's read group: n, p50, p99 (CSV columns 8, 11, 13).
st-analyze --csv --dev "$dev" "$dir/fio.sttrace" >"$dir/summary.csv" 2>"$dir/summary.err" ||
	{ fail analyze.fio.analyze "st-analyze failed: $(cat "$dir/summary.err")"; exit 1; }
row=$(awk -F, '$1 ~ / read$/ && $7 == "total" { print $8, $11, $13 }' "$dir/summary.csv")
read -r n p50 p99 <<<"$row"

# This kernel now and then emits no block_rq_complete for a request (about 1
# in 200,000 here; a bpftrace count of the same tracepoint misses the same
# one). The pread64 whose request it was is still seen from entry to exit,
# so the analyzer counts it (without its block stages): its count is fio's.
devno=$(rec_devno "$dev")
uncompleted=$(($(rec_issued "$dir/fio.sttrace" dev | grep -cx "$devno") -
	$(rec_completed "$dir/fio.sttrace" dev | grep -cx "$devno")))
if [ "$fio_ios" = "$IOS" ] && [ "${n:-}" = "$fio_ios" ]; then
	pass analyze.fio.count
else
	fail analyze.fio.count "fio did $fio_ios I/Os (asked $IOS), the analyzer counted ${n:-none} ($uncompleted requests issued and never completed)"
fi

within() { # ours fio low: fio*low-5 <= ours <= fio*1.02
	awk -v o="$1" -v f="$2" -v low="$3" 'BEGIN { exit !(o >= f * low - 5 && o <= f * 1.02) }'
}
if [ -n "$p50" ] && within "$p50" "$fio_p50" 0.75 && within "$p99" "$fio_p99" 0.80; then
	pass analyze.fio.latency
else
	fail analyze.fio.latency "p50 ${p50:-?} us vs fio $fio_p50 us, p99 ${p99:-?} us vs fio $fio_p99 us"
fi
echo "analyzer p50 $p50 us p99 $p99 us; fio clat p50 $fio_p50 us p99 $fio_p99 us"
