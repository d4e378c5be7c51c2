#!/usr/bin/env bash
# Recordings of the default block preset (`-e block`: one stamped issue
# event per request, record/README.md) exported with `st-format convert
# --to blktrace`, read by the real blktrace tools. The stamped issue stands
# for the Q, M and G actions of the request's bios (analyze/lib/input.c), so
# the export has them although no probe saw them:
#   - blkparse reads the files without a complaint;
#   - its action counts are those the stamped issues stand for, counted
#     here from their fields (record/README.md, spec section 11): per
#     issue, a Q for each bio of the request (nr_bios: the bios past the 4
#     stored too, as the kernel's merge count has them), each Q but the
#     first also an M, a G when the
#     allocation time is stamped and the request has bios, a D; a C per
#     completion; an issue after a requeue of its request is a D only.
#     Where the recording has the Q of each bio (`-- CMD`), Q is those and
#     each stored bio but the first an M;
#   - `convert --to blkparse` prints exactly blkparse's text of the files;
#   - st-analyze counts as many merged bios as there are M actions (also
#     in the `-- CMD` recording, whose Q come from block_bio_queue, and
#     whose stamped issues it reads as stored, their G and M resolved in
#     them: ST_CURSOR_STAMPED);
#   - a span from Q to G by sector over the `-- CMD` recording pairs as
#     many as there are G actions: a --span reads the G events themselves,
#     in time order (the stamped issues made whole);
#   - btt's Q2C and D2C counts and averages equal st-analyze's on the
#     direct recording (tolerance in blktrace.sh, bt_btt_agrees);
#   - `import-blktrace` of the exported files, which rebuilds identities
#     by sector as btt does, gives st-analyze as many I/Os, and per device
#     and operation as many merged bios (this needs the kernel's order of
#     the actions: a merge after the G of the request it joins, G the size
#     of the first bio).
# Two recordings made without `-- CMD` (which would add block_bio_queue),
# so Q and M come from the stamps alone: fio O_DIRECT 4k random reads and
# writes on a raw loop device, and fio buffered random writes with fsync
# on ext4 from two jobs (merged bios, flushes without bios, two CPUs).
# A third with `-- fio`, so with the Q of fio's bios: 512-byte O_DIRECT
# writes on ext4 (4 KiB blocks), half of whose requests merge two bios.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"
. "$(dirname "$0")/blktrace.sh"

TESTS="convert.stamped.blkparse_reads convert.stamped.counts convert.stamped.text
	convert.stamped.btt import.stamped.roundtrip analyze.stamped.merged analyze.stamped.span"
bt_setup "$TESTS" convert.stamped.record

# record NAME DEV FIO_ARGS...: fio while st-record -e block records DEV.
record() {
	local name=$1 dev=$2
	shift 2
	rec_start "$dir/$name.sttrace" "$dir/$name.rec.log" -e block -d "$dev" ||
		{ fail convert.stamped.record "st-record did not start"; exit 1; }
	fio --name="$name" "$@" >"$dir/$name.fio.log" 2>&1 ||
		{ fail convert.stamped.record "fio failed: $(tail -1 "$dir/$name.fio.log")"; exit 1; }
	rec_stop || { fail convert.stamped.record "st-record failed: $(tail -1 "$dir/$name.rec.log")"; exit 1; }
	if [ "$(rec_count "$dir/$name.sttrace" block_rq_issue_stamped)" = 0 ] ||
		[ "$(rec_count "$dir/$name.sttrace" block_bio_queue)" != 0 ]; then
		fail convert.stamped.record "$name: not a recording of stamped issues alone"
		exit 1
	fi
}
record direct "$raw" --filename="$raw" --rw=randrw --bs=4k --direct=1 --ioengine=libaio \
	--iodepth=4 --size=64M --number_ios=2000
record fsync "$fsdev" --directory="$dir/mnt" --rw=randwrite --bs=4k --size=4M --fsync=16 \
	--numjobs=2 --ioengine=psync
rm -f "$dir"/mnt/fsync.*
st-record -o "$dir/cmd.sttrace" -e block -d "$fsdev" -- fio --name=cmd --directory="$dir/mnt" \
	--rw=write --bs=512 --size=1M --direct=1 --ioengine=libaio --iodepth=16 \
	>"$dir/cmd.rec.log" 2>&1 ||
	{ fail convert.stamped.record "st-record -- fio failed: $(tail -1 "$dir/cmd.rec.log")"; exit 1; }

