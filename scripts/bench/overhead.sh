#!/usr/bin/env bash
# overhead.sh - what st-record costs the I/O it traces, measured side by side.
#
# fio 4k random reads, io_uring, iodepth 32, O_DIRECT, on a loop device over a
# file in /dev/shm. Each configuration runs right next to a run without any
# tracer (alternating the order every round, so drift cancels), and its figure
# is IOPS with / IOPS without of that pair; the table shows the median over
# the rounds. Configurations: st-record with the block, dio and all presets,
# block at --qd 1 and 32 (default 4), and a bpftrace one-liner printing one
# line per block event, as the peer.
#
# Usage: scripts/bench/overhead.sh     (as root, after `make`)
#   BENCH_SECONDS=10  seconds per fio run      BENCH_ROUNDS=3  pairs per configuration
#   BENCH_OUT_DIR=/var/tmp  where the recordings go (a real disk: the write
#   latency column is that device's)
set -u
cd "$(dirname "$0")/../.."
BUILD=${ST_BUILD:-$PWD/build}
SECS=${BENCH_SECONDS:-10}
ROUNDS=${BENCH_ROUNDS:-3}
OUT_DIR=${BENCH_OUT_DIR:-/var/tmp}

die() { echo "overhead.sh: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "run as root (BPF and loop devices)"
[ -x "$BUILD/st-record" ] || die "$BUILD/st-record not built (make)"
command -v fio >/dev/null || die "fio not installed (make deps)"

WORK=$(mktemp -d "$OUT_DIR/sttrace-bench.XXXXXX") || die "cannot create a directory in $OUT_DIR"
IMG=$(mktemp /dev/shm/sttrace-bench.XXXXXX)
LOOP=""
TRACER=""
cleanup() {
	[ -n "$TRACER" ] && kill -KILL "$TRACER" 2>/dev/null
	sysctl -q kernel.bpf_stats_enabled=0
	[ -n "$LOOP" ] && losetup -d "$LOOP"
	rm -rf "$WORK" "$IMG"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
truncate -s 1G "$IMG"
LOOP=$(losetup --find --show "$IMG") || die "losetup failed"

# fio's read IOPS (terse v3 field 8)
fio_iops() {
	fio --name=bench --filename="$LOOP" --direct=1 --ioengine=io_uring --iodepth=32 \
		--rw=randread --bs=4k --time_based --runtime="$SECS" --randrepeat=0 \
		--output-format=terse --terse-version=3 | cut -d';' -f8
}

# wait_for FILE PATTERN: until the tracer says it is attached (or 60 s)
wait_for() {
	for ((i = 0; i < 1200; i++)); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		kill -0 "$TRACER" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# traced CONFIG: one fio run under CONFIG's tracer; prints IOPS, leaves the
# recorder's summary line in $WORK/summary
traced() {
	local config=$1 iops
	: >"$WORK/log"
	case $config in
	bpftrace)
		bpftrace --unsafe -e 'BEGIN { system("echo attached >> '"$WORK/log"'"); }
			tracepoint:block:block_rq_issue, tracepoint:block:block_rq_complete {
				printf("%d %d %llu %u\n", tid, args->dev, args->sector, args->nr_sector); }' \
			>/dev/null 2>>"$WORK/log" &
		TRACER=$!
		wait_for "$WORK/log" attached || die "bpftrace did not start: $(cat "$WORK/log")"
		;;
	*)
		local preset=${config%%-qd*} qd=4
		[[ $config == *-qd* ]] && qd=${config##*-qd}
		"$BUILD/st-record" -o "$WORK/r.sttrace" -e "$preset" -d "$LOOP" --qd "$qd" 2>"$WORK/log" &
		TRACER=$!
		wait_for "$WORK/log" "recording .* probes" || die "st-record did not start: $(cat "$WORK/log")"
		;;
	esac
	iops=$(fio_iops)
	kill -INT "$TRACER"
	wait "$TRACER"
	TRACER=""
	grep "events," "$WORK/log" | tail -1 >"$WORK/summary"
	echo "$iops"
}

# summary_field REGEX [BACK]: the number BACK (1) words before the first word
# matching REGEX in st-record's summary line ("1234 events," "0.52 s CPU,")
summary_field() {
	awk -v re="$1" -v back="${2:-1}" '{ for (i = 2; i <= NF; i++) if ($i ~ re) { print $(i - back); exit } }' \
		"$WORK/summary" | tr -d '(,'
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

CONFIGS=(${BENCH_CONFIGS:-block dio all block-qd1 block-qd32 bpftrace})
: >"$WORK/bases"
declare -A BUDGET=([block]=0.95 [dio]=0.90 [all]=0.90)
echo "overhead.sh: fio randread 4k io_uring QD32 direct on $LOOP (1 GiB in /dev/shm), $SECS s runs," \
	"$ROUNDS rounds, recordings in $OUT_DIR, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for config in "${CONFIGS[@]}"; do
	: >"$WORK/$config.ratios"
	: >"$WORK/$config.rows"
	for ((round = 0; round < ROUNDS; round++)); do
		if ((round % 2)); then
			with=$(traced "$config")
			base=$(fio_iops)
		else
			base=$(fio_iops)
			with=$(traced "$config")
		fi
		awk -v a="$with" -v b="$base" 'BEGIN { printf "%.4f\n", a / b }' >>"$WORK/$config.ratios"
		echo "$base" >>"$WORK/bases"
		if [ "$config" != bpftrace ]; then
			events=$(summary_field '^events,$')
			secs=$(summary_field '^s,$')	# the first "N s," is the duration
			echo "$with $events $(summary_field '^lost,$') $(summary_field '^bytes/event,$')" \
				"$(awk -v c="$(summary_field '^CPU,$' 2)" -v e="$events" 'BEGIN { printf "%.3f", e ? c / e * 1e6 : 0 }')" \
				"$(awk -v e="$events" -v s="$secs" 'BEGIN { printf "%.0f", s ? e / s : 0 }')" \
				"$(sed -n 's/.*(avg \([0-9.]*\) ms, max \([0-9.]*\) ms).*/\1 \2/p' "$WORK/summary")" \
				>>"$WORK/$config.rows"
		else
			echo "$with - - - - - - -" >>"$WORK/$config.rows"
		fi
		echo "  $config round $((round + 1)): $with / $base IOPS = $(tail -1 "$WORK/$config.ratios")" >&2
	done
done

echo
printf '%-11s %7s %15s %9s %9s %6s %8s %12s %18s %s\n' config ratio "ratio min..max" IOPS events/s lost bytes/ev "CPU s/Mev" "write ms avg/max" budget
for config in "${CONFIGS[@]}"; do
	ratio=$(median <"$WORK/$config.ratios")
	range=$(sort -g "$WORK/$config.ratios" | sed -n '1p;$p' | paste -sd' ' | awk '{ printf "%.3f..%.3f", $1, $2 }')
	# per-run figures of the median run (the recorder's own counters)
	row=$(sort -g -k1 "$WORK/$config.rows" | sed -n "$(( (ROUNDS + 1) / 2 ))p")
	read -r iops events lost bpe cpu eps wavg wmax <<<"$row"
	lost_all=$(awk '$3 != "-" { s += $3 } END { print s + 0 }' "$WORK/$config.rows")
	budget=${BUDGET[$config]:-}
	verdict=""
	if [ -n "$budget" ]; then
		verdict=$(awk -v r="$ratio" -v b="$budget" -v l="$lost_all" \
			'BEGIN { print (r >= b && l == 0) ? ">= " b ", lost 0: met" : ">= " b ", lost 0: MISSED" }')
	fi
	[ "$config" = bpftrace ] && lost_all="-"
	printf '%-11s %7.3f %15s %9s %9s %6s %8s %12s %18s %s\n' "$config" "$ratio" "$range" "$iops" \
		"$eps" "$lost_all" "$bpe" "$cpu" "$wavg/$wmax" "$verdict"
done
# Probe cost, independent of how busy the machine is: one more run per preset
# with the kernel's BPF run-time statistics on (they add a little to each run).
probe_cost() {
	local preset=$1 out first
	# program ids only grow: the ones above today's highest are st-record's
	first=$(bpftool prog show | awk -F: '/^[0-9]+:/ { id = $1 } END { print id + 1 }')
	sysctl -q kernel.bpf_stats_enabled=1
	"$BUILD/st-record" -o "$WORK/c.sttrace" -e "$preset" -d "$LOOP" 2>"$WORK/log" &
	TRACER=$!
	wait_for "$WORK/log" "recording .* probes" || die "st-record did not start: $(cat "$WORK/log")"
	fio_iops >/dev/null
	# "ID: type name NAME ... run_time_ns T run_cnt N"
	out=$(bpftool prog show | awk -v first="$first" '
		/^[0-9]+:/ && $1 + 0 >= first { name = ""; t = n = 0
			for (i = 1; i < NF; i++) { if ($i == "name") name = $(i + 1)
				if ($i == "run_time_ns") t = $(i + 1); if ($i == "run_cnt") n = $(i + 1) }
			tt += t; nn += n; if (n > 1000) per = per sprintf(" %s %.0f", name, t / n) }
		END { printf "%.0f ns/event over %d events;%s", nn ? tt / nn : 0, nn, per }')
	kill -INT "$TRACER"
	wait "$TRACER"
	TRACER=""
	sysctl -q kernel.bpf_stats_enabled=0
	echo "  probe cost, $preset: $out"
}
echo
echo "BPF probe run time (kernel.bpf_stats_enabled, per program with > 1000 runs, ns/run):"
for preset in block dio all; do probe_cost "$preset"; done

# Other work on the machine moves the baseline; say so when the ratios cannot be trusted.
sort -g "$WORK/bases" | sed -n '1p;$p' | paste -sd' ' | awk '{
	printf "baseline (no tracer) IOPS over all runs: %d..%d", $1, $2
	if ($2 > 1.2 * $1) printf " -- NOISY: other load on this machine moved the baseline by %.0f%%, the ratios are not reliable", ($2 / $1 - 1) * 100
	printf "\n" }'
echo "(ratio: IOPS with the tracer / without, median of $ROUNDS side-by-side pairs; events/s, bytes/event,"
echo " CPU s per million events and write latency from st-record's summary of the median run;"
echo " CPU counts from attach to exit, not the BPF load; lost is summed over all runs)"
