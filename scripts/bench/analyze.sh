#!/usr/bin/env bash
# Analyzer benchmark, side by side in one run on the same files.
#
# Real recordings first: fio psync 4k randrw (70 % reads, 2 jobs) on a loop
# device over /dev/shm, recorded with `-e block` and `-e all` for
# BENCH_REAL_SECONDS (default 4), and `-e all` for ten times as long (the
# memory check), each with fio as st-record's command (`-- fio`: a task
# filter); then `-e block` and `-e all` again system-wide, st-record started
# alone as on a production host (no task filter: no block_bio_queue
# records, so the stamped issues stand for them and are read through the
# reorder window); or the recordings given as FILE arguments. For each:
#   - st-analyze's summary CPU against `st-format verify` of the same file
#     (every chunk decoded and checked; goal: summary <= 2x verify)
#   - --quantile 99.95 and --heatmap lat against the summary (goal <= 1.3x)
#   - peak RSS, and on the 10x longer recording its ratio (goal < 1.5)
#   - wall time with --threads 1 against --threads 2 (a thread decoding the
#     chunks ahead beside the one that does the rest; goal >= 1.6x on 2
#     cores): BENCH_THREAD_ROUNDS (default 5) runs of each, alternated, the
#     medians, with the load average over them; BENCH_BASE=DIR alternates
#     another build's st-analyze with this one's, a line each
#     (BENCH_SECTIONS=threads: only this, on the FILEs given)
# Then a synthetic trace of about EVENTS events (st-format synth):
#   - summary throughput: events per CPU-second (of both threads: the one
#     decoding ahead and the pass), next to the library alone on the same file: the
#     time-ordered cursor (st-format cat of a type the trace lacks iterates
#     every event and prints none) and chunk decoding (st-format verify)
#   - peak RSS of the summary on a trace and on a 10x larger one (goal < 1.5x)
#   - --quantile 99.95 and --heatmap lat relative to the summary (goal < 2x)
#   - two recordings analyzed together (one thread each) against the same two
#     analyzed one after the other with --threads 1 (one thread each too:
#     alone, a file's chunks would be decoded by a second thread): wall-clock
#     throughput ratio (goal >= 1.7 on 2 cores), runs alternated so both see
#     the same load
# With BENCH_CALLGRIND=1, each real recording of at most 3 M events is also
# counted in instructions (valgrind --tool=callgrind), which the load of a
# shared machine does not move: the summary against verify, and the decoding
# thread's share, which bounds the wall-time gain of --threads 2.
# Traces are kept in $BENCH_DIR (default /tmp/sttrace-bench) for re-runs.
#
# usage: scripts/bench/analyze.sh [EVENTS] [FILE.sttrace...]
#   (EVENTS default 50000000; without FILEs the real recordings are made
#   here, which needs root and BPF; BENCH_REAL=0 skips them)
set -eu
cd "$(dirname "$0")/../.."
B=${ST_BUILD:-$PWD/build}
EVENTS=${1:-50000000}
[ $# -gt 0 ] && shift
DIR=${BENCH_DIR:-/tmp/sttrace-bench}
EVENTS_PER_IO=8.57	# st-format synth's mix (171364 events for 20000 I/Os)
mkdir -p "$DIR"
export PATH="$B:$PATH"

events_of() { "$B/st-format" info "$1" | awk '$1 == "events" { print $2; exit }'; }

# measure CMD...: prints "cpu_seconds wall_seconds max_rss_kb" of one run.
# The times are bash's, to the millisecond: GNU time prints CPU seconds to
# the hundredth, too coarse for a 4 s recording's 0.06 s (it gave 3.00x
# verify where perf stat's task-clock gave 2.13x); GNU time gives the RSS.
measure() {
	local TIMEFORMAT='%3U %3S %3R'
	{ time /usr/bin/time -f '%M' -o "$DIR/rss.out" "$@" >/dev/null 2>&1; } 2>"$DIR/time.out"
	awk -v rss="$(cat "$DIR/rss.out")" '{ printf "%.3f %.3f %d\n", $1 + $2, $3, rss }' "$DIR/time.out"
}
# best CMD...: the run with the least CPU time of three (other load only adds).
best() {
	local i out best_out=""
	for i in 1 2 3; do
		out=$(measure "$@")
		if [ -z "$best_out" ] || awk -v a="${out%% *}" -v b="${best_out%% *}" 'BEGIN { exit !(a < b) }'; then
			best_out=$out
		fi
	done
	echo "$best_out"
}

# record PRESET SECONDS OUT [system]: fio on a fresh loop device, recorded
# by st-record: fio as its command, or with `system` st-record alone on the
# device while fio runs, stopped by SIGINT.
record() {
	(
		. tests/lib.sh
		st_loopdev dev 256
		fio=(fio --name=bench --filename="$dev" --direct=1 --rw=randrw --rwmixread=70
			--bs=4k --size=200M --time_based --runtime="$2" --numjobs=2
			--ioengine=psync --group_reporting --output=/dev/null)
		if [ "${4:-}" != system ]; then
			"$B/st-record" -o "$3" -e "$1" -d "$dev" -- "${fio[@]}" >/dev/null 2>&1
			exit
		fi
		. tests/record/common.sh
		rec_start "$3" "$3.log" -e "$1" -d "$dev" || exit 1
		"${fio[@]}" >/dev/null 2>&1
		rec_stop
	)
}

# real FILE: the summary against verify, the other reports against the summary.
real() {
	local sc sr vc qc hc
	read -r sc _ sr <<<"$(best "$B/st-analyze" "$1")"
	read -r vc _ _ <<<"$(best "$B/st-format" verify "$1")"
	read -r qc _ _ <<<"$(best "$B/st-analyze" --quantile 99.95 "$1")"
	read -r hc _ _ <<<"$(best "$B/st-analyze" --heatmap lat "$1")"
	awk -v f="$(basename "$1")" -v ev="$(events_of "$1")" -v sc="$sc" -v vc="$vc" -v qc="$qc" \
	    -v hc="$hc" -v sr="$sr" 'BEGIN {
		printf "%-22s %9d events  summary %.3f s CPU (%.2f M events/s) = %.2fx verify %.3f s (goal <= 2); --quantile %.2fx, --heatmap %.2fx the summary (goal <= 1.3); peak RSS %d KiB\n",
			f, ev, sc, ev / sc / 1e6, sc / vc, vc, qc / sc, hc / sc, sr }'
	echo "$sr" >"$1.rss"
	threads "$1"
	[ "${BENCH_CALLGRIND:-0}" = 1 ] && [ "$(events_of "$1")" -le 3000000 ] && counted "$1"
	return 0
}

