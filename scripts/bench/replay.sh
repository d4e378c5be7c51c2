#!/usr/bin/env bash
# replay.sh - st-replay's speed and schedule, measured side by side with fio.
#
# 1. As fast as possible: fio 4k random reads, io_uring, iodepth 32, O_DIRECT
#    on a loop device over a file in /dev/shm, recorded with `st-record -e
#    block`; then, in alternating rounds on the same device, st-replay
#    --timing afap --qd 32 re-issues that trace and fio runs the same pattern
#    and count again, once with fio's defaults and once lean (registered
#    buffers and file, no per-I/O clock reads: what st-replay does per I/O).
#    Each round's ratio is st-replay's IOPS (completed I/Os over first
#    submission to last completion) over each fio run next to it; the median
#    and range of the rounds are printed (goal >= 0.9 against fio).
# 2. Original timing: fio rate-limited to 10k, 50k and 100k IOPS (same
#    pattern), recorded, then replayed on its recorded schedule: recorded and
#    replayed IOPS and the schedule slip (submission against plan) p50, p99,
#    max, and I/Os more than 1 ms late.
#
# Usage: scripts/bench/replay.sh     (as root, after `make`)
#   BENCH_IOS=200000  I/Os of the afap trace     BENCH_ROUNDS=5  afap rounds
#   BENCH_RATES="10000 50000 100000"             BENCH_SECONDS=2  per rate (at most 262144 I/Os: one pass over 1 GiB)
set -u
cd "$(dirname "$0")/../.."
BUILD=${ST_BUILD:-$PWD/build}
IOS=${BENCH_IOS:-200000}
ROUNDS=${BENCH_ROUNDS:-5}
RATES=${BENCH_RATES:-10000 50000 100000}
SECONDS_EACH=${BENCH_SECONDS:-2}

die() { echo "replay.sh: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "run as root (BPF and loop devices)"
[ -x "$BUILD/st-record" ] && [ -x "$BUILD/st-replay" ] || die "st-record or st-replay not built (make)"
command -v fio >/dev/null && command -v jq >/dev/null || die "fio or jq not installed (make deps)"

WORK=$(mktemp -d /var/tmp/sttrace-bench-replay.XXXXXX) || die "cannot create a directory in /var/tmp"
IMG=$(mktemp /dev/shm/sttrace-bench-replay.XXXXXX)
LOOP=""
cleanup() {
	[ -n "$LOOP" ] && losetup -d "$LOOP"
	rm -rf "$WORK" "$IMG"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
truncate -s 1G "$IMG"
LOOP=$(losetup --find --show "$IMG") || die "losetup failed"
DEV=$(basename "$LOOP")
# Real blocks to read: a loop device over a sparse file reads holes faster.
dd if=/dev/zero of="$LOOP" bs=1M count=1024 oflag=direct status=none

FIO=(fio --name=rr --filename="$LOOP" --direct=1 --ioengine=io_uring --iodepth=32 --rw=randread
	--bs=4k --size=1G --randrepeat=0 --output-format=json)

fio_iops() { jq '.jobs[0].read.iops' "$1"; }
replay_iops() { jq '.completed / .elapsed_s' "$1"; }

echo "== afap, QD 32, 4k random reads, loop device over /dev/shm ($IOS I/Os)"
"$BUILD/st-record" -o "$WORK/afap.sttrace" -e block -d "$LOOP" -- \
	"${FIO[@]}" --number_ios="$IOS" --output="$WORK/rec.json" 2>/dev/null || die "recording failed"
ratios=() lean_ratios=()
printf '%-6s %14s %14s %14s %9s %9s\n' round "fio IOPS" "fio lean IOPS" "st-replay IOPS" "/ fio" "/ lean"
for ((r = 1; r <= ROUNDS; r++)); do
	"${FIO[@]}" --number_ios="$IOS" --output="$WORK/fio.json" || die "fio failed"
	"$BUILD/st-replay" "$WORK/afap.sttrace" --map "$DEV=$LOOP" --timing afap --qd 32 \
		--report "$WORK/afap.json" >/dev/null || die "st-replay failed"
	"${FIO[@]}" --fixedbufs=1 --registerfiles=1 --gtod_reduce=1 --number_ios="$IOS" \
		--output="$WORK/lean.json" || die "fio failed"
	f=$(fio_iops "$WORK/fio.json")
	l=$(fio_iops "$WORK/lean.json")
	s=$(replay_iops "$WORK/afap.json")
	ratios+=("$(awk -v s="$s" -v f="$f" 'BEGIN { printf "%.3f", s / f }')")
	lean_ratios+=("$(awk -v s="$s" -v f="$l" 'BEGIN { printf "%.3f", s / f }')")
	printf '%-6s %14.0f %14.0f %14.0f %9s %9s\n' "$r" "$f" "$l" "$s" "${ratios[-1]}" "${lean_ratios[-1]}"
done
summary() {
	sort -n | awk -v what="$1" '{ v[NR] = $1 } END {
		printf "st-replay / %s IOPS: median %.3f (%.3f..%.3f over %d rounds)\n",
			what, v[int((NR + 1) / 2)], v[1], v[NR], NR }'
}
printf '%s\n' "${ratios[@]}" | summary "fio"
printf '%s\n' "${lean_ratios[@]}" | summary "fio lean"
echo "goal: >= 0.9 against fio"

echo
echo "== original timing: schedule slip"
printf '%-10s %12s %12s %9s %9s %9s %8s\n' "rate" "recorded" "replayed" "slip p50" "slip p99" "slip max" "late"
printf '%-10s %12s %12s %9s %9s %9s %8s\n' "IOPS" "IOPS" "IOPS" "us" "us" "us" ">1ms"
for rate in $RATES; do
	"$BUILD/st-record" -o "$WORK/r$rate.sttrace" -e block -d "$LOOP" -- \
		"${FIO[@]}" --rate_iops="$rate" --number_ios=$((rate * SECONDS_EACH)) \
		--output="$WORK/r$rate.fio.json" 2>/dev/null || die "recording at $rate IOPS failed"
	"$BUILD/st-replay" "$WORK/r$rate.sttrace" --map "$DEV=$LOOP" --qd 32 \
		--report "$WORK/r$rate.json" >/dev/null || die "st-replay failed"
	jq -r --arg rate "$rate" '[$rate, .recorded.iops, .replayed.iops, .slip_us.p50, .slip_us.p99,
		.slip_us.max, .slip_us.late_1ms, .slip_us.count] | @tsv' "$WORK/r$rate.json" |
		awk -F'\t' '{ printf "%-10s %12.0f %12.0f %9.1f %9.1f %9.1f %8s of %s\n", $1, $2, $3, $4, $5, $6, $7, $8 }'
done
echo
echo "fio's iolog of the same trace (st-format convert --to fio-iolog): not in this build"
