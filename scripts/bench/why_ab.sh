#!/usr/bin/env bash
# why_ab.sh - the why events' cost in several builds or event selections side
# by side: fio psync 4k direct random reads on a loop device over /dev/shm,
# recorded by each CONFIG in turn, ROUNDS times. A CONFIG is
# [LABEL=]BUILD_DIR[:EVENTS] (st-record -e EVENTS -d LOOP; EVENTS defaults
# to all; LABEL, the CONFIG itself by default, names its lines).
# Per run: the why programs' runs and run time per fio I/O (sched_switch,
# sched_wakeup, contention_*, balance_dirty_pages, mm_*, any probe named
# why_*; BPF statistics on, as in overhead.sh), the sched records per I/O in
# the file, all programs' runs and ns per I/O, the ns per run of the three
# programs every psync I/O runs besides the block issue (the data call's
# entry and exit, the completion: where the why events add work to probes
# that already run), st-record's own CPU and the bytes recorded per I/O (raw,
# and stored after zstd). Then each CONFIG's medians. Other disks' requests
# do not move the why columns.
#
# Usage: scripts/bench/why_ab.sh ROUNDS CONFIG...   (as root, after `make`)
#   BENCH_SECONDS=4  fio's time per run
set -u
cd "$(dirname "$0")/../.."
ROUNDS=${1:?usage: why_ab.sh ROUNDS [LABEL=]BUILD_DIR[:EVENTS]...}
shift
[ $# -gt 0 ] || { echo "why_ab.sh: no build directory" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "why_ab.sh: run as root" >&2; exit 1; }
# label CONFIG, build CONFIG, events CONFIG: its parts
label() { [[ $1 == *=* ]] && echo "${1%%=*}" || echo "$1"; }
build() { local b=${1#*=}; echo "${b%%:*}"; }
events() { local e=${1#*=}; [[ $e == *:* ]] && echo "${e#*:}" || echo all; }
for c in "$@"; do
	[ -x "$(build "$c")/st-record" ] || { echo "why_ab.sh: no $(build "$c")/st-record" >&2; exit 1; }
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
trap 'exit 130' INT TERM
truncate -s 1G "$IMG"
LOOP=$(losetup --find --show "$IMG")
scripts/bench/bpf-stats-on >"$WORK/stats" &
STATS=$!
for ((i = 0; i < 100; i++)); do grep -qs . "$WORK/stats" && break; sleep 0.05; done
grep -qx on "$WORK/stats" || { echo "why_ab.sh: BPF statistics: $(cat "$WORK/stats")" >&2; exit 1; }

# CPU time of process $1's threads so far, in ns
cpu_ns() {
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.0f\n", s }'
}

echo "why_ab.sh: fio psync 4k randread direct on $LOOP, ${BENCH_SECONDS:-4} s per run; load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-16s %7s %6s %6s %6s %6s %6s %6s %6s %6s %6s %6s %6s\n' config "I/Os" "why/IO" "why ns" "sched" \
	"runs" "BPF ns" "enter" "exit" "compl" "rec ns" "raw B" "zst B"
for ((r = 0; r < ROUNDS; r++)); do
	for c in "$@"; do
		"$(build "$c")/st-record" -o "$WORK/r.sttrace" -e "$(events "$c")" -d "$LOOP" 2>"$WORK/log" &
		TRACER=$!
		for ((i = 0; i < 200; i++)); do grep -q "recording" "$WORK/log" && break; sleep 0.05; done
		cpu0=$(cpu_ns "$TRACER")
		fio --name=why_ab --filename="$LOOP" --direct=1 --ioengine=psync --rw=randread --bs=4k \
			--time_based --runtime="${BENCH_SECONDS:-4}" --randrepeat=0 --output-format=json \
			--output="$WORK/fio.json" >/dev/null
		cpu=$(($(cpu_ns "$TRACER") - cpu0))
		kill -INT "$TRACER"
		wait "$TRACER"
		TRACER=""
		ios=$(jq '.jobs[0].read.total_ios' "$WORK/fio.json")
		recs=$("$FORMAT" cat "$WORK/r.sttrace" | awk '$2 == "sched_switch" || $2 == "sched_wakeup" { n++ } END { print n + 0 }')
		"$FORMAT" info "$WORK/r.sttrace" | awk -v c="$(label "$c")" -v ios="$ios" -v recs="$recs" -v cpu="$cpu" '
			function ns_run(p) { return runs[p] ? ns[p] / runs[p] : 0 }
			$1 == "bytes" { raw = $3; stored = $5 }
			$1 ~ /^probe\./ { split($3, kv, /[=;]/); p = substr($1, 7); runs[p] = kv[2]; ns[p] = kv[4]
				ar += kv[2]; an += kv[4] }
			$1 ~ /^probe\.(sched_switch|sched_wakeup|contention_|balance_dirty_pages|mm_|why_)/ {
				wr += kv[2]; wn += kv[4] }
			END { printf "%-16s %7d %6.2f %6.0f %6.2f %6.2f %6.0f %6.0f %6.0f %6.0f %6.0f %6.0f %6.1f\n",
				c, ios, wr / ios, wn / ios, recs / ios, ar / ios, an / ios, ns_run("sys_enter_pread64"),
				ns_run("sys_exit_pread64"),
				ns_run("block_rq_complete_compact") + ns_run("block_rq_complete"), cpu / ios,
				raw / ios, stored / ios }' |
			tee -a "$WORK/lines"
		rm -f "$WORK/r.sttrace"
	done
done
echo "(why/IO, why ns: the why programs' runs and ns per I/O; sched: sched records per I/O; runs, BPF ns:"
echo " all programs' per I/O; enter, exit, compl: ns per run of sys_enter_pread64, sys_exit_pread64 and the"
echo " completion; rec ns: st-record's CPU per I/O while fio ran; raw B, zst B: bytes recorded per I/O)"
echo "medians:"
for c in "$@"; do
	c=$(label "$c")
	awk -v c="$c" '$1 == c' "$WORK/lines" | awk -v c="$c" '
		{ for (i = 2; i <= NF; i++) v[i, NR] = $i }
		END { printf "%-16s", c
			for (i = 2; i <= 13; i++) {
				for (j = 1; j <= NR; j++) s[j] = v[i, j]
				for (j = 2; j <= NR; j++) for (k = j; k > 1 && s[k - 1] > s[k]; k--) { t = s[k]; s[k] = s[k - 1]; s[k - 1] = t }
				m = NR % 2 ? s[(NR + 1) / 2] : (s[NR / 2] + s[NR / 2 + 1]) / 2
				printf i == 2 ? " %7d" : i == 13 ? " %6.1f" : (i == 3 || i == 5 || i == 6) ? " %6.2f" : " %6.0f", m
			}
			print "" }'
done
