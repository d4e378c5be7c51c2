#!/usr/bin/env bash
# Real recordings exported with `st-format convert --to blktrace`, read by
# the real blktrace tools (Debian package blktrace), which sttrace did not
# write:
#   - blkparse reads the files without a complaint and counts as many Q, D
#     and C actions as the trace holds block_bio_queue, block_rq_issue and
#     block_rq_complete (+ block_bio_complete) events;
#   - `convert --to blkparse` prints exactly blkparse's text for those files
#     (named after the device, as blkparse names its statistics after its
#     input), statistics and the order of events of one nanosecond on two
#     CPUs (about 1 in 10^4 lines here) included;
#   - btt's Q2C and D2C counts and averages equal st-analyze's;
#   - iowatcher renders an SVG;
#   - btrecord turns the files into btreplay's bunches, one packet per
#     request issued (D) in the trace (btreplay itself is not run: it
#     replays onto the recorded device);
#   - `import-blktrace` of the exported files gives back the same block
#     events: type, time, CPU, thread, sector, device, sectors, operation
#     and flags, error. blktrace has one FLUSH bit for a flush operation and
#     a preflush flag, so a flush request's preflush flag is not compared
#     (opf is compared up to ST_F_RAHEAD, bits the blktrace categories hold);
#     st-analyze finds the same I/Os and stage latencies in both.
# Two recordings: fio O_DIRECT 4k random reads and writes on a raw loop
# device (one bio per request, so btt's per-request D2C and st-analyze's
# per-I/O D2C count the same I/Os), and fio buffered random writes with
# fsync on ext4 from two jobs (flushes, FUA, merges, inserts, two CPUs).
#
# btt tolerance, derived: both average the same nanosecond timestamps over
# the same I/Os; btt prints seconds to 9 decimals, st-analyze microseconds
# to 3, each rounded once: the two averages may differ by 1 ns, the counts
# not at all.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"
. "$(dirname "$0")/blktrace.sh"

TESTS="convert.blktrace.blkparse_reads convert.blktrace.counts convert.blkparse.text
	convert.blktrace.btt convert.blktrace.iowatcher convert.blktrace.btrecord
	import.blktrace.roundtrip"
why=$(bpf_unavailable)
command -v blkparse >/dev/null && command -v btt >/dev/null && command -v iowatcher >/dev/null ||
	why=${why:-"blktrace tools not installed"}
command -v fio >/dev/null || why=${why:-"fio not installed"}
if [ -n "$why" ]; then
	for t in $TESTS; do skip "$t" "$why"; done
	exit 0
fi

st_tmpdir dir
st_loopdev raw 64
st_loopdev fsdev 128
rec_ext4 convert.blktrace.record "$fsdev" "$dir/mnt"

st-record -o "$dir/direct.sttrace" -e block -d "$raw" -- fio --name=direct --filename="$raw" \
	--rw=randrw --bs=4k --direct=1 --ioengine=libaio --iodepth=4 --size=64M \
	--number_ios=2000 >"$dir/direct.log" 2>&1 ||
	{ fail convert.blktrace.record "st-record failed: $(tail -1 "$dir/direct.log")"; exit 1; }
st-record -o "$dir/fsync.sttrace" -e block -d "$fsdev" -- fio --name=fsync \
	--directory="$dir/mnt" --rw=randwrite --bs=4k --size=4M --fsync=16 --numjobs=2 \
	--ioengine=psync >"$dir/fsync.log" 2>&1 ||
	{ fail convert.blktrace.record "st-record failed: $(tail -1 "$dir/fsync.log")"; exit 1; }

# Files named after the device; "Input file NAME added" lines are
# blkparse's own chatter, not part of its text.
direct_bt=$dir/direct/$(basename "$raw")
fsync_bt=$dir/fsync/$(basename "$fsdev")
reads=1 counts=1 text=1
for t in direct fsync; do
	bt=${t}_bt
	bt=${!bt}
	mkdir -p "$dir/$t"
	st-format convert "$dir/$t.sttrace" --to blktrace -o "$bt" 2>"$dir/$t.err" ||
		{ fail convert.blktrace.blkparse_reads "convert $t: $(cat "$dir/$t.err")"; exit 1; }
	LC_ALL=C blkparse -i "$bt" 2>"$dir/$t/full.err" | grep -v '^Input file' >"$dir/$t/full.txt"
	sed '/^CPU[0-9]* (/,$d' "$dir/$t/full.txt" >"$dir/$t/events.txt"
	if grep -v '^Input file .* added$' "$dir/$t/full.err" | grep -q . ||
		! grep -q '^Skips: 0 forward' "$dir/$t/full.txt"; then
		reads=0
		echo "blkparse on $t: $(head -3 "$dir/$t/full.err") $(grep '^Skips' "$dir/$t/full.txt")"
	fi
	for pair in "Q block_bio_queue" "D block_rq_issue" "C block_rq_complete block_bio_complete"; do
		set -- $pair
		action=$1
		shift
		want=0
		for type in "$@"; do
			want=$((want + $(rec_count "$dir/$t.sttrace" "$type" 2>/dev/null || echo 0)))
		done
		got=$(awk -v a="$action" '$6 == a' "$dir/$t/events.txt" | wc -l)
		if [ "$got" != "$want" ] || [ "$want" = 0 ]; then
			counts=0
			echo "$t: blkparse counts $got $action actions, the trace $want"
		fi
	done
	st-format convert "$dir/$t.sttrace" --to blkparse -o "$dir/$t/ours.txt" &&
		cmp -s "$dir/$t/ours.txt" "$dir/$t/full.txt" ||
		{ text=0; diff "$dir/$t/full.txt" "$dir/$t/ours.txt" | head -5; }
