#!/usr/bin/env bash
# Interop benchmark: st-format's anonymize, convert and import-blktrace, and
# the real blkparse on the exported files, against `st-format cat` on the
# same synthetic trace, measured side by side in one run (best of 3 CPU
# times each, one thread, files in /dev/shm). Events/s counts the trace's
# events (blkparse and import: the block events they see).
#
#   scripts/bench/interop.sh [EVENTS]      (default 3000000)
#
# Goal: anonymize and every convert stream at >= 0.5x `st-format cat`.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SF=$ROOT/build/st-format
EVENTS=${1:-3000000}

make -s -C "$ROOT" build/st-format
command -v blkparse >/dev/null || { echo "interop.sh: blkparse not installed (make deps)" >&2; exit 1; }
DIR=$(mktemp -d /dev/shm/sttrace-bench.XXXXXX)
trap 'rm -rf "$DIR"' EXIT

# best_cpu CMD...: the shortest CPU time (user + system) of 3 runs, seconds;
# the script stops when CMD fails (a failed run would time as fast).
best_cpu() {
	local best="" out
	for _ in 1 2 3; do
		out=$( { TIMEFORMAT='%U %S'; time "$@" >/dev/null 2>"$DIR/err" || echo FAILED; } 2>&1 | tail -1)
		if [ "$out" = FAILED ]; then
			echo "interop.sh: $* failed: $(head -1 "$DIR/err")" >&2
			exit 1
		fi
		best=$(awk -v a="$best" -v u="${out% *}" -v s="${out#* }" \
			'BEGIN { b = u + s; print (a == "" || b < a) ? b : a }')
	done
	echo "$best"
}

ios=$((EVENTS * 10 / 86))	# about 8.6 events per synthetic operation
"$SF" synth -o "$DIR/trace.st" --ios "$ios" --seed 1 >/dev/null
events=$("$SF" info --json "$DIR/trace.st" | jq .events)
mkdir -p "$DIR/bt"
"$SF" convert "$DIR/trace.st" --to blktrace -o "$DIR/bt/trace"
block=$(blkparse -q -i "$DIR/bt/trace" 2>/dev/null | grep -vc '^Input file')
echo "synthetic trace: $events events, $block of them block events (blktrace records)"

cat_cpu=$(best_cpu "$SF" cat "$DIR/trace.st")
row() { # row LABEL CPU EVENTS [GOAL]; an empty CPU: best_cpu stopped on a failure
	[ -n "$2" ] || exit 1
	printf '%-38s %7.2f s CPU %7.2f M events/s   %5.2fx cat%s\n' "$1" "$2" \
		"$(awk -v e="$3" -v t="$2" 'BEGIN { print e / t / 1e6 }')" \
		"$(awk -v c="$cat_cpu" -v t="$2" -v e="$3" -v n="$events" 'BEGIN { print (e / t) / (n / c) }')" \
		"${4:+ (goal >= $4)}"
}
row "st-format cat (reference)" "$cat_cpu" "$events"
row "anonymize" "$(best_cpu "$SF" anonymize "$DIR/trace.st" -o "$DIR/anon.st" --salt s)" "$events" 0.5
row "convert --to blktrace" "$(best_cpu "$SF" convert "$DIR/trace.st" --to blktrace -o "$DIR/bt/trace")" "$events" 0.5
row "convert --to blkparse" "$(best_cpu "$SF" convert "$DIR/trace.st" --to blkparse)" "$events" 0.5
row "blkparse -q of the blktrace files" "$(best_cpu blkparse -q -i "$DIR/bt/trace")" "$block"
row "convert --to fio-iolog" "$(best_cpu "$SF" convert "$DIR/trace.st" --to fio-iolog)" "$events" 0.5
row "convert --to csv" "$(best_cpu "$SF" convert "$DIR/trace.st" --to csv)" "$events" 0.5
row "convert --to jsonl" "$(best_cpu "$SF" convert "$DIR/trace.st" --to jsonl)" "$events" 0.5
row "convert --to csv --records" "$(best_cpu "$SF" convert "$DIR/trace.st" --to csv --records)" "$events" 0.5
row "convert --to jsonl --records" "$(best_cpu "$SF" convert "$DIR/trace.st" --to jsonl --records)" "$events" 0.5
row "convert --to perfetto" "$(best_cpu "$SF" convert "$DIR/trace.st" --to perfetto)" "$events" 0.5
row "import-blktrace of the blktrace files" \
	"$(best_cpu "$SF" import-blktrace "$DIR"/bt/trace.blktrace.* -o "$DIR/imported.st")" "$block"
