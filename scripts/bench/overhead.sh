#!/usr/bin/env bash
# overhead.sh - what st-record costs the I/O it traces, measured side by side.
#
# fio 4k random reads, io_uring, iodepth 32, O_DIRECT, on a loop device over a
# file in /dev/shm. The machines this runs on are shared: their speed drifts
# by tens of percent within a minute, so separate runs with and without the
# tracer compare drift as much as overhead. Instead, one long fio run per
# configuration logs its IOPS every 250 ms while the tracer is started and
# stopped in turn (PHASE seconds on, PHASE seconds off). Each "on" window is
# compared with the "off" windows on either side of it; the table
# shows the median of those ratios and their spread. Windows leave out the
# tracer's start (BPF load) and stop (drain, fsync): only steady state counts.
# A budget is met when the 25th percentile of the ratios is at or above it,
# missed when the 75th is below it, and the verdict is "inconclusive" when they
# straddle it or the A/A control's p25..p75 spans more than 0.05 (on such a
# run a median on either side of a budget means nothing).
#
# Configurations: `none` (the tracer is `sleep`: the A/A control, whose
# spread is the noise floor of this machine right now), `bare` (bare-ring, the
# least a ring-buffer tracer of the four tracepoints block-all takes per I/O
# does), `empty` (bare-ring --empty: programs that do nothing at the two
# tracepoints of st-record's `block` preset, the floor any tracer of those
# events pays on this machine), st-record with the block, block-queue, block-all, dio and all
# presets, block at --qd 1 and 32 (default 4), and a bpftrace one-liner
# printing one line per block event, as the peer. Then the CPU cost per I/O
# of bare and each preset (see "CPU cost per I/O" below), on the loop device,
# the same with mq-deadline, and a zram disk.
# `generic` is st-record -e block:block_io_start,block:block_io_done: two
# tracepoints per I/O through the generic probe of tracepoints named at
# record time.
#
# Then the `why` events' cost (issue 24): CPU per I/O of `-e all` against
# `all-no-why` (block,dio,fsync,uring: all before them), fio psync and io_uring
# QD32, each with and without a busy neighbour process (a shell loop: its
# context switches run the scheduler's tracepoints); the why programs' own
# runs and run time per I/O in two more columns (they do not count other
# disks' requests, which the block probes' runs do). `all-no-svc` is `all`
# without its svc_run_delay record (a record per completion in a kernel
# thread): the record's share, against `all`.
#
# The `probes` table (not made by default) takes `block`, `all-no-why` and
# `all` apart on the loop device (issue 25): each program's runs per fio
# I/O and run time, and st-record's own CPU per I/O, then `all` against
# `block` (goal <= 2.5).
#
# Usage: scripts/bench/overhead.sh     (as root, after `make`)
#   BENCH_SECTIONS="ratio cost why"  the tables to make (default these three; or probes)
#   BENCH_CONFIGS="none block ..."  configurations    BENCH_CYCLES=10  on/off cycles each
#   BENCH_PHASE=2  seconds per window                 BENCH_OUT_DIR=/var/tmp  recordings
#   BENCH_COST_CONFIGS="bare block ..."  BENCH_COST_SECONDS=5  the CPU cost table
#   BENCH_WHY_ROUNDS=3  alternations of all-no-why, all and all-no-svc per why line
#   BENCH_WHY_BASE=DIR  another build (e.g. main's) whose st-record -e all
#     (config all@base) joins each alternation: before and after side by side
#   (a real disk: the write latency column is that device's)
set -u
cd "$(dirname "$0")/../.."
BUILD=${ST_BUILD:-$PWD/build}
PHASE=${BENCH_PHASE:-2}
CYCLES=${BENCH_CYCLES:-10}
OUT_DIR=${BENCH_OUT_DIR:-/var/tmp}

