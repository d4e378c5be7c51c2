#!/usr/bin/env bash
# Analyzer benchmark: st-analyze on a synthetic trace of about 5*10^7 events.
#   - summary throughput: events per CPU-second (st-analyze is single-threaded,
#     so this is one core), next to the library alone on the same file: the
#     time-ordered cursor (st-format cat of a type the trace lacks iterates
#     every event and prints none) and chunk decoding (st-format verify)
#   - peak RSS of the summary on a trace and on a 10x larger one (goal < 1.5x)
#   - --quantile 99.95 and --heatmap lat relative to the summary (goal < 2x)
# Every figure is measured in this run, side by side, on the same files.
# Traces are kept in $BENCH_DIR (default /tmp/sttrace-bench) for re-runs.
#
# usage: scripts/bench/analyze.sh [EVENTS]   (default 50000000)
set -eu
cd "$(dirname "$0")/../.."
B=${ST_BUILD:-$PWD/build}
EVENTS=${1:-50000000}
DIR=${BENCH_DIR:-/tmp/sttrace-bench}
EVENTS_PER_IO=8.57	# st-format synth's mix (171364 events for 20000 I/Os)
mkdir -p "$DIR"

big_ios=$(awk -v e="$EVENTS" -v r="$EVENTS_PER_IO" 'BEGIN { printf "%d", e / r }')
small_ios=$((big_ios / 10))
for n in $small_ios $big_ios; do
	f="$DIR/synth-$n.sttrace"
	[ -s "$f" ] || { echo "generating $f ($n I/Os)..." >&2; "$B/st-format" synth -o "$f" --ios "$n" --seed 1 >&2; }
done
big="$DIR/synth-$big_ios.sttrace"
small="$DIR/synth-$small_ios.sttrace"
events_of() { "$B/st-format" info "$1" | awk '$1 == "events" { print $2; exit }'; }

# measure CMD...: prints "cpu_seconds wall_seconds max_rss_kb" of one run.
measure() {
	/usr/bin/time -f '%U %S %e %M' -o "$DIR/time.out" "$@" >/dev/null 2>&1
	awk '{ printf "%.3f %.3f %d\n", $1 + $2, $3, $4 }' "$DIR/time.out"
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

ev=$(events_of "$big")
ev_small=$(events_of "$small")
read -r sum_cpu sum_wall sum_rss <<<"$(best "$B/st-analyze" "$big")"
read -r ver_cpu _ _ <<<"$(best "$B/st-format" verify "$big")"
read -r cur_cpu _ _ <<<"$(best "$B/st-format" cat -t sched_process_exit "$big")"
read -r _ _ small_rss <<<"$(best "$B/st-analyze" "$small")"
read -r q_cpu _ _ <<<"$(best "$B/st-analyze" --quantile 99.95 "$big")"
read -r h_cpu _ _ <<<"$(best "$B/st-analyze" --heatmap lat "$big")"

awk -v ev="$ev" -v evs="$ev_small" -v sc="$sum_cpu" -v sw="$sum_wall" -v vc="$ver_cpu" -v cc="$cur_cpu" \
    -v rs="$small_rss" -v rb="$sum_rss" -v qc="$q_cpu" -v hc="$h_cpu" 'BEGIN {
	printf "trace: %d events\n", ev
	printf "summary:               %.2f s CPU (%.2f s wall), %.2f M events/s on one core (goal >= 10)\n", sc, sw, ev / sc / 1e6
	printf "cursor alone:          %.2f s CPU, %.2f M events/s (libsttrace, events in time order)\n", cc, ev / cc / 1e6
	printf "decode alone:          %.2f s CPU, %.2f M events/s (st-format verify: decompression + checksums)\n", vc, ev / vc / 1e6
	printf "analyzer itself:       %.2f s CPU, %.1f ns per event (summary - cursor)\n", sc - cc, (sc - cc) / ev * 1e9
	printf "peak RSS:              %d KiB for %d events, %d KiB for %d events: ratio %.2f for 10x the events (goal < 1.5)\n", rs, evs, rb, ev, rb / rs
	printf "--quantile 99.95:      %.2f s CPU, %.2fx the summary (goal < 2)\n", qc, qc / sc
	printf "--heatmap lat:         %.2f s CPU, %.2fx the summary (goal < 2)\n", hc, hc / sc
}'
