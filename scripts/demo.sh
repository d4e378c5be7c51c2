#!/usr/bin/env bash
# The main job, end to end: record a short real workload, analyze it, plot it.
#
# A 256 MiB loop device over /dev/shm gets 8 s of fio random reads and writes
# (direct I/O, psync and io_uring) while st-record traces every layer; then
# st-analyze prints the summary and the slowest I/Os, writes plots and one
# HTML page of every report.
# Everything lands in ${OUT:-demo-out}/. Needs root (BPF, loop devices).
set -euo pipefail
cd "$(dirname "$0")/.."
. tests/lib.sh
OUT=${OUT:-demo-out}
mkdir -p "$OUT"

why=$(bpf_unavailable)
if [ -n "$why" ]; then
	echo "demo: cannot record here: $why" >&2
	exit 1
fi
st_loopdev dev 256

echo "demo: recording fio on $dev into $OUT/run.sttrace"
st-record -o "$OUT/run.sttrace" --events all -d "$dev" -- \
	fio --name=demo --filename="$dev" --direct=1 --rw=randrw --rwmixread=70 \
	--bs=4k --size=200M --time_based --runtime=8 --numjobs=2 \
	--ioengine=psync --group_reporting --output="$OUT/fio.txt"

st-format info "$OUT/run.sttrace" | tee "$OUT/info.txt"
st-analyze "$OUT/run.sttrace" | tee "$OUT/summary.txt"
st-analyze "$OUT/run.sttrace" --quantile 99.9 --top 10 | tee "$OUT/tail.txt"
st-analyze "$OUT/run.sttrace" --interval 1s --gnuplot "$OUT/plots" >"$OUT/timeseries.txt"
st-analyze "$OUT/run.sttrace" --html "$OUT/report.html" --force
echo "demo: one page to attach to a bug report: $OUT/report.html"
echo "demo: plots in $OUT/plots:"
ls "$OUT/plots"
