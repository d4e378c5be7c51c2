#!/usr/bin/env bash
# The `block` preset: two probe runs per request, and the same analysis as a
# probe per stage. One fio workload (psync, O_DIRECT, 4k random reads, each
# block once, a loop device over /dev/shm) is recorded at the same time by
# two st-records: -e block (block_rq_issue_stamped + block_rq_complete_compact) and
# -e block-all (block_bio_queue, block_getrq, block_rq_issue, block_rq_complete).
#
# Probe runs come from the kernel's BPF statistics (bpf_prog_info run_cnt over
# the recording window, stored by st-record as probe.* metadata). The probes
# run for every disk's I/O (the device filter is inside them), other users'
# too, so runs are counted per request issued on any disk: the runs of the
# program attached to block_rq_issue, which the kernel runs once per request
# dispatched to a driver. (/proc/diskstats cannot count them: under other
# users' load its request counts and the tracepoint's differed by 2:1 both
# ways.) block_bio_complete is left out: it runs only for bio-based disks
# (zram), once per bio, which issue no request.
#   block: <= 2 runs per request, +1 % for completions without an issue
#   (flushes, 0.25 % seen), requeues and splits (one more run each);
#   block-all: >= 3.5 (4 per unmerged request).
#
# Per I/O, the two recordings see the same tracepoints for D and C: each
# timestamp pair differs by the run time of the other recorder's program in
# between (measured here: median 0.03-0.09 us) and, now and then, an
# interrupt taken between the two (up to 47 us on this loaded 2-CPU machine).
# Q is the bio's queue stamp where the kernel keeps one (4.19-6.17); 6.18
# stamps bios only under blk-iolatency, and then the `block` preset takes Q
# at the request's allocation (G): its Q2C is the full recording's Q2C - Q2G.
# That G is the kernel's stamp, the full recording's the block_getrq probe a
# little later in the allocation (median 0.27 us later, p90 0.7 us, at load
# average 14; a fifth of the I/Os over 1 us in a busier moment).
#   median within 1 us, 99 % within 50 us, for D2C and for Q2C.
# Swapped or missing stamps (Q at the issue, say) move every I/O's Q2C by
# G2D, 1.4-4 us here, so the median fails them.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
rec_require_bpf record_stamps
rec_require_fio_stats record_stamps

IOS=4000
st_tmpdir T
st_loopdev L 64

# Runs per request issued, each preset alone.
runs_per_request() {
	local preset=$1 issue=$2 out="$T/runs-$1.sttrace"
	rec_start "$out" "$T/runs.log" -e "$preset" -d "$L" ||
		{ fail record_stamps_start "$(cat "$T/runs.log")"; exit 1; }
	fio --name=runs --filename="$L" --rw=randread --bs=4k --direct=1 --ioengine=psync \
		--size=32M --number_ios=$IOS >/dev/null 2>&1
	rec_stop
	awk -v r="$(rec_probe_runs "$out" 'block_(rq_.*|split|getrq|bio_(queue|backmerge|frontmerge))')" \
		-v n="$(rec_probe_runs "$out" "$issue")" \
		'BEGIN { printf "%.3f (%d runs, %d requests)", n ? r / n : 99, r, n }'
}
light_ratio=$(runs_per_request block block_rq_issue_stamped)
full_ratio=$(runs_per_request block-all block_rq_issue)
if awk -v l="${light_ratio%% *}" -v f="${full_ratio%% *}" 'BEGIN { exit !(l >= 2 && l <= 2.02 && f >= 3.5) }'; then
	pass record_stamps_two_runs_per_request
else
	fail record_stamps_two_runs_per_request "runs per request: block $light_ratio, want <= 2.02; block-all $full_ratio, want >= 3.5"
fi

# The same I/O recorded by both presets at once.
rec_start "$T/light.sttrace" "$T/light.log" -e block -d "$L" ||
	{ fail record_stamps_start "$(cat "$T/light.log")"; exit 1; }
LIGHT=$REC_PID
rec_start "$T/full.sttrace" "$T/full.log" -e block-all -d "$L" ||
	{ fail record_stamps_start "$(cat "$T/full.log")"; exit 1; }
FULL=$REC_PID
fio --name=stamps --filename="$L" --rw=randread --bs=4k --direct=1 --ioengine=psync \
	--size=32M --number_ios=$IOS --output-format=json --output="$T/fio.json" >/dev/null 2>&1
kill -INT "$LIGHT" "$FULL"
wait "$LIGHT" "$FULL"
fio_ios=$(jq '.jobs[0].read.total_ios' "$T/fio.json")

# per I/O: "sector Q2G D2C Q2C" from the analyzer's listing of every I/O
per_io() {
	st-analyze --csv --dev "$L" --quantile 0.0001 --top 1000000 --stage D2C "$1" 2>/dev/null |
		awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
			$1 ~ /^[0-9]+$/ { q2g = $c["Q2G_us"]; print $c["sector"], (q2g == "" ? 0 : q2g),
				$c["D2C_us"], $c["Q2C_us"] }' | sort -n
}
per_io "$T/light.sttrace" >"$T/light.io"
per_io "$T/full.sttrace" >"$T/full.io"
# This kernel now and then emits no block_rq_complete for a request (both
# recordings miss the same ones; record/README.md): those I/Os are
# incomplete. Under other users' load up to 6 in 4000 were seen: <= 0.5 %.
devno=$(rec_devno "$L")
uncompleted=$(($(rec_rows "$T/light.sttrace" block_rq_issue_stamped dev | grep -cx "$devno") -
	$(rec_completed "$T/light.sttrace" dev | grep -cx "$devno")))