die() { echo "overhead.sh: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "run as root (BPF and loop devices)"
[ -x "$BUILD/st-record" ] || die "$BUILD/st-record not built (make)"
[ -x "$BUILD/bench/bare-ring" ] || die "$BUILD/bench/bare-ring not built (make)"
command -v fio >/dev/null || die "fio not installed (make deps)"

WORK=$(mktemp -d "$OUT_DIR/sttrace-bench.XXXXXX") || die "cannot create a directory in $OUT_DIR"
IMG=$(mktemp /dev/shm/sttrace-bench.XXXXXX)
LOOP=""
TRACER=""
FIO=""
cleanup() {
	[ -n "$TRACER" ] && kill -KILL "$TRACER" 2>/dev/null
	# fio forks its job: TERM makes the parent stop it, KILL would leave it running
	[ -n "$FIO" ] && kill -TERM "$FIO" 2>/dev/null && wait "$FIO" 2>/dev/null
	[ -n "${STATS:-}" ] && kill "$STATS" 2>/dev/null
	[ -n "${NEIGHBOUR:-}" ] && kill -KILL "$NEIGHBOUR" 2>/dev/null
	[ -n "${ZRAM_ID:-}" ] && echo "$ZRAM_ID" >/sys/class/zram-control/hot_remove
	[ -n "$LOOP" ] && losetup -d "$LOOP"
	rm -rf "$WORK" "$IMG"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
truncate -s 1G "$IMG"
LOOP=$(losetup --find --show "$IMG") || die "losetup failed"
BENCH_DEV=$LOOP	# the device fio and the tracer use

now_ms() { date +%s%3N; }

# fio_job SECONDS: the benchmark job's command line, in FIO_JOB (an array,
# not a function: a function in the background is a subshell, and signals
# for fio would reach that subshell instead)
# (FIO_ENGINE, FIO_QD: io_uring 32 unless set)
fio_job() {
	FIO_JOB=(fio --name=bench --filename="$BENCH_DEV" --direct=1 --ioengine="${FIO_ENGINE:-io_uring}"
		--iodepth="${FIO_QD:-32}" --rw=randread --bs=4k --time_based --runtime="$1" --randrepeat=0)
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

# `all` without svc_run_delay (nor block_bio_held: named, it brings a queue probe `all` has not)
ALL_NO_SVC=block,dio,fsync,uring,contention_begin,contention_end,balance_dirty_pages
ALL_NO_SVC+=,mm_vmscan_direct_reclaim_begin,mm_vmscan_direct_reclaim_end,mm_vmscan_memcg_reclaim_begin
ALL_NO_SVC+=,mm_vmscan_memcg_reclaim_end,mm_filemap_add_to_page_cache

# start_tracer CONFIG: runs it in the background ($TRACER), returns once attached
start_tracer() {
	local config=$1
	: >"$WORK/log"
	STOP_SIGNAL=INT
	case $config in
	none)
		STOP_SIGNAL=TERM	# a background job of a script ignores SIGINT
		sleep 3600 &
		TRACER=$!
		;;
	bare | empty)
		"$BUILD/bench/bare-ring" $([ "$config" = empty ] && echo --empty) 2>"$WORK/log" &
		TRACER=$!
		wait_for "$WORK/log" attached || die "bare-ring did not start: $(cat "$WORK/log")"
		;;
	bpftrace)
		bpftrace --unsafe -e 'BEGIN { system("echo attached >> '"$WORK/log"'"); }
			tracepoint:block:block_rq_issue, tracepoint:block:block_rq_complete {
				printf("%d %d %llu %u\n", tid, args->dev, args->sector, args->nr_sector); }' \
			>/dev/null 2>>"$WORK/log" &
		TRACER=$!
		wait_for "$WORK/log" attached || die "bpftrace did not start: $(cat "$WORK/log")"
		;;
	generic)
		# two tracepoints of each I/O through the generic probe (-e SUBSYS:NAME)
		"$BUILD/st-record" -o "$WORK/r.sttrace" -e block:block_io_start,block:block_io_done \
			-d "$LOOP" 2>"$WORK/log" &
		TRACER=$!
		wait_for "$WORK/log" "recording .* probes" || die "st-record did not start: $(cat "$WORK/log")"
		;;
	*)
		local preset=${config%%-qd*} qd=4 build=$BUILD
		[[ $config == *-qd* ]] && qd=${config##*-qd}
		[[ $preset == *@base ]] && preset=${preset%@base} build=$BENCH_WHY_BASE
		[ "$preset" = all-no-why ] && preset=block,dio,fsync,uring	# all without the why events
		[ "$preset" = all-no-svc ] && preset=$ALL_NO_SVC
		"$build/st-record" -o "$WORK/r.sttrace" -e "$preset" -d "$BENCH_DEV" --qd "$qd" 2>"$WORK/log" &
		TRACER=$!
		wait_for "$WORK/log" "recording .* probes" || die "st-record did not start: $(cat "$WORK/log")"
		;;
	esac
}

