#!/usr/bin/env bash
# st-format info: the numbers it reports agree with the events themselves
# (counted through cat), with what synth was asked for, and between the text
# and JSON forms; damage is reported.
. "$(dirname "$0")/../lib.sh"
st_tmpdir T

st-format synth -o "$T/a.st" --ios 300 --seed 5 --cpus 4 --lost 10 --chunk-size 8192 >/dev/null ||
	fail synth "synth failed"
st-format info "$T/a.st" >"$T/info" || fail info_runs "exit $?"
st-format info --json --chunks "$T/a.st" >"$T/info.json" || fail info_json_runs "exit $?"
st-format cat "$T/a.st" >"$T/cat"

field() { sed -n "s/^$1   *//p" "$T/info"; }
jqv() { jq -r "$1" "$T/info.json"; }

check info_json_is_json jq -e . "$T/info.json" >/dev/null
check info_footer_present test "$(field footer)" = present
events=$(field events)
check info_events_match_cat test "$events" = "$(wc -l <"$T/cat")"
check info_json_events_match_text test "$(jqv .events)" = "$events"
per_type_sum=$(awk '/^events per type/ { on = 1; next } /^$/ { on = 0 } on { s += $2 } END { print s }' "$T/info")
check info_per_type_sums_to_events test "$per_type_sum" = "$events"
# Per-type counts against cat, for every type.
bad=0
while read -r name n; do
	[ "$(awk -v t="$name" '$2 == t' "$T/cat" | wc -l)" = "$n" ] || { bad=1; echo "$name: info $n"; }
done < <(awk '/^events per type/ { on = 1; next } /^$/ { on = 0 } on { print $1, $2 }' "$T/info")
check info_per_type_matches_cat test $bad = 0
first=$(awk 'NR == 1 || $1 < m { m = $1 } END { print m }' "$T/cat")
last=$(awk '$1 > m { m = $1 } END { print m }' "$T/cat")
check info_time_span test "$(field 'time span' | awk '{ print $1, $3 }')" = "$first $last"
# Wall clock = event clock + clock.realtime_offset_ns (synth: 2026-01-01T00:00:00Z at 1000 s).
off=$(jqv '.metadata["clock.realtime_offset_ns"]')
wall=$(date -u -d "@$(((first + off) / 1000000000))" +%Y-%m-%dT%H:%M:%S).$(printf %09d $(((first + off) % 1000000000)))Z
check info_wall_clock test "$(field 'wall clock' | awk '{ print $1 }')" = "$wall"
check info_wall_clock_is_2026 test "${wall:0:10}" = 2026-01-01
# 10 lost events over 4 CPUs: 3, 3, 2, 2.
check info_lost_per_cpu test "$(field 'lost events')" = "10 (cpu 0: 3, cpu 1: 3, cpu 2: 2, cpu 3: 2)"
check info_json_lost test "$(jqv '[.lost_per_cpu[]] | add')" = 10
# Probe runs the kernel skipped are lost on no known CPU, and part of the total.
st-format synth -o "$T/k.st" --ios 50 --cpus 2 --lost 4 --skipped 7 >/dev/null || fail synth_skipped "synth failed"
check info_lost_skipped test "$(st-format info "$T/k.st" | sed -n 's/^lost events   *//p')" = \
	"11 (cpu 0: 2, cpu 1: 2, skipped probe runs: 7)"
check info_json_lost_skipped test "$(st-format info --json "$T/k.st" | jq -c .lost_per_cpu)" = '{"0":2,"1":2,"any":7}'
# Sizes: raw bytes are the records' sizes; bytes/event is stored/events.
raw=$(st-format cat --json "$T/a.st" | jq -s 'map(.size) | add')
check info_raw_bytes test "$(jqv .raw_bytes)" = "$raw"
check info_file_size test "$(jqv .file_size)" = "$(stat -c %s "$T/a.st")"
check info_bytes_per_event awk -v s="$(jqv .stored_bytes)" -v e="$events" -v b="$(jqv .bytes_per_event)" \
	'BEGIN { exit !(s / e - b < 1e-9 && b - s / e < 1e-9) }'
# The chunk list tiles the file: header (32 bytes), chunks, trailer (32 bytes).
check info_chunks_tile_file test "$(jq '[.chunk_list[] | .offset] | .[0]' "$T/info.json")" = 32
tiles=$(jq '[.chunk_list as $c | range(1; $c | length) | select($c[.].offset != $c[. - 1].offset + $c[. - 1].stored_size)] | length' "$T/info.json")
check info_chunks_contiguous test "$tiles" = 0
end=$(jq '.chunk_list[-1] | .offset + .stored_size' "$T/info.json")
check info_chunks_end_at_trailer test $((end + 32)) = "$(jqv .file_size)"
check info_chunk_events_sum test "$(jq '[.chunk_list[].events] | add' "$T/info.json")" = "$events"
check info_several_event_chunks test "$(jqv .chunks.events)" -gt 3
# Every metadata key a trace must have (common list of keys).
for key in tool command_line options kernel.release host.name cpu.count \
	clock.realtime_offset_ns record.start_ts record.end_ts dev.254:0 dev.259:0 pid.1200; do
	grep -q "^  $key = ." "$T/info" || { fail "info_metadata_$key" "missing"; continue; }
	pass "info_metadata_$key"
done
check info_tool test "$(jqv .metadata.tool)" = "st-format synth 0.1.0"

# A file cut right after its third events chunk reads up to there.
c3_end=$(jq '[.chunk_list[] | select(.kind == "events")][2] | .offset + .stored_size' "$T/info.json")
c3_events=$(jq '[.chunk_list[] | select(.kind == "events")][0:3] | map(.events) | add' "$T/info.json")
head -c "$c3_end" "$T/a.st" >"$T/cut.st"
st-format info "$T/cut.st" >"$T/info" || fail info_cut_runs "exit $?"
check info_cut_footer_missing test "$(field footer)" = "missing: read by scanning the chunks"
check info_cut_events test "$(field events)" = "$c3_events"
check info_cut_damage grep -qE "^damage +.*chunk 4\b" "$T/info"
check info_cut_recovered test "$(st-format info --json "$T/cut.st" | jq .recovered)" = true

# The version a new file carries is the spec's newest (section 9's table),
# read from the header's bytes, not through libsttrace; info shows it.
SPEC="$(dirname "$0")/../../spec/sttrace-format.md"
newest=$(grep -o '^| 1\.[0-9]* |' "$SPEC" | tr -d '| ' | tail -1)
header=$(od -An -tu2 -j8 -N4 --endian=little "$T/a.st" | awk '{ print $1 "." $2 }')
check info_version_is_newest_in_spec test "$header" = "$newest"
check info_version_shown test "$(jqv .format)" = "$newest"
