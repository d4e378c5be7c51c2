#!/usr/bin/env bash
# bench-codec, the codec table of scripts/bench/codec.sh, compresses every
# event of a file: its event count and raw bytes per event are those
# `st-format info` reports, and every codec stores fewer bytes than the raw
# records. A file it cannot read is one line naming it and exit 1.
. "$(dirname "$0")/../lib.sh"
CODEC=$ST_BUILD/bench/bench-codec
[ -x "$CODEC" ] || { skip bench_codec "bench-codec not built (no liblz4)"; exit 0; }
st_tmpdir T

st-format synth -o "$T/a.st" --ios 3000 --seed 3 --chunk-size 65536 >/dev/null || fail synth "synth failed"
st-format info --json "$T/a.st" >"$T/info.json"
events=$(jq .events "$T/info.json")
raw=$(jq .raw_bytes "$T/info.json")
"$CODEC" -r 1 "$T/a.st" >"$T/out" 2>"$T/err"
check bench_codec_runs test $? = 0
check bench_codec_all_events grep -q "^$events events in [0-9]* chunks, $(awk -v r="$raw" -v e="$events" \
	'BEGIN { printf "%.1f", r / e }') raw bytes/event;" "$T/out"
rows=$(awk -v raw="$raw" -v e="$events" '/bytes\/event/ && !/raw/ {
	for (i = 1; i < NF; i++) if ($(i + 1) == "bytes/event") b = $i
	n++; if (b > 0 && b < raw / e) ok++ } END { printf "%d %d", n, ok }' "$T/out")
check bench_codec_every_codec_compresses test "$rows" = "4 4"

"$CODEC" "$T/missing.st" >/dev/null 2>"$T/err"
rc=$?
check bench_codec_bad_file test "$rc" = 1 -a "$(wc -l <"$T/err")" = 1 -a -n "$(grep -F "$T/missing.st" "$T/err")"
