#!/usr/bin/env bash
# What st-analyze --follow shows, against the offline report and st-format
# info of the same recording (fio on two loop devices, st-record of every
# device):
# - followed as it is written with --dev, --by dev and a stortrace config
#   (filter.* and statistical_params.pmc_inv 500: a view every 500 ms): the
#   views hold rows of the filtered device only, come twice a second, and the
#   final report is the offline one with the same options;
# - the complete file followed afterwards (a follower catching up reads it
#   at once): each device's reads at the offline report's IOPS (over the
#   time the reads went on, not the follower's reading speed) and MB/s, p50/p99/p99.9
#   of total and of the tail's stage those of the offline report, and the
#   ring buffer use st-format info reports.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"
. "$(dirname "$0")/common.sh"

live_require live.views.filter live.views.config live.views.report live.views.rates \
	live.views.quantiles live.views.ring

IOS=6000	# 3 s at 2000 IOPS
st_tmpdir dir
st_loopdev a 64
st_loopdev b 64
name_a=$(basename "$a")
name_b=$(basename "$b")
cat >"$dir/stortrace.json" <<'JSON'
{
    "filter": { "enable": true, "quantile": 99, "stage": "block_io" },
    "statistical_params": { "pmc_inv": 500 }
}
JSON
opts=(--dev "$a" --by dev --config "$dir/stortrace.json")

rec_start "$dir/run.sttrace" "$dir/record.log" -e block ||
	{ fail live.views.filter "st-record did not start"; exit 1; }
st-analyze --follow "${opts[@]}" "$dir/run.sttrace" 2>"$dir/follow.err" | live_stamp >"$dir/follow.out" &
follower=$!
at_exit "kill -KILL $follower"
start=$EPOCHREALTIME
live_fio "$a" "$dir/fio_a.json" $IOS &
fio_a=$!
live_fio "$b" "$dir/fio_b.json" $IOS
wait $fio_a
end=$EPOCHREALTIME
sleep 0.5
rec_stop
for ((i = 0; i < 100; i++)); do kill -0 $follower 2>/dev/null || break; sleep 0.1; done
wait $follower
cut -d' ' -f2- "$dir/follow.out" >"$dir/follow.text"

# The views' groups (--by dev): the lines that are neither a header nor a row.
groups=$(sed '/^--- end of the recording/,$d' "$dir/follow.text" |
	awk '!/^(---|  |tail:|top |\(|$)/ && $2 != "IOPS"' | sort | uniq -c)
if [ "$(echo "$groups" | awk '{ print $2 }')" = "$name_a" ] &&
	grep -q "^  last .* s  *[1-9][0-9]* " "$dir/follow.text"; then
	pass live.views.filter
else
	fail live.views.filter "groups in the views: $(echo "$groups" | tr '\n' ' ') $(head -2 "$dir/follow.err")"
fi
# pmc_inv 500: two views a second while fio ran (less one for the edges)
want=$(awk -v s="$start" -v e="$end" 'BEGIN { print int(2 * (e - s)) - 1 }')
got=$(awk -v s="$start" -v e="$end" '$2 == "---" && $3 == "live" && $1 >= s && $1 <= e' \
	"$dir/follow.out" | wc -l)
if [ "$want" -ge 4 ] && [ "$got" -ge "$want" ]; then
	pass live.views.config
else
	fail live.views.config "$got views while fio ran $(awk -v s="$start" -v e="$end" \
		'BEGIN { print e - s }') s, want $want"
fi
st-analyze "${opts[@]}" "$dir/run.sttrace" >"$dir/offline.out" 2>&1
live_report "$dir/follow.text" >"$dir/final.out"
if [ -s "$dir/final.out" ] && cmp -s "$dir/final.out" "$dir/offline.out"; then
	pass live.views.report
else
	fail live.views.report "$(diff "$dir/final.out" "$dir/offline.out" | head -5 | tr '\n' ' ')"
fi

# --- the complete file, caught up with at once
st-analyze --follow "$dir/run.sttrace" >"$dir/catch.out" 2>"$dir/catch.err"
st-analyze --csv "$dir/run.sttrace" >"$dir/offline.csv" 2>/dev/null
st-format info "$dir/run.sttrace" >"$dir/info.txt"
sed '/^--- end of the recording/,$d' "$dir/catch.out" >"$dir/catch.views"
# view_row GROUP: the run's row of GROUP in the last view (IOPS MB/s p50 p99 p99.9 stage p50 p99 p99.9 errors).
view_row() {
	awk -v g="$1" '/^--- live/ { found = "" } !/^ / { group = $0 } group == g && /^  run so far/ { found = $0 }
		END { print found }' "$dir/catch.views" | cut -c 17-
}
# offline COLUMN GROUP STAGE: a column of the offline CSV.
offline() {
	awk -F, -v c="$1" -v g="$2" -v s="$3" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$1 == g && $7 == s { print $(col[c]); exit }' "$dir/offline.csv"
}
rates="" quantiles=""
for name in "$name_a" "$name_b"; do
	read -r iops mbs p50 p99 p999 stage s50 s99 s999 _ <<<"$(view_row "$name read")"
	oiops=$(offline iops "$name read" total)
	rates+="$name: $iops IOPS $mbs MB/s (offline ${oiops:-no} IOPS, $(offline mb_s "$name read" total) MB/s); "
	awk -v v="$iops" -v o="$oiops" -v m="$mbs" -v om="$(offline mb_s "$name read" total)" \
		'BEGIN { d = v - o; e = m - om; exit !(o > 0 && d * d <= 1 && e * e <= 0.0001) }' ||
		rates+="WRONG; "
	for q in "total $p50 $p99 $p999" "$stage $s50 $s99 $s999"; do
		read -r st v50 v99 v999 <<<"$q"
		quantiles+="$name $st: $v50 $v99 $v999 ($(offline p50_us "$name read" "$st") $(offline p99_us \
			"$name read" "$st") $(offline p99_9_us "$name read" "$st")); "
		for c in "p50_us $v50" "p99_us $v99" "p99_9_us $v999"; do
			set -- $c
			# the view prints 0.1 us, the CSV 0.001 us: both roundings apart, 0.0505
			# (a 16.0504 us p99 is 16.1 and 16.050; the bound 0.05 failed on it)
			awk -v v="$2" -v o="$(offline "$1" "$name read" "$st")" \
				'BEGIN { d = v - o; exit !(o != "" && d * d <= 0.0505 * 0.0505) }' || quantiles+="WRONG; "
		done
	done
done
[[ "$rates" != *WRONG* ]] && pass live.views.rates || fail live.views.rates "$rates"
[[ "$quantiles" != *WRONG* ]] && pass live.views.quantiles || fail live.views.quantiles "$quantiles"
ring=$(awk '/^ring buffer/ { print $7, $3 }' "$dir/info.txt")
view_ring=$(grep -o 'ring buffer: at most [0-9]* of [0-9]* bytes' "$dir/catch.views" | tail -1 | awk '{ print $5, $7 }')
if [ -n "$ring" ] && [ "$view_ring" = "$ring" ]; then
	pass live.views.ring
else
	fail live.views.ring "view: '$view_ring', st-format info: '$ring' (used, size)"
fi
echo "live.views: $got views of 500 ms while fio ran; $rates"