# instructions OUT CMD...: the instructions CMD runs (callgrind, profile in OUT).
instructions() {
	local out=$1
	shift
	valgrind --tool=callgrind --callgrind-out-file="$out" "$@" 2>&1 >/dev/null |
		awk '/ I +refs:/ { gsub(",", "", $NF); print $NF }'
}

# counted FILE: the summary and verify in instructions; the decoding
# thread's share (cursor.c's decode_ahead and below) against the rest's
# bounds what a second CPU can gain.
counted() {
	local sum ver decoder
	sum=$(instructions "$DIR/callgrind.out" "$B/st-analyze" "$1")
	decoder=$(callgrind_annotate --inclusive=yes "$DIR/callgrind.out" 2>/dev/null |
		awk '/cursor\.c:decode_ahead / { gsub(",", "", $1); print $1; exit }')
	ver=$(instructions /dev/null "$B/st-format" verify "$1")
	awk -v f="$(basename "$1")" -v s="$sum" -v v="$ver" -v d="${decoder:-0}" 'BEGIN {
		m = d > s - d ? d : s - d
		printf "%-22s callgrind: summary %.1f M instructions = %.2fx verify %.1f M; decoding thread %.1f M (%.0f %%): two CPUs at most %.2fx\n",
			f, s / 1e6, s / v, v / 1e6, d / 1e6, 100 * d / s, s / m }'
}

# median N...: the middle value (the mean of the two middle ones).
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (v[int((NR + 1) / 2)] + v[int(NR / 2) + 1]) / 2 }'; }