# stop_tracer: SIGINT and wait; st-record's summary line goes to $WORK/summaries
stop_tracer() {
	kill -"$STOP_SIGNAL" "$TRACER"
	wait "$TRACER" 2>/dev/null
	TRACER=""
	grep "events," "$WORK/log" | tail -1 >>"$WORK/summaries"
	# the probes' runs and run time over the recording (with BPF statistics on)
	[ -f "$WORK/r.sttrace" ] && "$BUILD/st-format" info "$WORK/r.sttrace" |
		awk '$1 ~ /^probe\./ { split($3, kv, /[=;]/); r += kv[2]; n += kv[4] }
			$1 ~ /^probe\.(sched_switch|sched_wakeup|why_task_exit|contention_|balance_dirty_pages|mm_vmscan_|mm_filemap_)/ {
				wr += kv[2]; wn += kv[4] }
			END { printf "%.0f %.0f %.0f %.0f\n", r, n, wr, wn }' >"$WORK/runs"
	[ -f "$WORK/r.sttrace" ] && "$BUILD/st-format" info "$WORK/r.sttrace" |
		awk '$1 ~ /^probe\./ { split($3, kv, /[=;]/); print substr($1, 7), kv[2], kv[4] }' >"$WORK/probes"
	rm -f "$WORK/r.sttrace"
}

# measure CONFIG: one fio run with the tracer toggled; writes the windows
# ("on|off START_MS END_MS") to $WORK/windows and fio's IOPS log to $WORK/fio_iops.1.log
measure() {
	local config=$1 t
	: >"$WORK/windows"
	: >"$WORK/summaries"
	rm -f "$WORK"/fio_iops.*.log
	fio_job $((2 * CYCLES * PHASE + 2 * PHASE + 30))
	"${FIO_JOB[@]}" --output=/dev/null --write_iops_log="$WORK/fio" --log_avg_msec=250 --log_unix_epoch=1 &
	FIO=$!
	sleep 2	# fio's start-up
	for ((c = 0; c <= CYCLES; c++)); do
		t=$(now_ms)
		sleep "$PHASE"
		echo "off $t $(now_ms)" >>"$WORK/windows"
		((c == CYCLES)) && break
		start_tracer "$config"
		t=$(now_ms)
		sleep "$PHASE"
		echo "on $t $(now_ms)" >>"$WORK/windows"
		stop_tracer
	done
	kill -INT "$FIO"
	wait "$FIO"
	FIO=""
}

# window_ratios: one line per "on" window: its IOPS over the mean of the two
# "off" windows around it, then those IOPS. A window's IOPS is the median of
# its 250 ms samples (a sample at time T covers T - 250 ms .. T): other load
# on the machine comes in bursts of a few seconds that a mean would follow.
window_ratios() {
	awk -F', *' '
		FNR == NR { split($0, w, " "); from[NR] = w[2]; to[NR] = w[3]; n = NR; next }
		{ for (i = 1; i <= n; i++) if ($1 - 250 >= from[i] && $1 <= to[i]) v[i, ++cnt[i]] = $2 }
		function median(i,   j, k, t) {
			for (j = 2; j <= cnt[i]; j++)
				for (k = j; k > 1 && v[i, k - 1] > v[i, k]; k--) { t = v[i, k]; v[i, k] = v[i, k - 1]; v[i, k - 1] = t }
			return cnt[i] % 2 ? v[i, (cnt[i] + 1) / 2] : (v[i, cnt[i] / 2] + v[i, cnt[i] / 2 + 1]) / 2
		}
		END {
			for (i = 1; i <= n; i++) m[i] = cnt[i] ? median(i) : 0
			for (i = 2; i < n; i += 2)
				if (m[i - 1] > 0 && m[i + 1] > 0 && m[i] > 0)
					printf "%.4f %.0f %.0f\n", m[i] / ((m[i - 1] + m[i + 1]) / 2), m[i], (m[i - 1] + m[i + 1]) / 2
		}' "$WORK/windows" "$WORK"/fio_iops.1.log
}

