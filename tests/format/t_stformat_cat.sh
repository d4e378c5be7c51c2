#!/usr/bin/env bash
# st-format cat: every event once, in timestamp order, every field by name,
# in text, CSV and JSON; --type and --from/--to select exactly what they say.
. "$(dirname "$0")/../lib.sh"
st_tmpdir T

st-format synth -o "$T/a.st" --ios 400 --seed 9 --chunk-size 8192 >/dev/null || fail synth "synth failed"
st-format info --json "$T/a.st" >"$T/info.json"
events=$(jq .events "$T/info.json")
st-format cat "$T/a.st" >"$T/cat" || fail cat_runs "exit $?"

check cat_one_line_per_event test "$(wc -l <"$T/cat")" = "$events"
check cat_sorted_by_ts sort -n -c -s -k1,1 "$T/cat"
# Field names of three types, in the order of format/lib/sttrace_events.h.
names() { awk -v t="$1" '$2 == t { for (i = 3; i <= NF; i++) { sub(/=.*/, "", $i); printf "%s ", $i }; exit }' "$T/cat"; }
check cat_fields_rq_issue test "$(names block_rq_issue)" = "cpu pid tid rq sector dev nr_sector bytes opf error nr_bios bios "
check cat_fields_pread test "$(names sys_enter_pread64)" = "cpu pid tid fd count offset flags cgroup run_delay "
check cat_fields_dio test "$(names iomap_dio_rw_begin)" = "cpu pid tid ino pos count ret dev flags "
check cat_fields_uring test "$(names io_uring_submit_req)" = "cpu pid tid ctx req user_data res opcode flags fd cgroup "
check cat_fields_exec test "$(names sched_process_exec)" = "cpu pid tid other_pid pad comm "
# Value formats: hex identities, major:minor devices, arrays, quoted strings.
check cat_hex_format grep -qE ' rq=0x[0-9a-f]+ ' "$T/cat"
check cat_dev_format grep -qE ' dev=(254|259):[0-9]+ ' "$T/cat"
check cat_array_format grep -qE ' bios=\[0x[0-9a-f]+,0x[0-9a-f]+,0x[0-9a-f]+,0x[0-9a-f]+\]$' "$T/cat"
check cat_string_format grep -q ' comm="postgres"$' "$T/cat"
check cat_negative_int grep -q ' dfd=-100 ' "$T/cat"

# CSV: a header, one row per event, every row as wide as the header.
st-format cat --csv "$T/a.st" >"$T/csv" || fail cat_csv_runs "exit $?"
check csv_rows test "$(($(wc -l <"$T/csv") - 1))" = "$events"
check csv_header_starts test "$(head -1 "$T/csv" | cut -d, -f1-6)" = "type,size,cpu,ts,pid,tid"
widths=$(awk -F, '{ print NF }' "$T/csv" | sort -u | wc -l)
check csv_rectangular test "$widths" = 1
col() { head -1 "$T/csv" | tr , '\n' | grep -nx "$1" | cut -d: -f1; }
check csv_ts_column_matches_text diff <(tail -n +2 "$T/csv" | cut -d, -f"$(col ts)") <(awk '{ print $1 }' "$T/cat")
check csv_bios_cell grep -qE ',0x[0-9a-f]+;0x[0-9a-f]+;0x[0-9a-f]+;0x[0-9a-f]+(,|$)' "$T/csv"
check csv_empty_cells_for_absent_fields test "$(awk -F, -v c="$(col bios)" '$1 == "sys_exit_pread64" { print $c; exit }' "$T/csv")" = ""

# JSON Lines: every line an object with every field.
st-format cat --json "$T/a.st" >"$T/json" || fail cat_json_runs "exit $?"
check json_lines_valid test "$(jq -c . "$T/json" | wc -l)" = "$events"
check json_ts_matches_text diff <(jq -r .ts "$T/json") <(awk '{ print $1 }' "$T/cat")
check json_types_match_text diff <(jq -r .type "$T/json") <(awk '{ print $2 }' "$T/cat")
check json_issue_keys test "$(jq -c 'select(.type == "block_rq_issue") | keys_unsorted' "$T/json" | head -1)" = \
	'["type","size","cpu","ts","pid","tid","rq","sector","dev","nr_sector","bytes","opf","error","nr_bios","bios"]'
check json_hex_and_dev_are_strings test "$(jq -r 'select(.type == "block_rq_issue") | "\(.rq|type) \(.dev|type) \(.bios|length) \(.sector|type)"' "$T/json" | head -1)" = "string string 4 number"

