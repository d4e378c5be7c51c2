#!/usr/bin/env bash
# Format benchmark: libsttrace's reader and writer against the zstd CLI on the
# same bytes, measured side by side in one run (best of 3 each, one thread,
# files in /dev/shm), plus bytes per event of a synthetic trace.
#
#   scripts/bench/format.sh [EVENTS]      (default 10000000)
#
# decode: `st-format bench-decode` (read, checksum, decompress and check every
#         events chunk) vs `zstd -d` of the same raw event bytes compressed at
#         the trace's level; goal >= 0.7
# write:  `st-format bench-write -z 1` (append every record, chunk, compress,
#         checksum, index; bytes dropped by the sink) vs `zstd -1` on the same
#         raw bytes to /dev/null; goal >= 0.8
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SF=$ROOT/build/st-format
EVENTS=${1:-10000000}
LEVEL=3		# the library's default zstd level (format/writer.c)

make -s -C "$ROOT" build/st-format
command -v zstd >/dev/null || { echo "format.sh: zstd not installed (make deps)" >&2; exit 1; }
DIR=$(mktemp -d /dev/shm/sttrace-bench.XXXXXX)
trap 'rm -rf "$DIR"' EXIT

# best_time CMD...: the shortest wall time of 3 runs, in seconds.
best_time() {
	local best="" t0 t1 dt
	for _ in 1 2 3; do
		t0=$EPOCHREALTIME
		"$@" >/dev/null
		t1=$EPOCHREALTIME
		dt=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')
		best=$(awk -v a="$best" -v b="$dt" 'BEGIN { print (a == "" || b < a) ? b : a }')
	done
	echo "$best"
}
rate() { awk -v b="$1" -v t="$2" 'BEGIN { printf "%.0f MB/s", b / t / 1e6 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
zstd_to_null() { zstd -q -T1 "$@" -c >/dev/null; }

# About 8.6 events per synthetic operation.
ios=$((EVENTS * 10 / 86))
t0=$EPOCHREALTIME
"$SF" synth -o "$DIR/trace.st" --ios "$ios" --seed 1 >/dev/null
synth_s=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
info=$("$SF" info --json "$DIR/trace.st")
events=$(jq .events <<<"$info")
"$SF" dump-raw "$DIR/trace.st" -o "$DIR/raw"
raw=$(stat -c %s "$DIR/raw")
zstd -q -T1 "-$LEVEL" "$DIR/raw" -o "$DIR/raw.zst"

echo "synthetic trace: $events events, $raw raw bytes, written by synth in $synth_s s"
echo "bytes/event (default settings: 1 MiB chunks, zstd level $LEVEL): $(jq -r '.bytes_per_event * 100 | round / 100' <<<"$info") stored in events chunks, $(awk -v s="$(jq .file_size <<<"$info")" -v e="$events" 'BEGIN { printf "%.2f", s / e }') for the whole file"
echo "raw bytes/event: $(awk -v r="$raw" -v e="$events" 'BEGIN { printf "%.1f", r / e }'), ratio $(jq -r '.ratio * 100 | round / 100' <<<"$info")"

st_dec=$(best_time "$SF" bench-decode "$DIR/trace.st")
zs_dec=$(best_time zstd_to_null -d "$DIR/raw.zst")
cur=$(best_time "$SF" bench-decode --cursor "$DIR/trace.st")
echo
echo "decode  st-format: $(rate "$raw" "$st_dec") ($st_dec s)   zstd -d: $(rate "$raw" "$zs_dec") ($zs_dec s)   ratio $(ratio "$zs_dec" "$st_dec") (goal >= 0.7)"
echo "        time-ordered cursor over every event: $(rate "$raw" "$cur"), $(awk -v e="$events" -v t="$cur" 'BEGIN { printf "%.1f", e / t / 1e6 }') Mevents/s"

st_wr=$(best_time "$SF" bench-write -z 1 "$DIR/raw")
zs_wr=$(best_time zstd_to_null -1 "$DIR/raw")
echo "write   st-format: $(rate "$raw" "$st_wr") ($st_wr s)   zstd -1: $(rate "$raw" "$zs_wr") ($zs_wr s)   ratio $(ratio "$zs_wr" "$st_wr") (goal >= 0.8)"