# quantile Q: of the numbers on stdin (nearest rank)
quantile() { sort -g | awk -v q="$1" '{ v[NR] = $1 } END { i = int(q * (NR - 1) + 0.5) + 1; print v[i] }'; }

# summary_sum REGEX [BACK]: the sum over the on-windows of the number BACK (1)
# words before the first word matching REGEX in st-record's summary lines
# ("1234 events," "0.52 s CPU,")
summary_sum() {
	awk -v re="$1" -v back="${2:-1}" '{ for (i = 2; i <= NF; i++) if ($i ~ re) { gsub(/[(,]/, "", $(i - back)); s += $(i - back); break } }
		END { print s + 0 }' "$WORK/summaries"
}

SECTIONS=" ${BENCH_SECTIONS:-ratio cost why} "
section() { [[ $SECTIONS == *" $1 "* ]]; }

if section ratio; then
	CONFIGS=(${BENCH_CONFIGS:-none empty bare block block-queue block-all dio all block-qd1 block-qd32 generic bpftrace})
	declare -A BUDGET=([block]=0.95 [dio]=0.90 [all]=0.90)
	echo "overhead.sh: fio randread 4k io_uring QD32 direct on $LOOP (1 GiB in /dev/shm); per configuration" \
		"$CYCLES cycles of ${PHASE} s with / ${PHASE} s without the tracer in one fio run; recordings in $OUT_DIR;" \
		"$(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
	echo
	printf '%-11s %7s %13s %9s %9s %6s %8s %10s %14s %s\n' config ratio "p25..p75" "IOPS off" events/s lost bytes/ev "CPU s/Mev" "write ms avg/max" budget
	for config in "${CONFIGS[@]}"; do
		measure "$config"
		window_ratios >"$WORK/ratios"
		[ -s "$WORK/ratios" ] || die "$config: no complete window in fio's IOPS log"
		ratio=$(cut -d' ' -f1 "$WORK/ratios" | quantile 0.5)
		base=$(cut -d' ' -f3 "$WORK/ratios" | quantile 0.5)
		eps="-" lost="-" bpe="-" cpu="-" wlat="-"
		if [ -s "$WORK/summaries" ]; then
			events=$(summary_sum '^events,$')
			secs=$(summary_sum '^s,$')	# the first "N s," is the duration
			lost=$(summary_sum '^lost,$')
			eps=$(awk -v e="$events" -v s="$secs" 'BEGIN { printf "%.0fk", s ? e / s / 1000 : 0 }')
			cpu=$(awk -v c="$(summary_sum '^CPU,?$' 2)" -v e="$events" 'BEGIN { printf "%.3f", e ? c / e * 1e6 : 0 }')
		fi
		if grep -q "bytes/event" "$WORK/summaries"; then	# bare-ring writes no file
			bpe=$(awk -v b="$(summary_sum '^bytes/event,$')" -v n="$(wc -l <"$WORK/summaries")" \
				'BEGIN { printf "%.1f", b / n }')
			wlat=$(sed -n 's/.*(avg \([0-9.]*\) ms, max \([0-9.]*\) ms).*/\1 \2/p' "$WORK/summaries" |
				awk '{ a += $1; if ($2 > m) m = $2 } END { printf "%.1f/%.0f", NR ? a / NR : 0, m }')
		fi
		p25=$(cut -d' ' -f1 "$WORK/ratios" | quantile 0.25)
		p75=$(cut -d' ' -f1 "$WORK/ratios" | quantile 0.75)
		spread=$(awk -v a="$p25" -v b="$p75" 'BEGIN { printf "%.3f..%.3f", a, b }')
		[ "$config" = none ] && NOISE=$(awk -v a="$p25" -v b="$p75" 'BEGIN { printf "%.3f", b - a }')
		verdict=""
		if [ -n "${BUDGET[$config]:-}" ]; then
			verdict=$(awk -v lo="$p25" -v hi="$p75" -v b="${BUDGET[$config]}" -v l="$lost" -v n="${NOISE:-}" -v max=0.05 '
				BEGIN { v = ">= " b ", lost 0: "
					if (l != 0) print v "MISSED (lost)"
					else if (n != "" && n > max) print v "inconclusive (A/A p25..p75 spans " n ")"
					else if (lo >= b) print v "met"
					else if (hi < b) print v "MISSED"
					else print v "inconclusive (p25..p75 straddles it)" }')
		fi
		printf '%-11s %7.3f %13s %9s %9s %6s %8s %10s %14s %s\n' "$config" "$ratio" "$spread" "$base" "$eps" \
			"$lost" "$bpe" "$cpu" "$wlat" "$verdict"
	done
fi

# ---- CPU cost per I/O, independent of the host's drifting IOPS ----------
# One fio run of COST_SECONDS per tracer and target (the loop device with
# scheduler none, the same with mq-deadline, a zram disk: bio-based, no
# requests) with the kernel's BPF run-time statistics on
# (scripts/bench/bpf-stats-on; they add a little to every run). Per fio I/O:
# the tracer's probe runs and their run time (st-record's probe.* metadata,
# bare-ring's summary), and its own CPU time while fio ran (the sum of its
# threads' /proc schedstat run time: steady state, without the start, the
# detach and the last chunks, which a run this short would be dominated by).
# The probes also
# run for other users' I/O: "other req" is what the other disks completed
# meanwhile (/proc/diskstats), which adds to runs and run time.

# requests completed so far by every whole disk but $1, summed
other_requests() {
	local parts
	parts=$(for p in /sys/class/block/*/partition; do [ -e "$p" ] && basename "$(dirname "$p")"; done)
	awk -v parts="$parts" -v skip="${1##*/}" 'BEGIN { n = split(parts, p, "\n"); for (i = 1; i <= n; i++) part[p[i]] = 1 }
		!($3 in part) && $3 != skip { s += $4 + $8 + $15 + $19 } END { printf "%.0f\n", s }' /proc/diskstats
}

# CPU time of process $1's threads so far, in ns
cpu_ns() {
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.0f\n", s }'
}

# cost TARGET CONFIG LABEL: one line of the cost table
cost() {
	local target=$1 config=$2 before ios runs ns cpu cpu0 why_runs=0 why_ns=0
	BENCH_DEV=$target
	: >"$WORK/summaries"
	before=$(other_requests "$target")
	start_tracer "$config"
	fio_job "$COST_SECONDS"
	cpu0=$(cpu_ns "$TRACER")
	"${FIO_JOB[@]}" --output-format=json --output="$WORK/fio.json"
	cpu=$(($(cpu_ns "$TRACER") - cpu0))
	stop_tracer
	ios=$(jq '.jobs[0].read.total_ios' "$WORK/fio.json")
	if [ "$config" = bare ] || [ "$config" = empty ]; then
		runs=$(summary_sum '^probe$' 1) ns=$(summary_sum '^ns$' 1)
	else
		read -r runs ns why_runs why_ns <"$WORK/runs"
	fi
	awk -v t="$3" -v c="$config" -v i="$ios" -v r="$runs" -v n="$ns" -v cpu="$cpu" \
		-v wr="$why_runs" -v wn="$why_ns" -v why="${WHY_COLUMNS:-}" \
		-v o="$(($(other_requests "$target") - before))" -v lines="$WORK/cost_lines" 'BEGIN {
		line = sprintf("%-14s %-11s %8d %8d %9.2f %9.0f %9.0f %9.0f", t, c, i, o, r / i, n / i,
			cpu / i, n / i + cpu / i)
		if (why)
			line = line sprintf(" %9.2f %9.0f", wr / i, wn / i)
		print line; print line >>lines }'
	BENCH_DEV=$LOOP
}

