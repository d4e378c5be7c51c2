#!/usr/bin/env bash
# replay.sh - st-replay's speed and schedule, measured side by side with fio
# and btreplay.
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
#    pattern), recorded, then replayed on its recorded schedule
#    BENCH_TIMED_ROUNDS times at each queue depth of BENCH_TIMED_QDS (128,
#    the default, and 1024): recorded and replayed IOPS, the schedule slip
#    st-replay reports (submission against plan) p50, p99, max, the I/Os
#    more than 1 ms late and how many of those were due while --qd I/Os were
#    in flight (waiting for the device, not the scheduler); the median round.
# 3. The same recordings replayed by three replayers onto a second loop
#    device, each recorded with st-record (so each is measured alike, from
#    the kernel's side): st-replay; btreplay on `st-format convert --to
#    blktrace` files after btrecord (-c: the machine's CPUs); fio
#    --read_iolog of `--to fio-iolog` (its timestamps kept, iodepth 32).
#    replay_fidelity.py compares each with the recording: requests issued,
#    matched to a recorded one (op, offset, size), the fraction of each
#    submitting task's consecutive requests in recorded order, the span
#    ratio, and the slip p50/p99/max against a schedule started where no
#    request is early.
# 4. The afap trace converted to fio's iolog and replayed by fio without
#    stalls at QD 32 on the same device, next to st-replay's last round.
#
# Usage: scripts/bench/replay.sh     (as root, after `make`)
#   BENCH_IOS=200000  I/Os of the afap trace     BENCH_ROUNDS=5  afap rounds
#   BENCH_RATES="10000 50000 100000"             BENCH_SECONDS=2  per rate (at most 262144 I/Os: one pass over 1 GiB)
#   BENCH_TIMED_ROUNDS=3  original-timing replays per rate and queue depth
#   BENCH_TIMED_QDS="128 1024"
set -u
cd "$(dirname "$0")/../.."
BUILD=${ST_BUILD:-$PWD/build}
IOS=${BENCH_IOS:-200000}
ROUNDS=${BENCH_ROUNDS:-5}
RATES=${BENCH_RATES:-10000 50000 100000}
SECONDS_EACH=${BENCH_SECONDS:-2}
TIMED_ROUNDS=${BENCH_TIMED_ROUNDS:-3}
TIMED_QDS=${BENCH_TIMED_QDS:-128 1024}
FIDELITY=$PWD/scripts/bench/replay_fidelity.py

die() { echo "replay.sh: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "run as root (BPF and loop devices)"
[ -x "$BUILD/st-record" ] && [ -x "$BUILD/st-replay" ] || die "st-record or st-replay not built (make)"
for tool in fio jq btrecord btreplay python3; do
	command -v "$tool" >/dev/null || die "$tool not installed (scripts/install-deps.sh)"
done

WORK=$(mktemp -d /var/tmp/sttrace-bench-replay.XXXXXX) || die "cannot create a directory in /var/tmp"
IMG=$(mktemp /dev/shm/sttrace-bench-replay.XXXXXX)
IMG2=$(mktemp /dev/shm/sttrace-bench-replay.XXXXXX)
LOOP="" LOOP2=""
cleanup() {
	[ -n "$LOOP" ] && losetup -d "$LOOP"
	[ -n "$LOOP2" ] && losetup -d "$LOOP2"
	rm -rf "$WORK" "$IMG" "$IMG2"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
truncate -s 1G "$IMG" "$IMG2"
LOOP=$(losetup --find --show "$IMG") || die "losetup failed"
LOOP2=$(losetup --find --show "$IMG2") || die "losetup failed"
DEV=$(basename "$LOOP") DEV2=$(basename "$LOOP2")
# Real blocks to read: a loop device over a sparse file reads holes faster.
dd if=/dev/zero of="$LOOP" bs=1M count=1024 oflag=direct status=none
dd if=/dev/zero of="$LOOP2" bs=1M count=1024 oflag=direct status=none
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs)"

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
echo "== original timing: schedule slip as st-replay reports it (median round of $TIMED_ROUNDS)"
printf '%-8s %-5s %-6s %10s %10s %8s %9s %9s %9s %15s\n' "rate" "qd" "round" "recorded" "replayed" "threads" \
	"slip p50" "slip p99" "slip max" "late >1ms"
printf '%-8s %-5s %-6s %10s %10s %8s %9s %9s %9s %15s\n' "IOPS" "" "" "IOPS" "IOPS" "" "us" "us" "us" "(qd full)"
timed_row() {
	jq -r --arg rate "$1" --arg round "$2" '[$rate, .qd, $round, .recorded.iops, .replayed.iops, .threads,
		.slip_us.p50, .slip_us.p99, .slip_us.max, .slip_us.late_1ms, .slip_us.late_1ms_qd_full] | @tsv' "$3" |
		awk -F'\t' '{ printf "%-8s %-5s %-6s %10.0f %10.0f %8s %9.1f %9.1f %9.1f %7s (%s)\n",
			$1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11 }'
}
for rate in $RATES; do
	"$BUILD/st-record" -o "$WORK/r$rate.sttrace" -e block -d "$LOOP" -- \
		"${FIO[@]}" --rate_iops="$rate" --number_ios=$((rate * SECONDS_EACH)) \
		--output="$WORK/r$rate.fio.json" 2>/dev/null || die "recording at $rate IOPS failed"
	for qd in $TIMED_QDS; do
		for ((r = 1; r <= TIMED_ROUNDS; r++)); do
			"$BUILD/st-replay" "$WORK/r$rate.sttrace" --map "$DEV=$LOOP" --qd "$qd" \
				--report "$WORK/r$rate.$r.json" >/dev/null || die "st-replay failed"
			timed_row "$rate" "$r" "$WORK/r$rate.$r.json"
		done
		# The round with the median p99.
		median=$(for ((r = 1; r <= TIMED_ROUNDS; r++)); do
			echo "$(jq .slip_us.p99 "$WORK/r$rate.$r.json") $r"; done |
			sort -n | awk '{ v[NR] = $2 } END { print v[int((NR + 1) / 2)] }')
		timed_row "$rate" "median" "$WORK/r$rate.$median.json"
	done
