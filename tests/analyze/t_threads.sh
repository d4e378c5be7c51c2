#!/usr/bin/env bash
# st-analyze --threads: how many CPUs a pass uses changes where the work runs,
# never what it prints. Real recordings of fio on a loop device (`-e all` and
# `-e block`, the two readers' paths: stamped issues put back in time order,
# compact completions made whole) are analyzed with one thread (read and
# correlated in turn), two (one more decodes the chunks ahead) and four (two
# files: a thread each, and where the CPUs allow, one more each decoding its
# chunks ahead): the summary,
# --quantile, their CSV and the time series are the same byte for byte, and
# each recording's read count equals fio's. Each preset is recorded twice:
# for fio alone (`-- fio`: its bios' queueings are stored) and system-wide
# (`-d` alone, as on a production host: no queueing is stored, and the
# reader makes each from its stamped issue through the reorder window).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"
rec_require_bpf analyze_threads
rec_require_fio analyze_threads

st_tmpdir T
st_loopdev L 128
FIO=(fio --name=t --filename="$L" --direct=1 --rw=randrw --rwmixread=70 --bs=4k --size=100M
	--number_ios=6000 --numjobs=2 --ioengine=psync --group_reporting --output-format=json)
for preset in all block; do
	check "analyze_threads_record_$preset" st-record -o "$T/$preset.sttrace" -e "$preset" -d "$L" -- \
		"${FIO[@]}" --output="$T/$preset.json"
	if rec_start "$T/sys-$preset.sttrace" "$T/sys-$preset.log" -e "$preset" -d "$L"; then
		"${FIO[@]}" --output="$T/sys-$preset.json" >/dev/null 2>&1
		fio_rc=$?
		rec_stop
		rec_rc=$?
		if [ "$fio_rc" -eq 0 ] && [ "$rec_rc" -eq 0 ]; then
			pass "analyze_threads_record_sys-$preset"
		else
			fail "analyze_threads_record_sys-$preset" "fio exited $fio_rc, st-record $rec_rc: $(tail -1 "$T/sys-$preset.log")"
		fi
	else
		fail "analyze_threads_record_sys-$preset" "$(cat "$T/sys-$preset.log")"
	fi
	# what makes it system-wide for the reader: stamped issues, no stored queueing
	queued=$(rec_count "$T/sys-$preset.sttrace" block_bio_queue)
	stamped=$(rec_count "$T/sys-$preset.sttrace" block_rq_issue_stamped)
	if [ "$queued" -eq 0 ] && [ "$stamped" -ge 6000 ]; then
		pass "analyze_threads_sys_unqueued_$preset"
	else
		fail "analyze_threads_sys_unqueued_$preset" "sys-$preset.sttrace holds $queued block_bio_queue and $stamped stamped issues"
	fi
done
PRESETS="all block sys-all sys-block"

# two threads or more decode each file's chunks ahead (ST_CURSOR_AHEAD), which
# takes a file of several events chunks to do anything
for preset in $PRESETS; do
	chunks=$(st-format info "$T/$preset.sttrace" | sed -n 's/^chunks .* \([0-9]*\) events,.*/\1/p')
	if [ "${chunks:-0}" -ge 4 ]; then
		pass "analyze_threads_chunks_$preset"
	else
		fail "analyze_threads_chunks_$preset" "$preset.sttrace has ${chunks:-no} events chunks: too few to decode ahead"
	fi
done

i=0
for args in "" "--quantile 99.9 --top 50" "--csv" "--csv --quantile 99 --top 100000" "--interval 200ms --by comm"; do
	i=$((i + 1))
	for files in all.sttrace block.sttrace sys-all.sttrace sys-block.sttrace "all.sttrace block.sttrace"; do
		set -- $files
		paths=("${@/#/$T/}")
		differ=""
		# shellcheck disable=SC2086
		st-analyze "${paths[@]}" $args --threads 1 >"$T/one" 2>&1
		for n in 2 4; do
			# shellcheck disable=SC2086
			st-analyze "${paths[@]}" $args --threads $n >"$T/many" 2>&1
			cmp -s "$T/one" "$T/many" || differ="$differ --threads $n"
		done
		name="analyze_threads_same_${i}_$(echo "$files" | tr -c 'a-z\n' '_' | tr -d '\n')"
		if [ -s "$T/one" ] && [ -z "$differ" ]; then
			pass "$name"
		else
			fail "$name" "st-analyze $files $args: --threads 1 differs from$differ: $(diff "$T/one" "$T/many" | head -3 | tr '\n' ' ')"
		fi
	done
done

# the reports are right, not only alike: each recording's reads are fio's (the
# kernel now and then runs no completion probe: those I/Os are incomplete)
for preset in $PRESETS; do
	want=$(jq '.jobs[0].read.total_ios' "$T/$preset.json")
	got=$(st-analyze "$T/$preset.sttrace" --csv --by op --dev "$L" --threads 2 2>/dev/null |
		awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
			$(col["group"]) == "read" && $(col["stage"]) == "total" { print $(col["n"]) }')
	devno=$(rec_devno "$L")
	missing=$(($(rec_issued "$T/$preset.sttrace" dev | grep -cx "$devno") - $(rec_completed "$T/$preset.sttrace" dev | grep -cx "$devno")))
	if [ -n "$got" ] && [ "$got" -le "$want" ] && [ $((got + missing)) -ge "$want" ]; then
		pass "analyze_threads_fio_reads_$preset"
	else
		fail "analyze_threads_fio_reads_$preset" "fio read $want, st-analyze --threads 2 counts ${got:-none} (+$missing requests without a completion event)"
	fi
done
