#!/usr/bin/env bash
# why_ab.sh - the why events' probes of several builds side by side: fio
# psync 4k direct random reads on a loop device over /dev/shm, recorded by
# each build's `st-record -e all -d LOOP` in turn, ROUNDS times. Per run:
# the why programs' runs and run time per fio I/O (sched_switch,
# sched_wakeup, and any probe named why_*; BPF statistics on, as in
# overhead.sh), their ns per run, the sched records per I/O in the file,
# and all programs' runs and ns per I/O. Then the median of each build's
# why ns per I/O. Other disks' requests do not move the why columns.
#
# Usage: scripts/bench/why_ab.sh ROUNDS BUILD_DIR...   (as root, after `make`)
#   BENCH_SECONDS=4  fio's time per run
set -u
cd "$(dirname "$0")/../.."
ROUNDS=${1:?usage: why_ab.sh ROUNDS BUILD_DIR...}
shift
[ $# -gt 0 ] || { echo "why_ab.sh: no build directory" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "why_ab.sh: run as root" >&2; exit 1; }
for b in "$@"; do
	[ -x "$b/st-record" ] || { echo "why_ab.sh: no $b/st-record" >&2; exit 1; }
done
FORMAT=$PWD/build/st-format
WORK=$(mktemp -d /var/tmp/why_ab.XXXXXX)
IMG=$(mktemp /dev/shm/why_ab.XXXXXX)
LOOP="" STATS="" TRACER=""
cleanup() {
	[ -n "$TRACER" ] && kill -KILL "$TRACER" 2>/dev/null
	[ -n "$STATS" ] && kill "$STATS" 2>/dev/null
	[ -n "$LOOP" ] && losetup -d "$LOOP"
	rm -rf "$WORK" "$IMG"
}
trap cleanup EXIT
truncate -s 1G "$IMG"
LOOP=$(losetup --find --show "$IMG")
scripts/bench/bpf-stats-on >"$WORK/stats" &
STATS=$!
for ((i = 0; i < 100; i++)); do grep -qs . "$WORK/stats" && break; sleep 0.05; done
grep -qx on "$WORK/stats" || { echo "why_ab.sh: BPF statistics: $(cat "$WORK/stats")" >&2; exit 1; }
echo "why_ab.sh: fio psync 4k randread direct on $LOOP, ${BENCH_SECONDS:-4} s per run; load $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 0; r < ROUNDS; r++)); do
	for b in "$@"; do
		"$b/st-record" -o "$WORK/r.sttrace" -e all -d "$LOOP" 2>"$WORK/log" &
		TRACER=$!
		for ((i = 0; i < 200; i++)); do grep -q "recording" "$WORK/log" && break; sleep 0.05; done
		fio --name=why_ab --filename="$LOOP" --direct=1 --ioengine=psync --rw=randread --bs=4k \
			--time_based --runtime="${BENCH_SECONDS:-4}" --randrepeat=0 --output-format=json \
			--output="$WORK/fio.json" >/dev/null
		kill -INT "$TRACER"
		wait "$TRACER"
		TRACER=""
		ios=$(jq '.jobs[0].read.total_ios' "$WORK/fio.json")
		recs=$("$FORMAT" cat "$WORK/r.sttrace" | awk '$2 == "sched_switch" || $2 == "sched_wakeup" { n++ } END { print n + 0 }')
		"$FORMAT" info "$WORK/r.sttrace" | awk -v b="$b" -v ios="$ios" -v recs="$recs" '
			$1 ~ /^probe\./ { split($3, kv, /[=;]/); ar += kv[2]; an += kv[4] }
			$1 ~ /^probe\.(sched_switch|sched_wakeup|why_.*)$/ { wr += kv[2]; wn += kv[4] }
			END { printf "%-30s I/Os %7d  why runs/IO %5.2f ns/IO %5.0f ns/run %4.0f  sched records/IO %5.2f  all runs/IO %5.2f ns/IO %5.0f\n",
				b, ios, wr / ios, wn / ios, wr ? wn / wr : 0, recs / ios, ar / ios, an / ios }' |
			tee -a "$WORK/lines"
		rm -f "$WORK/r.sttrace"
	done
done
echo "median why ns per I/O:"
for b in "$@"; do
	awk -v b="$b" '$1 == b { print $8 }' "$WORK/lines" | sort -n |
		awk -v b="$b" '{ v[NR] = $1 } END { printf "  %-30s %5.0f\n", b, NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
done
