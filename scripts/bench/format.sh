#!/usr/bin/env bash
# Format benchmark: libsttrace's reader and writer against the zstd CLI on the
# same bytes, measured side by side in one run (best of 3 each, one thread,
# files in /dev/shm; ratios of wall time and of CPU time), plus bytes per
# event at default settings and the writer's CPU and bytes per event at each
# of a range of zstd levels.
#
#   scripts/bench/format.sh [EVENTS]          a synthetic trace (default 10000000 events)
#   scripts/bench/format.sh FILE.sttrace      the records of a recording, e.g. st-record -e block
#
# decode: `st-format bench-decode` (read, checksum, decompress and check every
#         events chunk) vs `zstd -d` of the same raw event bytes compressed at
#         the trace's level; goal >= 0.7
# write:  `st-format bench-write -z 1` (append every record, chunk, compress,
#         checksum, index; bytes dropped by the sink) vs `zstd -1` on the same
#         raw bytes to /dev/null; goal >= 0.8
# levels: `st-format bench-write -z L` for L in LEVELS (default "3 1 -1 -3 -5 -7"):
#         the writer's CPU ns and stored bytes per event, the figures a
#         recorder budget in "s per million events" and "bytes per event" meets;
#         and `zstd -b` on the same bytes in 1 MiB blocks: what compression
#         alone costs, the floor under the writer
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SF=$ROOT/build/st-format
INPUT=${1:-10000000}
LEVELS=${LEVELS:-3 1 -1 -3 -5 -7}
# synth writes at the library's default zstd level; read it from the source
# so the reference `zstd -d` input is compressed at the same level.
LEVEL=$(awk '$1 == "#define" && $2 == "ST_DEFAULT_ZSTD_LEVEL" { print $3 }' "$ROOT/format/lib/writer.c")
[[ $LEVEL =~ ^[0-9]+$ ]] || { echo "format.sh: no ST_DEFAULT_ZSTD_LEVEL in format/lib/writer.c" >&2; exit 1; }

make -s -C "$ROOT" build/st-format
command -v zstd >/dev/null || { echo "format.sh: zstd not installed (make deps)" >&2; exit 1; }
DIR=$(mktemp -d /dev/shm/sttrace-bench.XXXXXX)
trap 'rm -rf "$DIR"' EXIT

