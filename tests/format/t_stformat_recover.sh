#!/usr/bin/env bash
# st-format recover: from a file cut at random offsets, with a corrupted
# chunk, or without footer and damaged in the middle, a file that verify
# accepts, keeping every complete, intact chunk.
. "$(dirname "$0")/../lib.sh"
st_tmpdir T

st-format synth -o "$T/a.st" --ios 800 --seed 21 --lost 3 --chunk-size 16384 >/dev/null ||
	fail synth "synth failed"
size=$(stat -c %s "$T/a.st")
st-format info --json --chunks "$T/a.st" >"$T/a.json"
st-format cat "$T/a.st" | sort >"$T/all"
total=$(jq .events "$T/a.json")

# Events of the events chunks wholly before byte CUT, and where the last
# complete chunk of any kind ends (from the intact file's index).
events_before() { jq --argjson cut "$1" '[.chunk_list[] | select(.kind == "events" and .offset + .stored_size <= $cut) | .events] | add // 0' "$T/a.json"; }
valid_end() { jq --argjson cut "$1" '[.chunk_list[] | select(.offset + .stored_size <= $cut) | .offset + .stored_size] | max // 32' "$T/a.json"; }

# Cuts after the schema chunk (before it nothing can be recovered).
schema_end=$(jq '.chunk_list[] | select(.kind == "schema") | .offset + .stored_size' "$T/a.json")
bad=0 n=0
for cut in $schema_end $(awk -v s="$schema_end" -v n="$size" 'BEGIN { srand(5); for (i = 0; i < 12; i++) print s + int(rand() * (n - s)) }') $((size - 1)); do
	n=$((n + 1))
	head -c "$cut" "$T/a.st" >"$T/cut.st"
	if ! st-format recover "$T/cut.st" -o "$T/rec.st" >"$T/msg" 2>"$T/err"; then
		bad=$((bad + 1)); echo "cut at $cut: recover failed: $(cat "$T/err")"; continue
	fi
	if ! st-format verify -q "$T/rec.st"; then
		bad=$((bad + 1)); echo "cut at $cut: recovered file does not verify"; continue
	fi
	want=$(events_before "$cut")
	st-format cat "$T/rec.st" | sort >"$T/got"
	if [ "$(wc -l <"$T/got")" != "$want" ]; then
		bad=$((bad + 1)); echo "cut at $cut: kept $(wc -l <"$T/got") events, $want in complete chunks"
	elif [ -n "$(comm -13 "$T/all" "$T/got")" ]; then
		bad=$((bad + 1)); echo "cut at $cut: recovered events that were not in the file"
	elif ! grep -q " $want events; dropped $((cut - $(valid_end "$cut"))) bytes" "$T/msg"; then
		bad=$((bad + 1)); echo "cut at $cut: report '$(cat "$T/msg")', want $want events, dropped $((cut - $(valid_end "$cut")))"
	fi
done
[ $bad -eq 0 ] && pass "recover_${n}_truncations" || fail recover_truncations "$bad of $n cuts wrong"
check recover_keeps_metadata test "$(st-format info --json "$T/rec.st" | jq -r .metadata.tool)" = "st-format synth 0.1.0"
check recover_keeps_lost test "$(st-format info --json "$T/rec.st" | jq .lost_events)" = 3
check recover_records_damage test "$(st-format info --json "$T/rec.st" | jq -r '.metadata["recover.dropped_bytes"]')" -gt 0

# Cut inside the schema: nothing to rebuild from; one line, exit 1, no output.
head -c $((schema_end - 1)) "$T/a.st" >"$T/cut.st"
rm -f "$T/rec.st"
st-format recover "$T/cut.st" -o "$T/rec.st" 2>"$T/err"
check recover_without_schema_fails test $? = 1
check recover_without_schema_one_line grep -q "no schema" "$T/err"
check recover_without_schema_no_output test ! -e "$T/rec.st"

# A corrupted events chunk in the middle of a file with an intact index:
# every other chunk is kept.
read -r off stored ev < <(jq -r '[.chunk_list[] | select(.kind == "events")][3] | "\(.offset) \(.stored_size) \(.events)"' "$T/a.json")
cp "$T/a.st" "$T/bad.st"
printf 'XXXXXXXX' | dd of="$T/bad.st" bs=1 seek=$((off + stored / 2)) conv=notrunc status=none
st-format verify "$T/bad.st" 2>"$T/err"
check verify_rejects_corrupt_chunk test $? = 1
check verify_names_corrupt_chunk grep -q "at offset $off:" "$T/err"
st-format recover "$T/bad.st" -o "$T/rec2.st" >"$T/msg"
check recover_corrupt_chunk_exit test $? = 0
check recover_corrupt_chunk_verifies st-format verify -q "$T/rec2.st"
check recover_keeps_other_chunks test "$(st-format cat "$T/rec2.st" | wc -l)" = $((total - ev))
check recover_reports_corrupt_chunk grep -q "events; dropped $stored bytes" "$T/msg"

# An intact file comes back whole.
st-format recover "$T/a.st" -o "$T/rec3.st" >"$T/msg"
check recover_intact_whole diff -q "$T/all" <(st-format cat "$T/rec3.st" | sort)
check recover_intact_drops_nothing grep -q "dropped 0 bytes (damage: none)" "$T/msg"