# threads FILE: the summary's wall time read and correlated in one thread
# against --threads 2 (one thread decodes the chunks ahead, the other does
# the rest), alternated; the medians (goal: >= 1.6x faster on 2 cores), and of
# the CPU time. The host's speed drifts by tens of percent within minutes,
# so each round's two runs, back to back, give a ratio of their own: the
# median of those is the figure drift moves least. Other load on the
# machine takes CPUs from the threads, not from one: the load average says
# how much. With BENCH_BASE=DIR (another build's directory), that build's
# st-analyze runs too, alternated with this one in each round, a line each.
threads() {
	local i w c b w1 load0 builds=("$B")
	local -A wall cpu ratio
	[ -n "${BENCH_BASE:-}" ] && builds=("$BENCH_BASE" "$B")
	load0=$(cut -d' ' -f1 /proc/loadavg)
	for i in $(seq "${BENCH_THREAD_ROUNDS:-5}"); do
		for b in "${builds[@]}"; do
			read -r c w1 _ <<<"$(measure "$b/st-analyze" --threads 1 "$1")"
			wall[$b.1]+="$w1 " cpu[$b.1]+="$c "
			read -r c w _ <<<"$(measure "$b/st-analyze" --threads 2 "$1")"
			wall[$b.2]+="$w " cpu[$b.2]+="$c "
			ratio[$b]+="$(awk -v a="$w1" -v b="$w" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }') "
		done
	done
	for b in "${builds[@]}"; do
		# shellcheck disable=SC2086
		awk -v f="$(basename "$1")" -v one="$(median ${wall[$b.1]})" -v two="$(median ${wall[$b.2]})" \
		    -v c1="$(median ${cpu[$b.1]})" -v c2="$(median ${cpu[$b.2]})" -v build="$b" \
		    -v rr="$(median ${ratio[$b]})" -v allr="${ratio[$b]% }" \
		    -v all1="${wall[$b.1]% }" -v all2="${wall[$b.2]% }" -v l0="$load0" -v l1="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN {
			printf "%-22s one file on two CPUs: median %.3f s wall with --threads 1 (%s), %.3f s with 2 (%s): %.2fx; each round'"'"'s ratio %s, median %.2fx (goal >= 1.6); CPU %.2f s and %.2f s; load average %s -> %s; %s\n",
				f, one, all1, two, all2, one / two, allr, rr, c1, c2, l0, l1, build }'
	done
}

if [ "${BENCH_SECTIONS:-}" = threads ]; then
	for f in "$@"; do threads "$f"; done
	exit 0
fi

