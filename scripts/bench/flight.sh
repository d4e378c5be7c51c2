#!/usr/bin/env bash
# flight.sh - what st-record's flight recorder costs, per event, side by side
# with writing a file: `-o FILE` (the reference), `--ring` (the same
# compression, no disk writes) and `--ring --trigger 'D2C>1s'` (the trigger
# follows every request and never fires). The recorder's CPU seconds per
# million events come from its own summary line (getrusage), so the host's
# drifting IOPS do not enter the ratio. One fio run (4k random reads, psync,
# flat out, on a loop device over /dev/shm) serves every configuration; the
# configurations take turns, ROUNDS times.
#
# Usage: scripts/bench/flight.sh     (as root, after `make`)
#   BENCH_ROUNDS=3  turns per configuration   BENCH_SECONDS=5  seconds per recording
set -u
cd "$(dirname "$0")/../.."
BUILD=${ST_BUILD:-$PWD/build}
ROUNDS=${BENCH_ROUNDS:-3}
SECONDS_EACH=${BENCH_SECONDS:-5}

die() { echo "flight.sh: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "run as root (BPF and loop devices)"
[ -x "$BUILD/st-record" ] || die "$BUILD/st-record not built (make)"
command -v fio >/dev/null || die "fio not installed (make deps)"

dir=$(mktemp -d /var/tmp/sttrace-flight.XXXXXX)
img=$(mktemp /dev/shm/sttrace-flight.XXXXXX)
dev="" fio_pid=""
cleanup() {
	[ -n "$fio_pid" ] && kill "$fio_pid" 2>/dev/null && wait "$fio_pid" 2>/dev/null
	[ -n "$dev" ] && losetup -d "$dev"
	rm -rf "$dir" "$img"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
truncate -s 256M "$img"
dev=$(losetup --find --show "$img") || die "no loop device"
fio --name=flight --filename="$dev" --rw=randread --bs=4k --direct=1 --ioengine=psync \
	--time_based --runtime=3600 >/dev/null 2>&1 &
fio_pid=$!

declare -A args=(
	[file]=""
	[ring]="--ring 64M"
	[trigger]="--ring 64M --trigger D2C>1s"
)
configs=(file ring trigger)
declare -A cpu events
for ((round = 1; round <= ROUNDS; round++)); do
	for c in "${configs[@]}"; do
		# shellcheck disable=SC2086
		"$BUILD/st-record" -o "$dir/$c.sttrace" -e block -d "$dev" -t "$SECONDS_EACH" ${args[$c]} \
			2>"$dir/$c.log" || die "$c: $(tail -1 "$dir/$c.log")"
		# "...: N events, ..., X s CPU, ..." from the summary line
		read -r n s <<<"$(sed -n 's/.*: \([0-9]*\) events, .* \([0-9.]*\) s CPU,.*/\1 \2/p' "$dir/$c.log")"
		events[$c]=$(( ${events[$c]:-0} + n ))
		cpu[$c]=$(awk -v a="${cpu[$c]:-0}" -v b="$s" 'BEGIN { print a + b }')
		rm -f "$dir/$c".*
	done
done
echo "flight.sh: $ROUNDS rounds of ${SECONDS_EACH} s per configuration, -e block, fio psync randread flat out ($(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg))"
printf '%-10s %12s %14s %10s\n' config events "CPU s/M ev" "vs file"
for c in "${configs[@]}"; do
	awk -v c="$c" -v n="${events[$c]}" -v s="${cpu[$c]}" -v f="${cpu[file]}" -v fn="${events[file]}" \
		'BEGIN { per = s / n * 1e6; ref = f / fn * 1e6; printf "%-10s %12d %14.3f %10.2f\n", c, n, per, per / ref }'
done
