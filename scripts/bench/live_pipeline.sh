#!/usr/bin/env bash
# live_pipeline.sh - the live pipeline of the README beside fio: does the
# recorder lose events when its reader is slow?
#
#   st-record -o - -d LOOP | tee live.sttrace | READER
#
# beside fio 4k random reads, psync, O_DIRECT, NUMJOBS jobs, on a loop device
# over a file in /dev/shm (about 40k IOPS on a quiet 2-core guest). Readers,
# one run each per round:
#   follow   st-analyze --follow - (the README's live view)
#   metrics  the same with --metrics, scraped every second (curl), as the
#            README's Prometheus setup does
#   stall    a reader that reads for 1 s and stops for 2 s, in turn: an
#            output that cannot keep up, as a busy or stopped follower is
# For each run: fio's IOPS, the events in live.sttrace, the events lost
# (`st-format info`: the probes' per-CPU counts and the chunks the
# recorder dropped because its output did not take them), the most the
# BPF ring buffer held at a drain against its size, the longest time
# between two drains (record.drain_gap_max_ns: the ring overflows when the
# recorder is kept from draining it, by its output or by the CPU), and the
# recorder's slowest output write (its summary line: before issue 44 the
# time the loop waited for the write, after it the time a piece waited in
# the stream's queue, the loop waiting for nothing).
#
# Usage: scripts/bench/live_pipeline.sh   (as root, after `make`)
#   BENCH_ROUNDS=1  BENCH_SECONDS=10  BENCH_JOBS=2  BENCH_READERS="follow metrics stall"
#   BENCH_RATE=0 (fio --rate_iops per job, 0 = as fast as it goes)
#   BENCH_RECORD_ARGS="--ringbuf-size 16M" (more st-record options)
#   BENCH_NICE=0 (st-record's nice value: -10 gives it the CPU before the workload)
#   ST_BUILD=DIR (the build to measure: another checkout's, side by side)
set -u
cd "$(dirname "$0")/../.."
BUILD=${ST_BUILD:-$PWD/build}
ROUNDS=${BENCH_ROUNDS:-1}
SECONDS_EACH=${BENCH_SECONDS:-10}
JOBS=${BENCH_JOBS:-2}
READERS=${BENCH_READERS:-follow metrics stall}
PORT=${BENCH_PORT:-19391}
RATE=${BENCH_RATE:-0}
read -r -a RECORD_ARGS <<<"${BENCH_RECORD_ARGS:-}"
NICE=${BENCH_NICE:-0}

die() { echo "live_pipeline.sh: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "run as root (BPF and loop devices)"
[ -x "$BUILD/st-record" ] || die "$BUILD/st-record not built (make)"
command -v fio >/dev/null || die "fio not installed (make deps)"
command -v jq >/dev/null || die "jq not installed (make deps)"

. tests/lib.sh	# st_tmpdir, st_loopdev and the EXIT trap that releases what they make
TMPDIR=/var/tmp st_tmpdir WORK || die "cannot create a directory in /var/tmp"
st_loopdev LOOP 256 || die "losetup failed"

FIO=(fio --name=bench --filename="$LOOP" --rw=randread --bs=4k --direct=1 --ioengine=psync
	--numjobs="$JOBS" --group_reporting --size=256M --time_based --runtime="$SECONDS_EACH"
	--output-format=json --output="$WORK/fio.json")
[ "$RATE" != 0 ] && FIO+=(--rate_iops="$RATE")

# The stalling reader: 1 s reading, 2 s not, until its input ends.
stall_reader() {
	python3 -c '
import os, sys, time
while True:
    end = time.monotonic() + 1
    while time.monotonic() < end:
        if not os.read(0, 1 << 16):
            sys.exit(0)
    time.sleep(2)'
}

# run READER: one pipeline beside one fio run; prints its row
run() {
	local reader=$1 rec_pid
	rm -f "$WORK/live.sttrace" "$WORK/rec.log"
	{
		nice -n "$NICE" "$BUILD/st-record" -o - -d "$LOOP" "${RECORD_ARGS[@]}" 2>"$WORK/rec.log" &
		rec_pid=$!
		echo "$rec_pid" >"$WORK/rec.pid"
		wait "$rec_pid"
	} | tee "$WORK/live.sttrace" | case $reader in
		follow) "$BUILD/st-analyze" --follow - >"$WORK/follow.out" 2>&1 ;;
		metrics)
			"$BUILD/st-analyze" --follow - --metrics "$PORT" >"$WORK/follow.out" 2>&1 &
			echo $! >"$WORK/analyze.pid"
			wait $! ;;
		stall) stall_reader ;;
	esac &
	local pipeline=$!
	for ((i = 0; i < 100; i++)); do
		grep -q "recording" "$WORK/rec.log" 2>/dev/null && break
		sleep 0.1
	done
	local scraper=""
	if [ "$reader" = metrics ]; then
		while sleep 1; do curl -s -o /dev/null -m 5 "http://127.0.0.1:$PORT/metrics"; done &
		scraper=$!
	fi
	"${FIO[@]}" >/dev/null
	kill -INT "$(cat "$WORK/rec.pid")"
	[ -n "$scraper" ] && kill "$scraper" && wait "$scraper" 2>/dev/null
	# the endpoint may serve on after the end, until SIGINT
	[ "$reader" = metrics ] && sleep 1 && kill -INT "$(cat "$WORK/analyze.pid")" 2>/dev/null
	wait "$pipeline"
	local iops events lost detail fill ring wmax gap
	iops=$(jq '.jobs[0].read.iops | floor' "$WORK/fio.json")
	"$BUILD/st-format" info "$WORK/live.sttrace" >"$WORK/info" 2>&1
	events=$(awk '$1 == "events" { print $2; exit }' "$WORK/info")
	lost=$(awk '/^lost events/ { print $3; exit }' "$WORK/info")
	detail=$(sed -n 's/^lost events *[0-9]* *//p' "$WORK/info" | tr ' ' '_')
	fill=$("$BUILD/st-format" info --json "$WORK/live.sttrace" 2>/dev/null |
		jq -r '.metadata["record.ringbuf_used_max_bytes"] // "?"')
	ring=$("$BUILD/st-format" info --json "$WORK/live.sttrace" 2>/dev/null |
		jq -r '.metadata["record.ringbuf_bytes"] // "?"')
	gap=$("$BUILD/st-format" info --json "$WORK/live.sttrace" 2>/dev/null |
		jq -r '.metadata["record.drain_gap_max_ns"] // "" | if . == "" then "?" else (tonumber / 1e6 | floor) end')
	wmax=$(grep -o 'max [0-9.]* ms' "$WORK/rec.log" | awk '{ print $2 }')
	printf '%-8s %9s %10s %8s %11s %11s %8s %10s  %s\n' "$reader" "$iops" "${events:-?}" "${lost:-?}" \
		"$fill" "$ring" "$gap" "${wmax:-?}" "${detail:--}"
}

echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs)"
printf '%-8s %9s %10s %8s %11s %11s %8s %10s  %s\n' reader "fio IOPS" events lost "ring max B" \
	"ring B" "gap ms" "write ms" "lost by"
for ((r = 1; r <= ROUNDS; r++)); do
	for reader in $READERS; do run "$reader"; done
done