done
[ $reads = 1 ] && pass convert.blktrace.blkparse_reads ||
	fail convert.blktrace.blkparse_reads "blkparse complained or skipped events"
[ $counts = 1 ] && pass convert.blktrace.counts ||
	fail convert.blktrace.counts "Q/D/C counts differ from the trace"
[ $text = 1 ] && pass convert.blkparse.text ||
	fail convert.blkparse.text "--to blkparse differs from blkparse's own text"

# btt reads blkparse's merged binary dump; its "ALL" table has
# NAME MIN AVG MAX N, times in seconds.
blkparse -q -i "$direct_bt" -d "$dir/direct/bt.bin" -O >/dev/null 2>&1
btt -i "$dir/direct/bt.bin" >"$dir/direct/btt.txt" 2>&1
st-analyze --by dev --csv "$dir/direct.sttrace" >"$dir/direct/analyze.csv" 2>/dev/null
bttok=1
for stage in Q2C D2C; do
	read -r bn bavg < <(awk -v s="$stage" '$1 == s { print $5, $3 * 1e6; exit }' "$dir/direct/btt.txt")
	read -r an aavg < <(awk -F, -v s="$stage" '$7 == s { print $8, $10; exit }' "$dir/direct/analyze.csv")
	echo "$stage: btt n=$bn avg=${bavg}us, st-analyze n=$an avg=${aavg}us"
	if [ -z "$bn" ] || [ "$bn" != "$an" ] ||
		! awk -v a="$aavg" -v b="$bavg" 'BEGIN { d = a - b; exit !(d <= 0.0011 && d >= -0.0011) }'; then
		bttok=0
	fi
done
[ $bttok = 1 ] && pass convert.blktrace.btt ||
	fail convert.blktrace.btt "btt and st-analyze disagree on Q2C/D2C (see above)"

(cd "$dir/direct" && iowatcher -t "$(basename "$direct_bt")" -o "$dir/io.svg" >"$dir/iowatcher.log" 2>&1)
if [ -s "$dir/io.svg" ] && grep -q '<svg' "$dir/io.svg"; then
	pass convert.blktrace.iowatcher
else
	fail convert.blktrace.iowatcher "no SVG: $(tail -2 "$dir/iowatcher.log")"
fi

# btrecord -v: "DEV:CPU: N pkts (tot), M pkts (replay), ..." per CPU file.
mkdir -p "$dir/replay"
btrecord -v -d "$dir/direct" -D "$dir/replay" "$(basename "$direct_bt")" >"$dir/btrecord.log" 2>&1
replayed=$(awk '/pkts \(replay\)/ { n += $5 } END { print n + 0 }' "$dir/btrecord.log")
issued=$(rec_count "$dir/direct.sttrace" block_rq_issue)
if [ "$replayed" = "$issued" ] && [ "$issued" -gt 0 ]; then
	pass convert.blktrace.btrecord
else
	fail convert.blktrace.btrecord "btrecord kept $replayed packets, the trace issued $issued: $(tail -1 "$dir/btrecord.log")"
fi

roundtrip=1
for t in direct fsync; do
	bt=${t}_bt
	if ! st-format import-blktrace "${!bt}".blktrace.* -o "$dir/$t/imported.sttrace" \
		2>"$dir/$t/import.err"; then
		roundtrip=0
		echo "import $t: $(cat "$dir/$t/import.err")"
	elif ! cmp -s <(block_events "$dir/$t.sttrace") <(block_events "$dir/$t/imported.sttrace"); then
		roundtrip=0
		diff <(block_events "$dir/$t.sttrace") <(block_events "$dir/$t/imported.sttrace") | head -4
	fi
done
# and st-analyze correlates the imported events into the same I/Os
stages() { st-analyze --by dev --csv "$1" 2>/dev/null | awk -F, '$7 ~ /^(Q2C|D2C|Q2G)$/ { print $7, $8, $10 }'; }
if ! cmp -s <(stages "$dir/direct.sttrace") <(stages "$dir/direct/imported.sttrace"); then
	roundtrip=0
	echo "st-analyze: $(stages "$dir/direct.sttrace" | tr '\n' ' ') vs imported $(stages "$dir/direct/imported.sttrace" | tr '\n' ' ')"
fi
[ $roundtrip = 1 ] && pass import.blktrace.roundtrip ||
	fail import.blktrace.roundtrip "export then import changed the block events"