light_ios=$(wc -l <"$T/light.io")
if [ "$light_ios" -eq "$(wc -l <"$T/full.io")" ] && [ $((light_ios + uncompleted)) -eq "$fio_ios" ] &&
   [ "$uncompleted" -le $((IOS / 200)) ]; then
	pass record_stamps_io_count
else
	fail record_stamps_io_count "fio $fio_ios I/Os, block $light_ios (+ $uncompleted never completed), block-all $(wc -l <"$T/full.io")"
fi

# kernel keeps bio queue stamps: some stored bio has its `stamped` bit (ST_STAMPED_QUEUE)
qstamped=$(rec_rows "$T/light.sttrace" block_rq_issue_stamped stamped |
	awk "$AWK_HEX"' hex($1) >= 2 { n++ } END { print n + 0 }')
join "$T/light.io" "$T/full.io" | awk -v qs="$qstamped" '
	function abs(x) { return x < 0 ? -x : x }
	{ n++; d = abs($3 - $6); q = abs($4 - (qs ? $7 : $7 - $5))
	  d1 += d <= 1; d50 += d <= 50; q1 += q <= 1; q50 += q <= 50 }
	END { printf "%d %d %d %d %d\n", n, d1, d50, q1, q50 }' >"$T/agree"
read -r n d1 d50 q1 q50 <"$T/agree"
# within N1 N50: the median within 1 us (half of them, at least), 99 % within 50 us
within() { [ "$n" -eq "$light_ios" ] && [ $(($1 * 2)) -ge "$n" ] && [ $(($2 * 100)) -ge $((n * 99)) ]; }
if within "$d1" "$d50"; then
	pass record_stamps_same_d2c
else
	fail record_stamps_same_d2c "of $n I/Os joined by sector, $d1 within 1 us, $d50 within 50 us"
fi
if within "$q1" "$q50"; then
	pass record_stamps_same_q2c
else
	fail record_stamps_same_q2c "of $n I/Os joined by sector, $q1 within 1 us, $q50 within 50 us (bio stamps: $qstamped)"
fi
rec_check_no_loss record_stamps_no_loss "$T/light.sttrace"

# Where the kernel keeps no stamp (forced here by --no-stamps), st-record
# records the stage's own probe instead and says so once per probe; the
# analysis then takes Q and G from those probes (Q2G > 0: the allocation
# comes after the queueing, by 0.4 us or more here).
st-record -o "$T/probes.sttrace" -e block --no-stamps -d "$L" -- fio --name=probes \
	--filename="$L" --rw=randread --bs=4k --direct=1 --ioengine=psync --size=32M \
	--number_ios=500 >/dev/null 2>"$T/probes.log"
said_q=$(grep -c "no-stamps: Q from its probe: recording block/block_bio_queue too" "$T/probes.log")
said_g=$(grep -c "no-stamps: G from its probe: recording block/block_getrq too" "$T/probes.log")
queued=$(rec_rows "$T/probes.sttrace" block_bio_queue dev | grep -cx "$devno")
allocated=$(rec_rows "$T/probes.sttrace" block_getrq dev | grep -cx "$devno")
q2g=$(st-analyze --csv --dev "$L" "$T/probes.sttrace" 2>/dev/null | awk -F, '$7 == "Q2G" { print $8, $9 }')
if [ "$said_q" = 1 ] && [ "$said_g" = 1 ] && [ "$queued" = 500 ] && [ "$allocated" = 500 ] &&
   awk -v n="${q2g% *}" -v min="${q2g#* }" 'BEGIN { exit !(n >= 498 && min > 0) }'; then
	pass record_stamps_fallback_probes
else
	fail record_stamps_fallback_probes "said Q $said_q, G $said_g times (want 1 each); $queued queued, $allocated allocated of 500; Q2G n min: $q2g: $(tr '\n' ' ' <"$T/probes.log")"
fi

# A bio-based disk (zram: no request layer, so no request stamps): with -d
# naming it, `block` records block_bio_queue too, and the analysis counts
# fio's I/Os with their Q2C.
if zram_id=$(cat /sys/class/zram-control/hot_add 2>/dev/null); then
	at_exit "echo $zram_id >/sys/class/zram-control/hot_remove"
	echo 64M >"/sys/block/zram$zram_id/disksize"
	Z=/dev/zram$zram_id
	rec_start "$T/zram.sttrace" "$T/zram.log" -e block -d "$Z" ||
		{ fail record_stamps_bio_based_disk "$(cat "$T/zram.log")"; exit 1; }
	fio --name=zram --filename="$Z" --rw=randread --bs=4k --direct=1 --ioengine=psync \
		--size=32M --number_ios=500 >/dev/null 2>&1
	rec_stop
	said=$(grep -c "names a bio-based disk .*recording block/block_bio_queue too" "$T/zram.log")
	q2c=$(st-analyze --csv --dev "$Z" "$T/zram.sttrace" 2>/dev/null | awk -F, '$7 == "Q2C" { print $8 }')
	if [ "$said" = 1 ] && [ "$q2c" = 500 ]; then
		pass record_stamps_bio_based_disk
	else
		fail record_stamps_bio_based_disk "said $said times (want 1); Q2C of ${q2c:-no} I/Os, want 500: $(tr '\n' ' ' <"$T/zram.log")"
	fi
else
	skip record_stamps_bio_based_disk "no zram device can be added (zram module not loaded)"
fi