if [ $# -gt 0 ]; then
	echo "real recordings (given):"
	for f in "$@"; do real "$f"; done
elif [ "${BENCH_REAL:-1}" != 0 ]; then
	secs=${BENCH_REAL_SECONDS:-4}
	echo "real recordings (fio psync 4k randrw on a loop device, ${secs} s and $((10 * secs)) s; -system: st-record with no task filter):"
	for spec in block:$secs all:$secs all:$((10 * secs)) block:$secs:system all:$secs:system; do
		IFS=: read -r preset secs_of mode <<<"$spec"
		f="$DIR/real-$preset-${secs_of}s${mode:+-$mode}.sttrace"
		[ -s "$f" ] || record "$preset" "$secs_of" "$f" "$mode" ||
			{ echo "analyze.sh: recording $f failed (root and BPF needed; BENCH_REAL=0 skips)" >&2; exit 1; }
		real "$f"
	done
	awk -v a="$(cat "$DIR/real-all-${secs}s.sttrace.rss")" -v b="$(cat "$DIR/real-all-$((10 * secs))s.sttrace.rss")" \
		'BEGIN { printf "peak RSS of -e all: %d KiB, %d KiB for 10x as long: ratio %.2f (goal < 1.5)\n", a, b, b / a }'
fi
echo "synthetic:"

big_ios=$(awk -v e="$EVENTS" -v r="$EVENTS_PER_IO" 'BEGIN { printf "%d", e / r }')
small_ios=$((big_ios / 10))
for n in $small_ios $big_ios; do
	f="$DIR/synth-$n.sttrace"
	[ -s "$f" ] || { echo "generating $f ($n I/Os)..." >&2; "$B/st-format" synth -o "$f" --ios "$n" --seed 1 >&2; }
done
big="$DIR/synth-$big_ios.sttrace"
small="$DIR/synth-$small_ios.sttrace"
# The pair: two recordings (seeds 1 and 2) of a fifth of the events each.
pair_ios=$((big_ios / 5))
pair=()
for seed in 1 2; do
	f="$DIR/synth-$pair_ios-seed$seed.sttrace"
	[ -s "$f" ] || { echo "generating $f ($pair_ios I/Os)..." >&2; "$B/st-format" synth -o "$f" --ios "$pair_ios" --seed $seed >&2; }
	pair+=("$f")
done
ev=$(events_of "$big")
ev_small=$(events_of "$small")
read -r sum_cpu sum_wall sum_rss <<<"$(best "$B/st-analyze" "$big")"
read -r ver_cpu _ _ <<<"$(best "$B/st-format" verify "$big")"
read -r cur_cpu _ _ <<<"$(best "$B/st-format" cat -t sched_process_exit "$big")"
read -r _ _ small_rss <<<"$(best "$B/st-analyze" "$small")"
read -r q_cpu _ _ <<<"$(best "$B/st-analyze" --quantile 99.95 "$big")"
read -r h_cpu _ _ <<<"$(best "$B/st-analyze" --heatmap lat "$big")"
# The pair one after the other (two processes, a thread each) and together
# (one process, a thread per recording), alternated; the least wall time of
# three each.
pair_ev=$(($(events_of "${pair[0]}") + $(events_of "${pair[1]}")))
seq_wall="" seq_cpu="" par_wall="" par_cpu="" par_rss=""
least() { awk -v a="$1" -v b="${2:-1e9}" 'BEGIN { print a < b ? a : b }'; }
for i in 1 2 3; do
	read -r c w _ <<<"$(measure sh -c '"$0" --threads 1 "$1" >/dev/null && "$0" --threads 1 "$2"' "$B/st-analyze" "${pair[@]}")"
	seq_wall=$(least "$w" "$seq_wall") seq_cpu=$(least "$c" "$seq_cpu")
	read -r c w rss <<<"$(measure "$B/st-analyze" "${pair[@]}")"
	par_wall=$(least "$w" "$par_wall") par_cpu=$(least "$c" "$par_cpu") par_rss=$rss
done

awk -v ev="$ev" -v evs="$ev_small" -v sc="$sum_cpu" -v sw="$sum_wall" -v vc="$ver_cpu" -v cc="$cur_cpu" \
    -v rs="$small_rss" -v rb="$sum_rss" -v qc="$q_cpu" -v hc="$h_cpu" \
    -v pe="$pair_ev" -v sqw="$seq_wall" -v sqc="$seq_cpu" -v pw="$par_wall" -v pc="$par_cpu" \
    -v pr="$par_rss" 'BEGIN {
	printf "trace: %d events\n", ev
	printf "summary:               %.2f s CPU (%.2f s wall), %.2f M events per CPU-second (goal >= 10)\n", sc, sw, ev / sc / 1e6
	printf "cursor alone:          %.2f s CPU, %.2f M events/s (libsttrace, events in time order)\n", cc, ev / cc / 1e6
	printf "decode alone:          %.2f s CPU, %.2f M events/s (st-format verify: decompression + checksums)\n", vc, ev / vc / 1e6
	printf "analyzer itself:       %.2f s CPU, %.1f ns per event (summary - cursor)\n", sc - cc, (sc - cc) / ev * 1e9
	printf "peak RSS:              %d KiB for %d events, %d KiB for %d events: ratio %.2f for 10x the events (goal < 1.5)\n", rs, evs, rb, ev, rb / rs
	printf "--quantile 99.95:      %.2f s CPU, %.2fx the summary (goal < 2)\n", qc, qc / sc
	printf "--heatmap lat:         %.2f s CPU, %.2fx the summary (goal < 2)\n", hc, hc / sc
	printf "2 files one after the other: %.2f s wall (%.2f s CPU), %.2f M events/s\n", sqw, sqc, pe / sqw / 1e6
	printf "2 files together:      %.2f s wall (%.2f s CPU), %.2f M events/s: %.2fx the throughput (goal >= 1.7 on 2 cores), peak RSS %d KiB\n", pw, pc, pe / pw / 1e6, sqw / pw, pr
}'
echo "load average while measured: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"

