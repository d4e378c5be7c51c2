#!/usr/bin/env bash
# follow.sh - what st-record's --flush-interval and a follower attached to
# its output cost, measured side by side.
#
# fio 4k random reads, io_uring, iodepth 32, O_DIRECT, on a loop device over a
# file in /dev/shm, traced by `st-record -e block -- fio ...` for SECONDS each
# run. Configurations, taken in turn in every round (the machine's speed
# drifts within a minute; rounds put the configurations side by side):
#   flush-10s    --flush-interval 10s: partial chunks sealed rarely (about as
#                before the option, when an idle second sealed them)
#   flush-250ms  the default
#   flush-50ms   a tighter bound
#   follower     the default, with st-analyze --follow reading the file
#   pipe         the default, -o - | st-analyze --follow -
# For each: fio's IOPS, the recorder's CPU per I/O (its summary line's CPU
# seconds over fio's I/Os), its bytes per event, and the follower's CPU.
#
# Usage: scripts/bench/follow.sh   (as root, after `make`)
#   BENCH_ROUNDS=3  BENCH_SECONDS=5  BENCH_CONFIGS="flush-10s flush-250ms ..."
set -u
cd "$(dirname "$0")/../.."
BUILD=${ST_BUILD:-$PWD/build}
ROUNDS=${BENCH_ROUNDS:-3}
SECONDS_EACH=${BENCH_SECONDS:-5}
CONFIGS=${BENCH_CONFIGS:-flush-10s flush-250ms flush-50ms follower pipe}

die() { echo "follow.sh: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "run as root (BPF and loop devices)"
[ -x "$BUILD/st-record" ] || die "$BUILD/st-record not built (make)"
command -v fio >/dev/null || die "fio not installed (make deps)"

WORK=$(mktemp -d /var/tmp/sttrace-follow.XXXXXX) || die "cannot create a directory in /var/tmp"
IMG=$(mktemp /dev/shm/sttrace-follow.XXXXXX)
LOOP=""
cleanup() {
	[ -n "$LOOP" ] && losetup -d "$LOOP"
	rm -rf "$WORK" "$IMG"
}
trap cleanup EXIT
truncate -s 256M "$IMG"
LOOP=$(losetup --find --show "$IMG") || die "no loop device"

FIO=(fio --name=bench --filename="$LOOP" --rw=randread --bs=4k --direct=1 --ioengine=io_uring
	--iodepth=32 --size=256M --time_based --runtime="$SECONDS_EACH" --output-format=json
	--output="$WORK/fio.json")

# run CONFIG: one traced fio run; prints IOPS, recorder ns CPU per I/O, bytes/event, follower CPU s
run() {
	local rec=("$BUILD/st-record" -e block) follower=""
	rm -f "$WORK/r.sttrace"
	case $1 in
	flush-10s) rec+=(--flush-interval 10s) ;;
	flush-50ms) rec+=(--flush-interval 50ms) ;;
	esac
	case $1 in
	pipe)
		"${rec[@]}" -o - -- "${FIO[@]}" 2>"$WORK/rec.log" |
			/usr/bin/time -f "%U %S" -o "$WORK/follow.time" \
				"$BUILD/st-analyze" --follow - >/dev/null 2>&1 ;;
	follower)
		/usr/bin/time -f "%U %S" -o "$WORK/follow.time" \
			"$BUILD/st-analyze" --follow "$WORK/r.sttrace" >/dev/null 2>&1 &
		follower=$!
		"${rec[@]}" -o "$WORK/r.sttrace" -- "${FIO[@]}" 2>"$WORK/rec.log"
		wait $follower ;;
	*)
		echo "0 0" >"$WORK/follow.time"
		"${rec[@]}" -o "$WORK/r.sttrace" -- "${FIO[@]}" 2>"$WORK/rec.log" ;;
	esac
	local ios iops cpu bpe fcpu
	ios=$(jq '.jobs[0].read.total_ios' "$WORK/fio.json")
	iops=$(jq '.jobs[0].read.iops | floor' "$WORK/fio.json")
	cpu=$(grep -o '[0-9.]* s CPU' "$WORK/rec.log" | awk '{ print $1 }')
	bpe=$(grep -o '[0-9.]* bytes/event' "$WORK/rec.log" | awk '{ print $1 }')
	fcpu=$(awk '{ print $1 + $2 }' "$WORK/follow.time" 2>/dev/null)
	awk -v c="$1" -v i="$iops" -v cpu="$cpu" -v n="$ios" -v b="$bpe" -v f="${fcpu:-0}" \
		'BEGIN { printf "%-12s %9d %12.0f %12s %12.2f\n", c, i, cpu * 1e9 / n, b, f }'
}

echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs)"
printf '%-12s %9s %12s %12s %12s\n' config "fio IOPS" "rec ns/I/O" "bytes/event" "follower s"
for ((r = 1; r <= ROUNDS; r++)); do
	echo "round $r"
	for c in $CONFIGS; do run "$c"; done
done | tee "$WORK/table"
echo "medians over $ROUNDS rounds:"
for c in $CONFIGS; do
	awk -v c="$c" 'BEGIN { n = 0 } $1 == c { i[n] = $2; p[n] = $3; b[n] = $4; f[n] = $5; n++ }
		function med(a,   k, j, t) { for (k = 0; k < n; k++) for (j = k + 1; j < n; j++)
			if (a[j] < a[k]) { t = a[k]; a[k] = a[j]; a[j] = t } return a[int((n - 1) / 2)] }
		END { printf "%-12s %9d %12.0f %12.1f %12.2f\n", c, med(i), med(p), med(b), med(f) }' "$WORK/table"
done
