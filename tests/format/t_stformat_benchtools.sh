#!/usr/bin/env bash
# The hidden helpers of scripts/bench/format.sh process every byte they claim:
# dump-raw writes exactly the raw event bytes, bench-write and bench-decode
# see every event.
. "$(dirname "$0")/../lib.sh"
st_tmpdir T

st-format synth -o "$T/a.st" --ios 2000 --seed 2 --chunk-size 16384 >/dev/null || fail synth "synth failed"
st-format info --json "$T/a.st" >"$T/info.json"
events=$(jq .events "$T/info.json")
raw=$(jq .raw_bytes "$T/info.json")

st-format dump-raw "$T/a.st" -o "$T/raw"
check dump_raw_size test "$(stat -c %s "$T/raw")" = "$raw"
# The dump is the records: their sizes add up, in the order of the file's chunks.
check dump_raw_matches_records test "$(st-format cat --json "$T/a.st" | jq -s 'map(.size) | add')" = "$raw"

st-format bench-decode "$T/a.st" >"$T/out"
check bench_decode_all_events grep -q "^decode: $raw raw bytes, $events events in " "$T/out"
st-format bench-decode --cursor "$T/a.st" >"$T/out"
check bench_cursor_all_events grep -q "^cursor: $raw raw bytes, $events events in " "$T/out"
st-format bench-write -z 1 "$T/raw" >"$T/out"
check bench_write_all_events grep -q "^write: $raw raw bytes, $events events in " "$T/out"
# A raw file cut inside a record is refused.
head -c $((raw - 5)) "$T/raw" >"$T/cut"
st-format bench-write "$T/cut" >/dev/null 2>"$T/err"
check bench_write_rejects_cut_record test $? = 1