COST_SECONDS=${BENCH_COST_SECONDS:-5}
COST_CONFIGS=(${BENCH_COST_CONFIGS:-empty bare block block-queue block-all dio all})
"$(dirname "$0")/bpf-stats-on" >"$WORK/stats" &
STATS=$!
for ((i = 0; i < 100; i++)); do grep -qs . "$WORK/stats" && break; sleep 0.05; done
grep -qx on "$WORK/stats" || die "BPF statistics: $(cat "$WORK/stats")"
if section cost; then
	ZRAM_ID=$(cat /sys/class/zram-control/hot_add 2>/dev/null) && echo 1G >"/sys/block/zram$ZRAM_ID/disksize" ||
		ZRAM_ID=""
	echo
	echo "CPU cost per I/O: fio randread 4k io_uring QD32 direct, ${COST_SECONDS} s per line, BPF statistics on;" \
		"load $(cut -d' ' -f1-3 /proc/loadavg)"
	printf '%-14s %-11s %8s %8s %9s %9s %9s %9s\n' target config "fio I/Os" "other req" "runs/IO" \
		"BPF ns/IO" "rec ns/IO" "CPU ns/IO"
	for target in loop loop-deadline zram; do
		case $target in
		loop) dev=$LOOP; echo none >"/sys/block/${LOOP##*/}/queue/scheduler" ;;
		loop-deadline) dev=$LOOP; echo mq-deadline >"/sys/block/${LOOP##*/}/queue/scheduler" ;;
		zram) [ -n "$ZRAM_ID" ] || { echo "zram: no zram device could be added"; continue; }
			dev=/dev/zram$ZRAM_ID ;;
		esac
		for config in "${COST_CONFIGS[@]}"; do cost "$dev" "$config" "$target"; done
	done
	echo none >"/sys/block/${LOOP##*/}/queue/scheduler"
	echo "(runs/IO, BPF ns/IO: the tracer's probe runs and run time per fio I/O; rec ns/IO: its own CPU"
	echo " time per fio I/O while fio ran; CPU ns/IO: both; other req: requests of other disks meanwhile,"
	echo " whose probe runs count too)"
	echo