# --type: exactly the events of the named types.
st-format cat --type block_rq_complete,sys_exit_fsync "$T/a.st" >"$T/typed"
check type_filter diff "$T/typed" <(awk '$2 == "block_rq_complete" || $2 == "sys_exit_fsync"' "$T/cat")
check type_filter_count test "$(wc -l <"$T/typed")" = \
	"$(jq '.events_per_type.block_rq_complete + .events_per_type.sys_exit_fsync' "$T/info.json")"

# --from/--to with absolute ns (@NS): inclusive at both ends.
t1=$(sed -n 100p "$T/cat" | cut -d' ' -f1)
t2=$(sed -n 900p "$T/cat" | cut -d' ' -f1)
st-format cat --from "@$t1" --to "@$t2" "$T/a.st" >"$T/range"
check range_absolute diff "$T/range" <(awk -v a="$t1" -v b="$t2" '$1 >= a && $1 <= b' "$T/cat")
check range_inclusive test "$(head -1 "$T/range" | cut -d' ' -f1) $(tail -1 "$T/range" | cut -d' ' -f1)" = "$t1 $t2"
st-format cat --from "@$t1" --to "@$t1" "$T/a.st" >"$T/point"
check range_single_ts diff "$T/point" <(awk -v a="$t1" '$1 == a' "$T/cat")
# Relative times count from record.start_ts.
start=$(jq -r '.metadata["record.start_ts"]' "$T/info.json")
st-format cat --from 300us --to 0.5ms "$T/a.st" >"$T/rel"
check range_relative diff "$T/rel" <(awk -v a=$((start + 300000)) -v b=$((start + 500000)) '$1 >= a && $1 <= b' "$T/cat")
check range_relative_nonempty test -s "$T/rel"
# A bare number is seconds after the start in every tool, never nanoseconds.
st-format cat --from 0 --to 0.0005 "$T/a.st" >"$T/bare"
check range_bare_number_is_seconds diff "$T/bare" <(awk -v b=$((start + 500000)) '$1 <= b' "$T/cat")
st-format cat --from 1s "$T/a.st" >"$T/late"
check range_past_end test ! -s "$T/late"
st-format cat --to 600000ns --type block_rq_issue --csv "$T/a.st" >"$T/combo"
n=$(awk -v b=$((start + 600000)) '$1 <= b && $2 == "block_rq_issue"' "$T/cat" | wc -l)
check range_and_type_csv test "$(($(wc -l <"$T/combo") - 1))" = "$n"
check range_and_type_nonempty test "$n" -gt 0

# A listed events chunk whose payload is damaged (the footer is intact): its
# events are skipped and named on stderr, every other chunk's events print
# in order, and the exit status says the output is incomplete.
st-format info --json --chunks "$T/a.st" >"$T/chunks.json"
read -r seq off stored ev < <(jq -r '[.chunk_list[] | select(.kind == "events")][4] | "\(.seq) \(.offset) \(.stored_size) \(.events)"' "$T/chunks.json")
cp "$T/a.st" "$T/bad.st"
printf 'XXXXXXXX' | dd of="$T/bad.st" bs=1 seek=$((off + stored / 2)) conv=notrunc status=none
st-format cat "$T/bad.st" >"$T/badcat" 2>"$T/err"
check cat_damaged_chunk_exit test $? = 1
check cat_damaged_chunk_named test "$(cat "$T/err")" = \
	"st-format: $T/bad.st: chunk $seq at offset $off: payload checksum mismatch; its events are skipped"
check cat_damaged_chunk_others_print test "$(wc -l <"$T/badcat")" = $((events - ev))
check cat_damaged_chunk_no_foreign_events test -z "$(comm -13 <(sort "$T/cat") <(sort "$T/badcat"))"
check cat_damaged_chunk_sorted sort -n -c -s -k1,1 "$T/badcat"

# An index whose per-type counts leave out block_rq_complete (which has
# records): the CSV has no columns for it, so its records are reported once
# and not printed, every other row prints, and the exit status is 1.
"$ST_BUILD/tests/drop-type-count" "$T/a.st" "$T/uncounted.st" block_rq_complete ||
	fail drop_type_count "exit $?"
st-format cat --csv "$T/uncounted.st" >"$T/ucsv" 2>"$T/err"
check csv_unlisted_type_exit test $? = 1
check csv_unlisted_type_reported test "$(cat "$T/err")" = \
	"st-format: $T/uncounted.st: block_rq_complete records, which the file's per-type counts leave out: not printed (no CSV columns)"
check csv_unlisted_type_other_rows test "$(($(wc -l <"$T/ucsv") - 1))" = \
	$((events - $(jq .events_per_type.block_rq_complete "$T/info.json")))
st-format verify "$T/uncounted.st" 2>"$T/err"
check verify_rejects_unlisted_type test $? = 1