# best_time CMD...: the shortest wall time and the shortest CPU time (user +
# system) of 3 runs, in seconds: "WALL CPU". CPU time is the steadier figure
# on a busy machine; both are printed.
best_time() {
	local best_wall="" best_cpu="" out
	for _ in 1 2 3; do
		out=$( { TIMEFORMAT='%R %U %S'; time "$@" >/dev/null; } 2>&1 | tail -1)
		best_wall=$(awk -v a="$best_wall" -v b="${out%% *}" 'BEGIN { print (a == "" || b < a) ? b : a }')
		best_cpu=$(awk -v a="$best_cpu" -v u="$(cut -d' ' -f2 <<<"$out")" -v s="${out##* }" \
			'BEGIN { b = u + s; print (a == "" || b < a) ? b : a }')
	done
	echo "$best_wall $best_cpu"
}
rate() { awk -v b="$1" -v t="$2" 'BEGIN { printf "%.0f MB/s", b / t / 1e6 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
# compare LABEL GOAL "ST_WALL ST_CPU" "REF_WALL REF_CPU" REF_NAME: one line of figures.
compare() {
	local st_w=${3% *} st_c=${3#* } ref_w=${4% *} ref_c=${4#* }
	printf '%-7s st-format %s wall, %s CPU   %s %s wall, %s CPU   ratio %s wall, %s CPU (goal >= %s)\n' \
		"$1" "$(rate "$raw" "$st_w")" "$(rate "$raw" "$st_c")" "$5" "$(rate "$raw" "$ref_w")" \
		"$(rate "$raw" "$ref_c")" "$(ratio "$ref_w" "$st_w")" "$(ratio "$ref_c" "$st_c")" "$2"
}
zstd_to_null() { zstd -q -T1 "$@" -c >/dev/null; }

if [[ $INPUT =~ ^[0-9]+$ ]]; then
	# About 8.6 events per synthetic operation.
	ios=$((INPUT * 10 / 86))
	synth_s=$( { TIMEFORMAT='%U %S'; time "$SF" synth -o "$DIR/trace.st" --ios "$ios" --seed 1 >/dev/null; } 2>&1 |
		awk '{ printf "%.2f", $1 + $2 }')
	trace=$DIR/trace.st
	what="synthetic trace, written by synth in $synth_s s of CPU"
else
	[[ -r $INPUT ]] || { echo "format.sh: $INPUT: not a readable file (give an event count or a .sttrace file)" >&2; exit 2; }
	trace=$INPUT
	what="the records of $INPUT"
fi
info=$("$SF" info --json "$trace")
events=$(jq .events <<<"$info")
"$SF" dump-raw "$trace" -o "$DIR/raw"
raw=$(stat -c %s "$DIR/raw")
zstd -q -T1 "-$LEVEL" "$DIR/raw" -o "$DIR/raw.zst"

echo "$what: $events events, $raw raw bytes"
echo "bytes/event (default settings: 1 MiB chunks, zstd level $LEVEL): $(jq -r '.bytes_per_event * 100 | round / 100' <<<"$info") stored in events chunks, $(awk -v s="$(jq .file_size <<<"$info")" -v e="$events" 'BEGIN { printf "%.2f", s / e }') for the whole file"
echo "raw bytes/event: $(awk -v r="$raw" -v e="$events" 'BEGIN { printf "%.1f", r / e }'), ratio $(jq -r '.ratio * 100 | round / 100' <<<"$info")"

echo
compare decode 0.7 "$(best_time "$SF" bench-decode "$trace")" \
	"$(best_time zstd_to_null -d "$DIR/raw.zst")" "zstd -d"
compare write 0.8 "$(best_time "$SF" bench-write -z 1 "$DIR/raw")" \
	"$(best_time zstd_to_null -1 "$DIR/raw")" "zstd -1"
cur=$(best_time "$SF" bench-decode --cursor "$trace")
echo "cursor  every event in time order: $(rate "$raw" "${cur#* }") CPU," \
	"$(awk -v e="$events" -v t="${cur#* }" 'BEGIN { printf "%.1f", e / t / 1e6 }') Mevents/s"

echo
echo "by zstd level, the same records: the writer (bench-write's own clock around the writing, best of 3),"
echo "and zstd alone on their bytes in 1 MiB blocks (zstd -b, 3 s, with the writer's hash table size):"
for level in $LEVELS; do
	best="" stored=""
	for _ in 1 2 3; do
		out=$("$SF" bench-write -z "$level" "$DIR/raw")
		t=$(awk '$1 == "write:" { for (i = 1; i < NF; i++) if ($(i + 1) == "s:") print $i }' <<<"$out")
		stored=$(awk '$1 == "stored" { print $4 }' <<<"$out")
		best=$(awk -v a="$best" -v b="$t" 'BEGIN { print (a == "" || b < a) ? b : a }')
	done
	# the writer's parameters (format/lib/writer.c): hashLog 10 at level 1 and below
	zlevel=(-b"$level")
	[ "$level" -lt 0 ] && zlevel=(-b --fast=$((-level)))
	[ "$level" -le 1 ] && zlevel+=(--zstd=hlog=10)
	# its last line: "LEVEL COMPRESSED (RATIO) MB/s ..."
	read -r zsize zrate < <(zstd -q "${zlevel[@]}" -B1MiB -i3 "$DIR/raw" 2>&1 | tr '\r' '\n' |
		awk '$5 == "MB/s" { s = $2; r = $4 } END { print s, r }')
	awk -v l="$level" -v t="$best" -v e="$events" -v b="$stored" -v r="$raw" -v zr="$zrate" -v zs="$zsize" 'BEGIN {
		printf "  -z %-4s writer %6.1f ns/event (%.3f s per million events) %5.2f bytes/event;", l, t / e * 1e9, t / e * 1e6, b
		printf "  zstd alone %5.1f ns/event, %5.2f bytes/event\n", r / e / (zr * 1e6) * 1e9, zs / e
	}'
done
