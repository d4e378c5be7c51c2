#!/usr/bin/env bash
# Golden files (spec/golden/, see its README.md): files written by earlier
# versions must read exactly as they did. Never regenerate the expected
# outputs to make this pass.
. "$(dirname "$0")/../lib.sh"
st_tmpdir T
G="$(cd "$(dirname "$0")/../../spec/golden" && pwd)"

# same_output NAME EXPECTED ARGS...: st-format ARGS prints EXPECTED exactly.
same_output() {
	local name=$1 expected=$2
	shift 2
	if ! timeout 60 st-format "$@" >"$T/out" 2>"$T/err"; then
		fail "$name" "st-format $* failed: $(head -c 300 "$T/err")"
	elif ! cmp -s "$T/out" "$G/$expected"; then
		fail "$name" "output differs from $expected: $(diff "$G/$expected" "$T/out" | head -5 | tr '\n' '|')"
	else
		pass "$name"
	fi
}

same_output golden_synth_cat synth-60.cat.txt cat "$G/synth-60.sttrace"
same_output golden_synth_cut_cat synth-60-cut.cat.txt cat "$G/synth-60-cut.sttrace"
same_output golden_future_cat future.cat.txt cat "$G/future.sttrace"
same_output golden_future_csv future.cat.csv cat --csv "$G/future.sttrace"
same_output golden_future_json future.cat.jsonl cat --json "$G/future.sttrace"

check golden_synth_verifies st-format verify -q "$G/synth-60.sttrace"
check golden_future_verifies st-format verify -q "$G/future.sttrace"
st-format verify "$G/synth-60-cut.sttrace" 2>"$T/err"
check golden_cut_rejected test $? = 1
check golden_cut_names_chunk grep -q "chunk 5 at offset 5652" "$T/err"

# What info derives from the footer (or the scan) agrees with the files' contents.
st-format info --json "$G/synth-60.sttrace" >"$T/synth.json"
check golden_synth_events test "$(jq .events "$T/synth.json")" = 526
check golden_synth_lost test "$(jq .lost_events "$T/synth.json")" = 5
check golden_synth_metadata test "$(jq -r '.metadata.command_line' "$T/synth.json")" = \
	"st-format synth --ios 60 --seed 47 --devices 2 --procs 4 --cpus 4 --chunk-size 4096 -z 0 --slow-factor 1 --lost 5"
st-format info --json "$G/synth-60-cut.sttrace" >"$T/cut.json"
check golden_cut_recovered test "$(jq -r '"\(.footer_present) \(.recovered) \(.events)"' "$T/cut.json")" = "false true 180"
st-format info --json "$G/future.sttrace" >"$T/future.json"
check golden_future_unknown_chunk test "$(jq .chunks.unknown "$T/future.json")" = 1
check golden_future_type_counted test "$(jq .events_per_type.nvme_future_cmd "$T/future.json")" = 5

# The golden files are format 1.0 (header bytes) and read as such.
check golden_version_header test "$(od -An -tu2 -j8 -N4 --endian=little "$G/synth-60.sttrace" | tr -s ' ')" = " 1 0"
check golden_version_info test "$(jq -r .format "$T/synth.json")" = 1.0