# expected TRACE: "Q n M n G n D n C n", the actions the trace stands for.
expected() {
	local c queued
	c=$(($(rec_completed "$1" ts | wc -l) + $(rec_count "$1" block_bio_complete)))
	queued=$(rec_count "$1" block_bio_queue)
	st-format cat --csv -t block_rq_requeue,block_rq_issue_stamped "$1" |
		awk -F, -v c="$c" -v queued="$queued" "$AWK_HEX"'
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$col["type"] == "block_rq_requeue" { requeued[$col["rq"]] = 1; next }
		{
			d++
			if ($col["rq"] in requeued) { delete requeued[$col["rq"]]; next }
			nbios = $col["nr_bios"]; n = nbios < 4 || queued ? (nbios < 4 ? nbios : 4) : nbios
			if (n > 0 && hex($col["stamped"]) % 2) g++
			q += n; m += n > 1 ? n - 1 : 0
		}
		END { print "Q", queued ? queued : q + 0, "M", m + 0, "G", g + 0, "D", d + 0, "C", c }'
}

# bt_of NAME: the export's prefix, named after the recording's device.
bt_of() {
	local dev=$fsdev
	[ "$1" = direct ] && dev=$raw
	echo "$dir/$1/$(basename "$dev")"
}
reads=1 counts=1 text=1 merged=1
for t in direct fsync cmd; do
	mkdir -p "$dir/$t"
	bt=$(bt_of $t)
	bt_export "$dir/$t.sttrace" "$bt" || reads=0
	want=$(expected "$dir/$t.sttrace")
	got=$(for a in Q M G D C; do printf '%s %s ' $a "$(bt_actions "$bt" $a)"; done)
	echo "$t: blkparse ${got% }; the trace stands for $want"
	[ "${got% }" = "$want" ] || counts=0
	m=$(st-analyze "$dir/$t.sttrace" 2>&1 | grep -o 'merged [0-9]*' | awk '{ n += $2 } END { print n + 0 }')
	[ "M $m" = "$(grep -o 'M [0-9]*' <<<"$want")" ] || { merged=0; echo "$t: st-analyze counts $m merged bios"; }
	bt_same_text "$dir/$t.sttrace" "$bt" || text=0
done
# merged bios in the fsync and cmd recordings: M actions come from the stamps
for t in fsync cmd; do
	[ "$(bt_actions "$(bt_of $t)" M)" -gt 0 ] || { counts=0; echo "$t: no merged bio to check"; }
done
bt_result convert.stamped.blkparse_reads "$reads" "blkparse complained or skipped events"
bt_result convert.stamped.counts "$counts" "Q/M/G/D/C counts differ from what the trace stands for"
bt_result analyze.stamped.merged "$merged" "st-analyze's merged bios differ from the M actions (see above)"
paired=$(st-analyze "$dir/cmd.sttrace" --span 'g=block_bio_queue..block_getrq:sector' 2>&1 |
	sed -n 's/^span g = .*: \([0-9]*\) paired.*/\1/p')
g=$(bt_actions "$(bt_of cmd)" G)
echo "cmd: a Q..G span by sector paired ${paired:-none}, G actions $g"
[ -n "$paired" ] && [ "$paired" -gt 0 ] && [ "$paired" = "$g" ] && span=1 || span=0
bt_result analyze.stamped.span "$span" "Q..G spans differ from the G actions (see above)"
bt_result convert.stamped.text "$text" "--to blkparse differs from blkparse's own text"

bt_btt_agrees "$dir/direct.sttrace" "$(bt_of direct)" && btt=1 || btt=0
bt_result convert.stamped.btt "$btt" "btt and st-analyze disagree on Q2C/D2C (see above)"

# ios TRACE: st-analyze's I/Os (correlated + incomplete), and per device
# and operation "DEV OP merged N". Which I/Os are incomplete, and so of
# which operation the complete ones are, is not compared: the kernel now and
# then emits no block_rq_complete (record/README.md), and after the import
# such a request may find another's completion by its sector.
ios() {
	st-analyze "$1" 2>&1 | sed -n 's/^I\/Os in the trace: \([0-9]*\) correlated, \([0-9]*\) incomplete.*/\1 \2/p
		s/^\([^ ]* [a-z]*\): [0-9]* I\/Os,.*\(merged [0-9]*\),.*$/\1 \2/p' |
		awk 'NR == 1 { print $1 + $2, "I/Os"; next } 1'
}
roundtrip=1
for t in direct fsync cmd; do
	bt=$(bt_of $t)
	if ! st-format import-blktrace "$bt".blktrace.* -o "$dir/$t/imported.sttrace" 2>"$dir/$t/import.err"; then
		roundtrip=0
		echo "import $t: $(cat "$dir/$t/import.err")"
	elif [ -z "$(ios "$dir/$t.sttrace")" ] ||
		! cmp -s <(ios "$dir/$t.sttrace") <(ios "$dir/$t/imported.sttrace"); then
		roundtrip=0
		diff <(ios "$dir/$t.sttrace") <(ios "$dir/$t/imported.sttrace") | head -6
	fi
done
bt_result import.stamped.roundtrip "$roundtrip" "st-analyze finds other I/Os after export and import"