# A file without footer (a killed recording: cut before the index chunk)
# with one bit flipped in a middle chunk's header and one in another's
# payload: the scan skips both and goes on, so recover keeps every other
# chunk, verify accepts what it wrote and info lists both damaged ranges.
flip_bit() { # FILE OFFSET: xor one bit of the byte at OFFSET
	local b
	b=$(od -An -tu1 -j "$2" -N1 "$1")
	printf "\\$(printf %03o $((b ^ 16)))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
index_off=$(jq '.chunk_list[] | select(.kind == "index") | .offset' "$T/a.json")
read -r seq1 off1 stored1 ev1 < <(jq -r '[.chunk_list[] | select(.kind == "events")][3] | "\(.seq) \(.offset) \(.stored_size) \(.events)"' "$T/a.json")
read -r seq2 off2 stored2 ev2 < <(jq -r '[.chunk_list[] | select(.kind == "events")][9] | "\(.seq) \(.offset) \(.stored_size) \(.events)"' "$T/a.json")
head -c "$index_off" "$T/a.st" >"$T/nofooter.st"
flip_bit "$T/nofooter.st" $((off1 + 8))
flip_bit "$T/nofooter.st" $((off2 + stored2 / 2))
st-format verify "$T/nofooter.st" 2>"$T/err"
check verify_rejects_footerless_damage test $? = 1
check verify_names_first_damage grep -q "nofooter.st: chunk $seq1 at offset $off1: chunk header checksum mismatch" "$T/err"
st-format info --json "$T/nofooter.st" >"$T/nf.json"
check info_lists_damaged_ranges test "$(jq -c '[.damaged_ranges[] | [.offset, .size, .first_seq, .missing_chunks]]' "$T/nf.json")" = "[[$off1,$stored1,$seq1,1],[$off2,$stored2,$seq2,1]]"
check info_counts_skipped test "$(jq -c '[.skipped_bytes, .missing_chunks]' "$T/nf.json")" = "[$((stored1 + stored2)),2]"
check info_text_shows_ranges grep -q "^  bytes $off2..$((off2 + stored2)) ($stored2), chunk $seq2 missing: chunk $seq2 at offset $off2: payload checksum mismatch" <(st-format info "$T/nofooter.st")
st-format recover "$T/nofooter.st" -o "$T/rec4.st" >"$T/msg"
check recover_footerless_damage_exit test $? = 0
check recover_footerless_damage_verifies st-format verify -q "$T/rec4.st"
st-format cat "$T/rec4.st" | sort >"$T/got"
check recover_keeps_chunks_after_damage test "$(wc -l <"$T/got")" = $((total - ev1 - ev2))
check recover_footerless_no_foreign_events test -z "$(comm -13 "$T/all" "$T/got")"
check recover_reports_footerless_damage grep -q "events; dropped $((stored1 + stored2)) bytes, 2 chunks missing (damage: chunk $seq1 at offset $off1:" "$T/msg"

# One whole events chunk cut out of a closed file (the trailer then points
# past the moved index): the chunk after it is intact and kept, so recover
# loses exactly the cut chunk's events; info shows the cut (no damaged range:
# no bytes were skipped) where that one chunk is missing. A cut in the tail
# counts as unknown.
read -r seq3 off3 stored3 ev3 < <(jq -r '[.chunk_list[] | select(.kind == "events")][5] | "\(.seq) \(.offset) \(.stored_size) \(.events)"' "$T/a.json")
{ head -c "$off3" "$T/a.st"; tail -c +$((off3 + stored3 + 1)) "$T/a.st"; } >"$T/holed.st"
st-format recover "$T/holed.st" -o "$T/rec5.st" >"$T/msg"
check recover_whole_chunk_cut_exit test $? = 0
st-format cat "$T/rec5.st" | sort >"$T/got"
check recover_whole_chunk_cut_keeps_next test "$(wc -l <"$T/got")" = $((total - ev3))
check recover_whole_chunk_cut_no_foreign_events test -z "$(comm -13 "$T/all" "$T/got")"
st-format info --json "$T/holed.st" >"$T/holed.json"
check info_whole_chunk_cut test "$(jq -c '[.cuts[] | [.offset, .first_seq, .missing_chunks]]' "$T/holed.json")" = "[[$off3,$seq3,1]]"
check info_whole_chunk_cut_no_empty_range test "$(jq '[.damaged_ranges[] | select(.size == 0)] | length' "$T/holed.json")" = 0
check info_whole_chunk_cut_text grep -q "cut before byte $off3: chunk $seq3 missing" <(st-format info "$T/holed.st")
head -c $((off3 + 100)) "$T/a.st" >"$T/tail.st"
st-format info --json "$T/tail.st" >"$T/tail.json"
check info_tail_missing_unknown test "$(jq -c '.damaged_ranges[0] | [.first_seq, .missing_chunks]' "$T/tail.json")" = "[$seq3,null]"
check info_tail_missing_unknown_text grep -q "chunks from $seq3 missing: how many is unknown" <(st-format info "$T/tail.st")
