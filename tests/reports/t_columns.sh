#!/usr/bin/env bash
# The text reports show what was measured, on one screen; CSV keeps every
# column. On a real recording (st-record -e all -- fio psync 4 KiB random
# reads and writes, two jobs, on a loop device, as make demo records):
# - the summary, --quantile 99.9 --top 5 and --why fit 200 columns;
# - no row or column of them holds only zeros or only "-";
# - a cause whose events the trace holds none of (st-format info: throttle
#   from block_bio_held, dirty from balance_dirty_pages, reclaim from the
#   mm_vmscan events) has no text row or column, and is empty in the CSV,
#   never 0;
# - --wide and --columns show more; the --quantile CSV has the columns the
#   man page lists, in its order, also for a recording without the why events.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"
rec_require_bpf reports_columns

st_tmpdir T
st_loopdev L 128
NAME=$(basename "$L")

FIO=(fio --name=cols --filename="$L" --direct=1 --rw=randrw --rwmixread=70 --bs=4k --size=100M
	--time_based --numjobs=2 --ioengine=psync --group_reporting --output="$T/fio.out")
check columns.record st-record -o "$T/all.sttrace" -e all -d "$L" -- "${FIO[@]}" --runtime=3
check columns.record_block st-record -o "$T/block.sttrace" -e block -d "$L" -- "${FIO[@]}" --runtime=1

# widest FILE: its longest line
widest() { awk '{ n = length($0) > n ? length($0) : n } END { print n + 0 }' "$1"; }
# fits NAME FILE: every line of FILE within 200 characters
fits() {
	local w
	w=$(widest "$2")
	[ "$w" -le 200 ] && [ -s "$2" ] && pass "$1" || fail "$1" "widest line $w characters (or no output)"
}

st-analyze "$T/all.sttrace" >"$T/sum.txt" 2>&1
st-analyze "$T/all.sttrace" --quantile 99.9 --top 5 >"$T/q.txt" 2>&1
st-analyze "$T/all.sttrace" --why >"$T/why.txt" 2>&1
fits columns.summary.width "$T/sum.txt"
fits columns.quantile.width "$T/q.txt"
fits columns.why.width "$T/why.txt"

# summary rows "  STAGE n min avg p50 p90 p99 p99.9 p99.95 max": none all zero
bad=$(awk 'NF == 10 && $2 ~ /^[0-9]+$/ { z = 1; for (i = 3; i <= 10; i++) if ($i != "0.0") z = 0; if (z) print $1 }' \
	"$T/sum.txt" | sort -u | tr '\n' ' ')
[ -z "$bad" ] && pass columns.summary.no_zero_rows || fail columns.summary.no_zero_rows "all-zero rows: $bad"

# the list: no column whose every row is - or 0.0
bad=$(awk '$1 == "#" { for (i = 1; i <= NF; i++) h[i] = $i; nh = NF; next }
	nh && $1 ~ /^[0-9]+$/ { rows++; for (i = 3; i <= nh; i++) if ($i != "-" && $i != "0.0") data[i] = 1 }
	END { for (i = 3; i <= nh; i++) if (rows && !data[i] && h[i] != "file") printf "%s ", h[i] }' "$T/q.txt")
ncols=$(awk '$1 == "#" { print NF; exit }' "$T/q.txt")
if [ -z "$bad" ] && [ "${ncols:-99}" -le 20 ]; then
	pass columns.quantile.only_data
else
	fail columns.quantile.only_data "$ncols columns, empty ones: $bad"
fi

# causes the trace holds no event of
st-format info "$T/all.sttrace" >"$T/info.txt"
absent=""
grep -q "^  block_bio_held " "$T/info.txt" || absent+=" throttle"
grep -q "^  balance_dirty_pages " "$T/info.txt" || absent+=" dirty"
grep -q "^  mm_vmscan_" "$T/info.txt" || absent+=" reclaim"
st-analyze "$T/all.sttrace" --csv >"$T/sum.csv" 2>/dev/null
st-analyze "$T/all.sttrace" --quantile 99.9 --top 50 --csv >"$T/q.csv" 2>/dev/null
st-analyze "$T/all.sttrace" --why --csv >"$T/why.csv" 2>/dev/null
bad=""
for c in $absent; do
	awk -v c="$c" '$1 == c' "$T/sum.txt" "$T/why.txt" | grep -q . && bad+="$c: a text row; "
	awk -v c="$c" '$1 == "#" { for (i = 1; i <= NF; i++) if ($i == c) f = 1 } END { exit !f }' "$T/q.txt" &&
		bad+="$c: a list column; "
	awk -F, -v c="$c" 'NR > 1 && $7 == c' "$T/sum.csv" | grep -q . && bad+="$c: a summary CSV row; "
	awk -F, -v c="${c}_us" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next } $k != "" { n++ }
		END { exit !(k && !n) }' "$T/q.csv" || bad+="$c: list CSV column missing or not empty; "
	awk -F, -v c="$c" '$4 == "cause" && $5 == c && $6 != ""' "$T/why.csv" | grep -q . && bad+="$c: a why CSV value; "
