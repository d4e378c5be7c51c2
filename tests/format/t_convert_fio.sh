#!/usr/bin/env bash
# `st-format convert` on a recording of fio O_DIRECT 4k random reads and
# writes on a loop device, checked against fio itself.
# --to fio-iolog: the iolog is replayed by fio (--read_iolog) on the same
# device while st-record records the replay:
#   - fio's JSON counts as many reads and writes as the recording queued;
#   - the replay queues the same I/Os: the same multiset of (operation,
#     sector, sectors) as the original recording.
# --to csv / jsonl: parsed by python3's csv and json modules:
#   - events: one row per event of the file (st-format info's count) with a
#     column for every field of the file's schema;
#   - --records: as many read and write rows as fio's JSON counts I/Os, each
#     4096 bytes, with Q2C = ts_complete - ts_queue where complete (the
#     kernel now and then emits no block_rq_complete, record/README.md);
#     CSV and JSON Lines hold the same rows.
# Before the replay the test checks that the iolog names only its own loop
# device, so nothing else is ever written.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"

why=$(bpf_unavailable)
command -v fio >/dev/null && command -v jq >/dev/null || why=${why:-"fio or jq not installed"}
if [ -n "$why" ]; then
	for t in convert.fio_iolog.counts convert.fio_iolog.offsets convert.rows.events \
		convert.rows.records; do
		skip "$t" "$why"
	done
	exit 0
fi

st_tmpdir dir
st_loopdev dev 64
st-record -o "$dir/orig.sttrace" -e block -d "$dev" -- fio --name=orig --filename="$dev" \
	--rw=randrw --bs=4k --direct=1 --ioengine=libaio --iodepth=4 --size=64M \
	--number_ios=2000 --output-format=json --output="$dir/orig.json" >"$dir/orig.log" 2>&1 ||
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

for f in csv jsonl; do
	st-format convert "$dir/orig.sttrace" --to $f -o "$dir/events.$f" &&
		st-format convert "$dir/orig.sttrace" --to $f --records >"$dir/records.$f" ||
		{ fail convert.rows.events "convert --to $f failed"; exit 1; }
done
events=$(st-format info "$dir/orig.sttrace" | awk '$1 == "events" { print $2; exit }')
fields=$(st-format cat --json "$dir/orig.sttrace" | python3 -c '
import json, sys
print(" ".join(sorted({k for line in sys.stdin for k in json.loads(line)})))')
if python3 - "$dir" "$events" "$fields" <<'EOF'
import csv, json, sys
d, events, fields = sys.argv[1], int(sys.argv[2]), set(sys.argv[3].split())
rows = list(csv.DictReader(open(d + "/events.csv")))
objs = [json.loads(l) for l in open(d + "/events.jsonl")]
assert len(rows) == events == len(objs), (len(rows), events, len(objs))
assert fields <= set(rows[0].keys()), fields - set(rows[0].keys())
assert all(set(o) <= fields for o in objs)
EOF
then
	pass convert.rows.events
else
	fail convert.rows.events "CSV/JSON rows do not match the trace's events and schema"
fi
if python3 - "$dir" <<'EOF'
import csv, json, sys
d = sys.argv[1]
fio = json.load(open(d + "/orig.json"))["jobs"][0]
rows = list(csv.DictReader(open(d + "/records.csv")))
objs = [json.loads(l) for l in open(d + "/records.jsonl")]
for op in ("read", "write"):
    mine = [r for r in rows if r["op"] == op]
    assert len(mine) == fio[op]["total_ios"], (op, len(mine), fio[op]["total_ios"])
    assert all(int(r["bytes"]) == 4096 for r in mine)
    assert all(int(r["Q2C_ns"]) == int(r["ts_complete"]) - int(r["ts_queue"])
               for r in mine if "incomplete" not in r["flags"])
assert len(objs) == len(rows)
for r, o in zip(rows, objs):
    assert all(str(o[k]) == v if o[k] is not None else v == "" for k, v in r.items()), (r, o)
EOF
then
	pass convert.rows.records
else
	fail convert.rows.records "records disagree with fio's counts or between CSV and JSON"
fi
