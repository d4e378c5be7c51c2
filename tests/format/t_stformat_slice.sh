#!/usr/bin/env bash
# st-format slice: a valid file with the same schema, metadata and lost
# counts, holding exactly the events of the range.
. "$(dirname "$0")/../lib.sh"
st_tmpdir T

st-format synth -o "$T/a.st" --ios 500 --seed 4 --lost 7 --chunk-size 8192 >/dev/null ||
	fail synth "synth failed"
st-format cat "$T/a.st" >"$T/cat"
st-format info --json "$T/a.st" >"$T/a.json"
start=$(jq -r '.metadata["record.start_ts"]' "$T/a.json")

# slice_case NAME FROM TO LO HI: slice --from FROM --to TO keeps exactly LO <= ts <= HI.
slice_case() {
	local name=$1 from=$2 to=$3 lo=$4 hi=$5 out="$T/$1.st"
	if ! st-format slice "$T/a.st" -o "$out" --from "$from" --to "$to" >"$T/msg"; then
		fail "$name" "slice failed"
		return
	fi
	check "${name}_verifies" st-format verify -q "$out"
	awk -v a="$lo" -v b="$hi" '$1 >= a && $1 <= b' "$T/cat" | sort >"$T/want"
	st-format cat "$out" | sort >"$T/got"
	check "${name}_exact_events" diff -q "$T/want" "$T/got"
	check "${name}_reports_count" grep -q ": $(wc -l <"$T/want") of $(wc -l <"$T/cat") events" "$T/msg"
}

t1=$(sed -n 1000p "$T/cat" | cut -d' ' -f1)
t2=$(sed -n 3000p "$T/cat" | cut -d' ' -f1)
slice_case slice_absolute "@$t1" "@$t2" "$t1" "$t2"
slice_case slice_relative 2ms 4.5ms $((start + 2000000)) $((start + 4500000))
slice_case slice_empty 3600s 3601s $((start + 3600000000000)) $((start + 3601000000000))
check slice_absolute_is_smaller test "$(stat -c %s "$T/slice_absolute.st")" -lt "$(stat -c %s "$T/a.st")"
check slice_empty_has_no_events test "$(st-format info --json "$T/slice_empty.st" | jq .events)" = 0

# Same metadata (plus the range), schema and lost counts.
st-format info --json "$T/slice_absolute.st" >"$T/s.json"
check slice_same_metadata test "$(jq -c '.metadata' "$T/a.json")" = \
	"$(jq -c '.metadata | del(.["slice.from_ts"], .["slice.to_ts"])' "$T/s.json")"
check slice_range_metadata test "$(jq -r '.metadata["slice.from_ts"] + " " + .metadata["slice.to_ts"]' "$T/s.json")" = "$t1 $t2"
check slice_same_schema test "$(jq .schema_types "$T/s.json")" = "$(jq .schema_types "$T/a.json")"
check slice_keeps_lost test "$(jq -c .lost_per_cpu "$T/s.json")" = "$(jq -c .lost_per_cpu "$T/a.json")"

# The output may not be the input; a failed slice leaves no file behind.
cp "$T/a.st" "$T/b.st"
st-format slice "$T/b.st" -o "$T/b.st" --from 1ms 2>"$T/err"
check slice_refuses_own_input test $? = 1
check slice_own_input_untouched cmp -s "$T/a.st" "$T/b.st"
st-format slice "$T/a.st" -o "$T/no-such-dir/x.st" 2>"$T/err"
check slice_unwritable_output test $? = 1
check slice_unwritable_one_line test "$(wc -l <"$T/err")" = 1

# A file without its footer slices too (read by scanning).
head -c $(($(stat -c %s "$T/a.st") / 2)) "$T/a.st" >"$T/cut.st"
st-format slice "$T/cut.st" -o "$T/cut-slice.st" --from 1ms >/dev/null
check slice_of_cut_file st-format verify -q "$T/cut-slice.st"
check slice_of_cut_file_events test "$(st-format cat "$T/cut-slice.st" | wc -l)" = \
	"$(st-format cat --from 1ms "$T/cut.st" | wc -l)"

# Event types unknown to this build are copied through the file's schema.
"$ST_BUILD/tests/synth-future" "$T/future.st"
st-format slice "$T/future.st" -o "$T/future-slice.st" --from 20us >/dev/null
check slice_unknown_type_verifies st-format verify -q "$T/future-slice.st"
check slice_unknown_type_events diff <(st-format cat --from 20us "$T/future.st") <(st-format cat "$T/future-slice.st")
check slice_unknown_type_present grep -q nvme_future_cmd <(st-format cat "$T/future-slice.st")