fi

# ---- where each preset's nanoseconds go (issue 25) -----------------------
if section probes; then
	echo
	echo "Per program: fio randread 4k io_uring QD32 direct on the loop device, ${COST_SECONDS} s per preset," \
		"BPF statistics on; load $(cut -d' ' -f1-3 /proc/loadavg)"
	printf '%-14s %-11s %8s %8s %9s %9s %9s %9s\n' target config "fio I/Os" "other req" "runs/IO" \
		"BPF ns/IO" "rec ns/IO" "CPU ns/IO"
	: >"$WORK/cost_lines"
	: >"$WORK/probe_lines"
	for config in ${BENCH_PROBE_CONFIGS:-block all-no-why all}; do
		cost "$LOOP" "$config" loop
		awk -v c="$config" -v ios="$(tail -1 "$WORK/cost_lines" | awk '{ print $3 }')" \
			'$2 >= ios / 100 { printf "  %-11s %-34s %5.2f runs/IO %5.0f ns/run %6.0f ns/IO\n", c, $1, $2 / ios, $3 / $2, $3 / ios }' \
			"$WORK/probes" >>"$WORK/probe_lines"
	done
	echo "(programs that ran at least once per 100 fio I/Os:)"
	cat "$WORK/probe_lines"
	awk '$2 == "block" { b = $8 } $2 == "all" { a = $8 } $2 == "all-no-why" { n = $8 }
		END { if (b && a) printf "all / block: %.2f (goal <= 2.5)", a / b
			if (b && n) printf "; all-no-why / block: %.2f", n / b
			print "" }' "$WORK/cost_lines"
