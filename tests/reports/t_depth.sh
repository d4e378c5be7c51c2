#!/usr/bin/env bash
# st-analyze --depth against the kernel's own count: diskstats' weighted time
# in queue (field 11 of /sys/block/DEV/stat, ms: the sum over completed
# requests of their time from allocation to completion; iostat's aqu-sz is
# its growth over an interval's length). fio libaio random reads at iodepth
# 16 on a loop device, the stat file read right before and after fio, inside
# the recording: the time-weighted in-flight distribution's integral (the sum
# of depth x time, i.e. the requests' issue..completion times added up) is
# within 5 % of the field's growth. The kernel's time starts at the
# request's allocation, a little before its issue (its time in the
# scheduler); the requests here spend tens of us after their issue, in the
# loop device's queue (measured: 1524 ms against 1496 ms, 1.8 %).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"
rec_require_bpf reports_depth

st_tmpdir T
st_loopdev L 128
st_nomerges "$L"
STAT=/sys/block/$(basename "$L")/stat

rec_start "$T/r.sttrace" "$T/rec.log" -e block -d "$L" ||
	{ fail reports_depth_record "st-record did not start"; exit 1; }
read -r -a before <"$STAT"
fio --name=depth --filename="$L" --direct=1 --ioengine=libaio --iodepth=16 --rw=randread \
	--bs=4k --number_ios=20000 --size=100M --randrepeat=1 --norandommap --output="$T/fio.out" ||
	fail reports_depth_fio "fio failed"
read -r -a after <"$STAT"
rec_stop || fail reports_depth_record "st-record failed: $(tail -1 "$T/rec.log")"

kernel_ms=$((after[10] - before[10]))
kernel_reads=$((after[0] - before[0]))
st-analyze "$T/r.sttrace" --depth --csv --dev "$L" >"$T/depth.csv" 2>"$T/err" ||
	{ fail reports_depth_run "st-analyze --depth failed: $(tail -1 "$T/err")"; exit 1; }
ours_ms=$(awk -F, 'NR > 1 { t += $2 * $3 } END { printf "%.3f", t * 1000 }' "$T/depth.csv")
st-analyze "$T/r.sttrace" --depth --dev "$L" >"$T/depth.txt" 2>&1
requests=$(awk '/requests, in flight/ { print $2; exit }' "$T/depth.txt")
echo "diskstats: $kernel_reads reads, weighted time in queue $kernel_ms ms; --depth: $requests requests, in-flight time $ours_ms ms"
if [ "$kernel_ms" -gt 0 ] && awk -v k="$kernel_ms" -v o="$ours_ms" 'BEGIN { d = (o - k) / k; exit !(d <= 0.05 && d >= -0.05) }'; then
	pass reports_depth_diskstats
else
	fail reports_depth_diskstats "diskstats $kernel_ms ms, --depth integral $ours_ms ms"
fi
[ "$requests" = "$kernel_reads" ] && pass reports_depth_requests ||
	fail reports_depth_requests "diskstats completed $kernel_reads reads, --depth counts ${requests:-none}"