done

echo
echo "== replayers side by side: the recordings above replayed onto $DEV2, each replay recorded"
printf '%-8s %-22s %8s %8s %9s %7s %9s %9s %9s\n' "rate" "replayer" "issued" "matched" "in order" "span" "slip p50" "slip p99" "slip max"
printf '%-8s %-22s %8s %8s %9s %7s %9s %9s %9s\n' "IOPS" "" "" "" "" "ratio" "us" "us" "us"
issued_csv() {
	"$BUILD/st-format" cat --csv -t block_rq_issue,block_rq_issue_stamped "$1" 2>/dev/null |
		awk -F, -v dev="$2" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; print; next } $c["dev"] == dev'
}
devno() { printf '%d:%d' "0x$(stat -c %t "$1")" "0x$(stat -c %T "$1")"; }
for rate in $RATES; do
	issued_csv "$WORK/r$rate.sttrace" "$(devno "$LOOP")" >"$WORK/rec.csv"
	# btreplay opens the device its files are named after: name them after the scratch device.
	rm -rf "$WORK/bt" && mkdir "$WORK/bt"
	"$BUILD/st-format" convert "$WORK/r$rate.sttrace" --to blktrace -o "$WORK/bt/$DEV2" ||
		die "convert --to blktrace failed"
	btrecord -d "$WORK/bt" -D "$WORK/bt" "$DEV2" >/dev/null || die "btrecord failed"
	"$BUILD/st-format" convert "$WORK/r$rate.sttrace" --to fio-iolog -o "$WORK/r$rate.iolog" ||
		die "convert --to fio-iolog failed"
	for replayer in st-replay btreplay fio-iolog; do
		case $replayer in
		st-replay) cmd=("$BUILD/st-replay" "$WORK/r$rate.sttrace" --map "$DEV=$LOOP2") ;;
		btreplay) cmd=(btreplay -d "$WORK/bt" -c "$(nproc)" "$DEV2") ;;
		fio-iolog) cmd=(fio --name=iolog --read_iolog="$WORK/r$rate.iolog" --replay_redirect="$LOOP2"
			--direct=1 --ioengine=io_uring --iodepth=32 --output=/dev/null) ;;
		esac
		"$BUILD/st-record" -o "$WORK/rep.sttrace" -e block -d "$LOOP2" -- "${cmd[@]}" >/dev/null 2>&1 ||
			die "$replayer at $rate IOPS failed (recorded)"
		issued_csv "$WORK/rep.sttrace" "$(devno "$LOOP2")" >"$WORK/rep.csv"
		python3 "$FIDELITY" "$WORK/rec.csv" "$WORK/rep.csv" | awk -F'\t' -v rate="$rate" -v who="$replayer" '{
			printf "%-8s %-22s %8s %8s %9s %7s %9s %9s %9s\n", rate, who, $1, $2, $3, $4, $5, $6, $7 }'
	done
done
echo
echo "== the afap trace replayed by fio from its iolog (st-format convert --to fio-iolog)"
"$BUILD/st-format" convert "$WORK/afap.sttrace" --to fio-iolog -o "$WORK/afap.iolog" ||
	die "convert --to fio-iolog failed"
fio --name=iolog --read_iolog="$WORK/afap.iolog" --replay_no_stall=1 --replay_redirect="$LOOP" \
	--direct=1 --ioengine=io_uring --iodepth=32 --output-format=json --output="$WORK/iolog.json" ||
	die "fio --read_iolog failed"
s=$(replay_iops "$WORK/afap.json")
f=$(fio_iops "$WORK/iolog.json")
printf 'fio --read_iolog (no stall, QD 32): %.0f IOPS, %s reads; st-replay afap (last round): %.0f IOPS, %s I/Os; ratio %.3f\n' \
	"$f" "$(jq '.jobs[0].read.total_ios' "$WORK/iolog.json")" "$s" "$(jq .completed "$WORK/afap.json")" \
	"$(awk -v s="$s" -v f="$f" 'BEGIN { print s / f }')"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