fi

# ---- the why events' cost (issue 24) -------------------------------------
# CPU per I/O (BPF and recorder, as above) of all against all-no-why, in
# turn BENCH_WHY_ROUNDS times, each fio job with and without a busy
# neighbour; the ratio of the medians. Budget: at most 1.3.
NEIGHBOUR=""
neighbour_start() {
	sh -c 'while :; do :; done' &
	NEIGHBOUR=$!
}
neighbour_stop() {
	kill -KILL "$NEIGHBOUR"
	wait "$NEIGHBOUR" 2>/dev/null
	NEIGHBOUR=""
}
WHY_CONFIGS=(all-no-why all all-no-svc)
if [ -n "${BENCH_WHY_BASE:-}" ]; then
	[ -x "$BENCH_WHY_BASE/st-record" ] || die "BENCH_WHY_BASE: no $BENCH_WHY_BASE/st-record"
	WHY_CONFIGS+=(all@base)
fi
if section why; then
	echo
	echo "The why events: CPU per I/O of all against all-no-why, fio randread 4k direct on the loop device," \
		"${COST_SECONDS} s per line, BPF statistics on; load $(cut -d' ' -f1-3 /proc/loadavg)"
	printf '%-14s %-11s %8s %8s %9s %9s %9s %9s %9s %9s\n' fio config "fio I/Os" "other req" "runs/IO" \
		"BPF ns/IO" "rec ns/IO" "CPU ns/IO" "why runs" "why ns"
	echo none >"/sys/block/${LOOP##*/}/queue/scheduler"
	: >"$WORK/why_ratios"
	WHY_COLUMNS=1
	for job in psync:1 io_uring:32; do
		FIO_ENGINE=${job%%:*} FIO_QD=${job##*:}
		for neighbour in "" busy; do
			label=$FIO_ENGINE${neighbour:++busy}
			[ -n "$neighbour" ] && neighbour_start
			: >"$WORK/cost_lines"
			for ((r = 0; r < ${BENCH_WHY_ROUNDS:-3}; r++)); do
				for config in "${WHY_CONFIGS[@]}"; do
					cost "$LOOP" "$config" "$label"
				done
			done
			[ -n "$neighbour" ] && neighbour_stop
			for config in "${WHY_CONFIGS[@]}"; do
				awk -v c="$config" '$2 == c { print $8 }' "$WORK/cost_lines" | quantile 0.5
			done | paste -sd' ' | sed "s/^/$label /" >>"$WORK/why_ratios"
		done
	done
	unset FIO_ENGINE FIO_QD WHY_COLUMNS
	echo "(why runs, why ns: the why programs' runs and run time per fio I/O, every switch of the machine included)"
	echo
	echo "median CPU ns/IO of each config and its ratio to all-no-why's (all's budget <= 1.3);" \
		"all-no-svc / all: the svc_run_delay record's saving"
	awk -v configs="${WHY_CONFIGS[*]}" 'BEGIN { n = split(configs, c, " "); printf "  %-14s %10s", "", c[1]
			for (i = 2; i <= n; i++) printf " %-19s", c[i]; printf " %13s\n", "no-svc / all" }
		{ printf "  %-14s %10d", $1, $2
			for (i = 2; i <= n; i++) {
				r = $(i + 1) / $2
				printf " %6d %5.2f %-6s", $(i + 1), r, c[i] ~ /^all(@base)?$/ ? (r <= 1.3 ? "met" : "MISSED") : ""
			}
			printf " %13.2f\n", $4 / $3 }' "$WORK/why_ratios"
fi

if section ratio; then
	echo "(ratio: IOPS with the tracer / without, median over the on-windows, each against the off-windows"
	echo " around it, and the 25th..75th percentile of those ratios; IOPS off: median of the off-window means;"
	echo " events/s, lost, bytes/event, CPU s per million events and write latency from st-record's summaries,"
	echo " summed or averaged over the on-windows; CPU counts from attach to exit, not the BPF load)"
fi
