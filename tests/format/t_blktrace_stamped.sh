#!/usr/bin/env bash
# Recordings of the default block preset (`-e block`: one stamped issue
# event per request, record/README.md) exported with `st-format convert
# --to blktrace`, read by the real blktrace tools. The stamped issue stands
# for the Q, M and G actions of the request's bios (analyze/input.c), so
# the export has them although no probe saw them:
#   - blkparse reads the files without a complaint;
#   - its action counts are those the stamped issues stand for, counted
#     here from their fields (record/README.md, spec section 11): per
#     issue, a Q for each stored bio (at most 4) plus one for the rest of a
#     longer request, each Q but the first also an M, a G when the
#     allocation time is stamped and the request has bios, a D; a C per
#     completion; an issue after a requeue of its request is a D only;
#   - `convert --to blkparse` prints exactly blkparse's text of the files;
#   - btt's Q2C and D2C counts and averages equal st-analyze's on the
#     direct recording (tolerance in blktrace.sh, bt_btt_agrees);
#   - `import-blktrace` of the exported files, which rebuilds identities
#     by sector as btt does, gives st-analyze as many I/Os, and per device
#     and operation as many I/Os and merged bios (this needs the kernel's
#     order of the actions: a merge after the G of the request it joins,
#     G the size of the first bio).
# Two recordings made without `-- CMD` (which would add block_bio_queue),
# so Q and M come from the stamps alone: fio O_DIRECT 4k random reads and
# writes on a raw loop device, and fio buffered random writes with fsync
# on ext4 from two jobs (merged bios, flushes without bios, two CPUs).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"
. "$(dirname "$0")/blktrace.sh"

TESTS="convert.stamped.blkparse_reads convert.stamped.counts convert.stamped.text
	convert.stamped.btt import.stamped.roundtrip"
why=$(bpf_unavailable)
command -v blkparse >/dev/null && command -v btt >/dev/null || why=${why:-"blktrace tools not installed"}
command -v fio >/dev/null || why=${why:-"fio not installed"}
if [ -n "$why" ]; then
	for t in $TESTS; do skip "$t" "$why"; done
	exit 0
fi

st_tmpdir dir
st_loopdev raw 64
st_loopdev fsdev 128
rec_ext4 convert.stamped.record "$fsdev" "$dir/mnt"

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

# expected TRACE: "Q n M n G n D n C n", the actions the trace stands for.
expected() {
	local c
	c=$(($(rec_count "$1" block_rq_complete) + $(rec_count "$1" block_bio_complete)))
	st-format cat --csv -t block_rq_requeue,block_rq_issue_stamped "$1" |
		awk -F, -v c="$c" "$AWK_HEX"'
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$col["type"] == "block_rq_requeue" { requeued[$col["rq"]] = 1; next }
		{
			d++
			if ($col["rq"] in requeued) { delete requeued[$col["rq"]]; next }
			nbios = $col["nr_bios"]; n = nbios < 4 ? nbios : 4
			left = $col["nr_sector"]
			split($col["bio_sectors"], len, ";")
			for (i = 1; i <= n; i++) left -= len[i] < left ? len[i] : left
			if (nbios > 4 && left > 0) n++
			q += n; m += n > 1 ? n - 1 : 0
			if (n > 0 && hex($col["stamped"]) % 2) g++
		}
		END { print "Q", q + 0, "M", m + 0, "G", g + 0, "D", d + 0, "C", c }'
}

reads=1 counts=1 text=1
for t in direct fsync; do
	mkdir -p "$dir/$t"
	dev=raw
	[ $t = fsync ] && dev=fsdev
	bt=$dir/$t/$(basename "${!dev}")
	bt_export "$dir/$t.sttrace" "$bt" || reads=0
	want=$(expected "$dir/$t.sttrace")
	got=$(for a in Q M G D C; do printf '%s %s ' $a "$(bt_actions "$bt" $a)"; done)
	echo "$t: blkparse ${got% }; the trace stands for $want"
	[ "${got% }" = "$want" ] || counts=0
	bt_same_text "$dir/$t.sttrace" "$bt" || text=0
done
# the fsync recording has merged bios: M actions come from the stamps
[ "$(bt_actions "$bt" M)" -gt 0 ] || { counts=0; echo "fsync: no merged bio to check"; }
[ $reads = 1 ] && pass convert.stamped.blkparse_reads ||
	fail convert.stamped.blkparse_reads "blkparse complained or skipped events"
[ $counts = 1 ] && pass convert.stamped.counts ||
	fail convert.stamped.counts "Q/M/G/D/C counts differ from what the trace stands for"
[ $text = 1 ] && pass convert.stamped.text ||
	fail convert.stamped.text "--to blkparse differs from blkparse's own text"

if bt_btt_agrees "$dir/direct.sttrace" "$dir/direct/$(basename "$raw")"; then
	pass convert.stamped.btt
else
	fail convert.stamped.btt "btt and st-analyze disagree on Q2C/D2C (see above)"
fi

# ios TRACE: st-analyze's I/Os (correlated + incomplete), and per device
# and operation "DEV OP N I/Os merged N". Which I/Os are incomplete is not
# compared: a request the recording ended in the middle of may find a
# completion by its sector after the import.
ios() {
	st-analyze "$1" 2>&1 | sed -n 's/^I\/Os in the trace: \([0-9]*\) correlated, \([0-9]*\) incomplete.*/\1 \2/p
		s/^\([^ ]* [a-z]*\): \([0-9]* I\/Os\),.*\(merged [0-9]*\),.*$/\1 \2 \3/p' |
		awk 'NR == 1 { print $1 + $2, "I/Os"; next } 1'
}
roundtrip=1
for t in direct fsync; do
	dev=raw
	[ $t = fsync ] && dev=fsdev
	bt=$dir/$t/$(basename "${!dev}")
	if ! st-format import-blktrace "$bt".blktrace.* -o "$dir/$t/imported.sttrace" 2>"$dir/$t/import.err"; then
		roundtrip=0
		echo "import $t: $(cat "$dir/$t/import.err")"
	elif [ -z "$(ios "$dir/$t.sttrace")" ] ||
		! cmp -s <(ios "$dir/$t.sttrace") <(ios "$dir/$t/imported.sttrace"); then
		roundtrip=0
		diff <(ios "$dir/$t.sttrace") <(ios "$dir/$t/imported.sttrace") | head -6
	fi
done
[ $roundtrip = 1 ] && pass import.stamped.roundtrip ||
	fail import.stamped.roundtrip "st-analyze finds other I/Os after export and import"
