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
#   - btt's Q2C and D2C counts and averages equal st-analyze's (on the
#     direct recording; tolerance in blktrace.sh, bt_btt_agrees);
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
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"
. "$(dirname "$0")/blktrace.sh"

TESTS="convert.blktrace.blkparse_reads convert.blktrace.counts convert.blkparse.text
	convert.blktrace.btt convert.blktrace.iowatcher convert.blktrace.btrecord
	import.blktrace.roundtrip"
bt_setup "$TESTS" convert.blktrace.record

st-record -o "$dir/direct.sttrace" -e block-all -d "$raw" -- fio --name=direct --filename="$raw" \
	--rw=randrw --bs=4k --direct=1 --ioengine=libaio --iodepth=4 --size=64M \
	--number_ios=2000 >"$dir/direct.log" 2>&1 ||
	{ fail convert.blktrace.record "st-record failed: $(tail -1 "$dir/direct.log")"; exit 1; }
st-record -o "$dir/fsync.sttrace" -e block-all -d "$fsdev" -- fio --name=fsync \
	--directory="$dir/mnt" --rw=randwrite --bs=4k --size=4M --fsync=16 --numjobs=2 \
	--ioengine=psync >"$dir/fsync.log" 2>&1 ||
	{ fail convert.blktrace.record "st-record failed: $(tail -1 "$dir/fsync.log")"; exit 1; }

# Files named after the device, as blkparse names its statistics after its input.
direct_bt=$dir/direct/$(basename "$raw")
fsync_bt=$dir/fsync/$(basename "$fsdev")
reads=1 counts=1 text=1
for t in direct fsync; do
	bt=${t}_bt
	bt=${!bt}
	mkdir -p "$dir/$t"
	bt_export "$dir/$t.sttrace" "$bt" || reads=0
	for pair in "Q block_bio_queue" "D block_rq_issue" "C block_rq_complete block_bio_complete"; do
		set -- $pair
		action=$1
		shift
		want=0
		for type in "$@"; do
			want=$((want + $(rec_count "$dir/$t.sttrace" "$type" 2>/dev/null || echo 0)))
		done
		got=$(bt_actions "$bt" "$action")
		if [ "$got" != "$want" ] || [ "$want" = 0 ]; then
			counts=0
			echo "$t: blkparse counts $got $action actions, the trace $want"
		fi
	done
	bt_same_text "$dir/$t.sttrace" "$bt" || text=0
done
bt_result convert.blktrace.blkparse_reads "$reads" "blkparse complained or skipped events"
bt_result convert.blktrace.counts "$counts" "Q/D/C counts differ from the trace"
bt_result convert.blkparse.text "$text" "--to blkparse differs from blkparse's own text"

bt_btt_agrees "$dir/direct.sttrace" "$direct_bt" && btt=1 || btt=0
bt_result convert.blktrace.btt "$btt" "btt and st-analyze disagree on Q2C/D2C (see above)"

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
bt_result import.blktrace.roundtrip "$roundtrip" "export then import changed the block events"