done
if [ -n "$absent" ] && [ -z "$bad" ]; then
	pass columns.unmeasured_absent
else
	fail columns.unmeasured_absent "causes without events: '${absent}'; $bad"
fi

# the list's CSV columns, as st-analyze(1) lists them, with or without the why events
want="rank,start_s,total_us,sys2fs_us,fs_us,fs2q_us,sys2q_us,Q2G_us,G2I_us,I2D_us,D2C_us,Q2C_us,C2ret_us,wb_us,jnl_us,flush_us,reap_us,runq_us,svc_runq_us,lock_us,throttle_us,dirty_us,reclaim_us,other_us,cache,op,dev,sector,bytes,pid,tid,comm,file,merged,split,requeues,host"
st-analyze "$T/block.sttrace" --quantile 99 --top 5 --csv >"$T/qb.csv" 2>/dev/null
bad=""
for f in q qb; do
	h=$(head -1 "$T/$f.csv")
	[ "$h" = "$want" ] || bad+="$f.csv header $h; "
	n=$(awk -F, -v n="$(echo "$want" | tr ',' '\n' | wc -l)" 'NF != n { b++ } END { print b + 0 }' "$T/$f.csv")
	[ "$n" = 0 ] || bad+="$f.csv: $n rows of another width; "
done
[ -z "$bad" ] && pass columns.csv_fixed || fail columns.csv_fixed "$bad"
# no cause known without the why events: empty, never 0
bad=$(awk -F, 'NR > 1 { for (i = 18; i <= 25; i++) if ($i != "") n++ } END { print n + 0 }' "$T/qb.csv")
[ "$bad" = 0 ] && pass columns.csv_causes_unknown_empty ||
	fail columns.csv_causes_unknown_empty "$bad cause or cache values in a recording without the why events"

# --wide: every stage and column; --columns: these too
st-analyze "$T/all.sttrace" --quantile 99.9 --top 5 --wide >"$T/qw.txt" 2>&1
st-analyze "$T/all.sttrace" --quantile 99.9 --top 5 --columns tid,throttle >"$T/qc.txt" 2>&1
hw=$(awk '$1 == "#" { print; exit }' "$T/qw.txt")
hc=$(awk '$1 == "#" { print; exit }' "$T/qc.txt")
hd=$(awk '$1 == "#" { print; exit }' "$T/q.txt")
if [ "$(wc -w <<<"$hw")" -eq 33 ] && grep -qw tid <<<"$hw" && grep -qw tid <<<"$hc" &&
	grep -qw throttle <<<"$hc" && ! grep -qw tid <<<"$hd" && [ "$(wc -w <<<"$hc")" -eq $(($(wc -w <<<"$hd") + 2)) ]; then
	pass columns.wide_and_columns
else
	fail columns.wide_and_columns "default: $hd; --wide: $hw; --columns tid,throttle: $hc"
fi
st-analyze "$T/all.sttrace" --wide >"$T/sumw.txt" 2>&1
if [ "$(grep -c "^  lock " "$T/sumw.txt")" -ge 2 ] && [ "$(wc -l <"$T/sumw.txt")" -ge "$(wc -l <"$T/sum.txt")" ]; then
	pass columns.summary_wide
else
	fail columns.summary_wide "--wide summary: $(grep -c . "$T/sumw.txt") lines, default $(grep -c . "$T/sum.txt")"
fi

st-analyze "$T/all.sttrace" --quantile 99 --columns tid,nosuch >"$T/o" 2>"$T/e"
rc=$?
if [ $rc -eq 2 ] && [ "$(wc -l <"$T/e")" -eq 1 ] && grep -q "nosuch" "$T/e" && [ ! -s "$T/o" ]; then
	pass columns.bad_name
else
	fail columns.bad_name "exit $rc: $(cat "$T/e")"
fi
echo "columns: $NAME, widest summary $(widest "$T/sum.txt"), list $(widest "$T/q.txt") ($ncols columns), why $(widest "$T/why.txt"); causes without events:$absent"
