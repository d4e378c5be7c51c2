#!/usr/bin/env bash
# `st-format convert --to fio-iolog`: fio replays a recording.
# fio O_DIRECT 4k random reads and writes on a loop device are recorded,
# converted to an iolog, and replayed by fio (--read_iolog) on the same
# device while st-record records the replay. Checked against fio itself:
#   - fio's JSON counts as many reads and writes as the recording queued;
#   - the replay queues the same I/Os: the same multiset of (operation,
#     sector, sectors) as the original recording.
# Before the replay the test checks that the iolog names only its own loop
# device, so nothing else is ever written.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"

why=$(bpf_unavailable)
command -v fio >/dev/null && command -v jq >/dev/null || why=${why:-"fio or jq not installed"}
if [ -n "$why" ]; then
	skip convert.fio_iolog.counts "$why"
	skip convert.fio_iolog.offsets "$why"
	exit 0
fi

st_tmpdir dir
st_loopdev dev 64
st-record -o "$dir/orig.sttrace" -e block -d "$dev" -- fio --name=orig --filename="$dev" \
	--rw=randrw --bs=4k --direct=1 --ioengine=libaio --iodepth=4 --size=64M \
	--number_ios=2000 >"$dir/orig.log" 2>&1 ||
	{ fail convert.fio_iolog.record "st-record failed: $(tail -1 "$dir/orig.log")"; exit 1; }
st-format convert "$dir/orig.sttrace" --to fio-iolog -o "$dir/orig.iolog" ||
	{ fail convert.fio_iolog.convert "convert failed"; exit 1; }
others=$(awk 'NR > 1 && $2 != dev' dev="$dev" "$dir/orig.iolog" | head -1)
if [ -n "$others" ]; then
	fail convert.fio_iolog.convert "the iolog names another file: $others"
	exit 1
fi

st-record -o "$dir/replay.sttrace" -e block -d "$dev" -- fio --name=replay \
	--read_iolog="$dir/orig.iolog" --ioengine=libaio --iodepth=4 --direct=1 \
	--output-format=json --output="$dir/replay.json" >"$dir/replay.log" 2>&1 ||
	{ fail convert.fio_iolog.replay "replay failed: $(tail -1 "$dir/replay.log")"; exit 1; }

# Queued bios of a recording: "read|write SECTOR SECTORS", sorted.
queued() {
	rec_rows "$1" block_bio_queue opf sector nr_sector |
		awk "$AWK_HEX"'{ print (hex($1) % 2 ? "write" : "read"), $2, $3 }' | sort
}
reads=$(jq '.jobs[0].read.total_ios' "$dir/replay.json")
writes=$(jq '.jobs[0].write.total_ios' "$dir/replay.json")
want_reads=$(queued "$dir/orig.sttrace" | grep -c '^read ')
want_writes=$(queued "$dir/orig.sttrace" | grep -c '^write ')
if [ "$reads" = "$want_reads" ] && [ "$writes" = "$want_writes" ] && [ $((reads + writes)) = 2000 ]; then
	pass convert.fio_iolog.counts
else
	fail convert.fio_iolog.counts "fio replayed $reads reads, $writes writes; recorded $want_reads, $want_writes"
fi
if cmp -s <(queued "$dir/orig.sttrace") <(queued "$dir/replay.sttrace"); then
	pass convert.fio_iolog.offsets
else
	fail convert.fio_iolog.offsets "$(diff <(queued "$dir/orig.sttrace") <(queued "$dir/replay.sttrace") | head -3 | tr '\n' ' ')"
fi
