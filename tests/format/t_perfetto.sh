#!/usr/bin/env bash
# st-format convert --to perfetto on a real recording (-e all) of fio
# O_DIRECT 4k random reads with psync on a loop device, checked with
# python3's json module and against fio's JSON:
#   - the file parses as JSON with a traceEvents list;
#   - every async slice begin (b) has exactly one end (e) with the same
#     category, id and track, not before it; every complete slice (X) has a
#     duration >= 0;
#   - the device's request slices are as many as the requests the trace
#     shows issued (block_rq_issue or the block preset's stamped issue) and
#     then completed (counted from st-format cat --json);
#   - the fio job's thread has one pread64 slice per read fio counts, and
#     its process is named fio.
#   - a crafted file with one completion near 2^64 ns (tests/format/hostile/)
#     converts in bounded time and size: the IOPS counter is a point per
#     interval that holds a completion, and at most one zero after each.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"

st_tmpdir maxdir
maxts=$(dirname "$0")/hostile/perfetto-maxts.sttrace
completions=$(st-format info "$maxts" | awk '$1 == "block_rq_complete" { print $2 }')
(ulimit -f 4096; timeout 20 st-format convert "$maxts" --to perfetto -o "$maxdir/m.json") 2>"$maxdir/err"
rc=$?
if [ $rc != 0 ]; then
	fail convert.perfetto.maxts "exit $rc (124: timeout, 153: over 4 MiB): $(tail -1 "$maxdir/err")"
elif python3 - "$maxdir/m.json" "$completions" <<'EOF'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
iops = [e for e in ev if e["ph"] == "C" and e["name"] == "IOPS"]
devs = {e["pid"] for e in iops}
assert 0 < len(iops) <= 2 * int(sys.argv[2]) + len(devs), (len(iops), sys.argv[2])
EOF
then
	pass convert.perfetto.maxts
else
	fail convert.perfetto.maxts "more IOPS points than completions allow"
fi

why=$(bpf_unavailable)
command -v fio >/dev/null && command -v python3 >/dev/null || why=${why:-"fio or python3 missing"}
if [ -n "$why" ]; then
	skip convert.perfetto "$why"
	exit 0
fi

st_tmpdir dir
st_loopdev dev 64
st-record -o "$dir/t.sttrace" -e all -- fio --name=pf --filename="$dev" --rw=randread --bs=4k \
	--direct=1 --ioengine=psync --size=64M --number_ios=500 --output-format=json \
	--output="$dir/fio.json" >"$dir/record.log" 2>&1 ||
	{ fail convert.perfetto "st-record failed: $(tail -1 "$dir/record.log")"; exit 1; }
st-format convert "$dir/t.sttrace" --to perfetto -o "$dir/t.json" ||
	{ fail convert.perfetto "convert failed"; exit 1; }
types=block_rq_issue,block_rq_complete
for t in block_rq_issue_stamped block_rq_complete_compact; do
	st-format info "$dir/t.sttrace" | grep -q "^  $t " && types=$types,$t
done
st-format cat --json -t "$types" "$dir/t.sttrace" >"$dir/rq.jsonl"
devname=$(basename "$dev")

if python3 - "$dir" "$devname" <<'EOF'
import json, sys
d, devname = sys.argv[1], sys.argv[2]
ev = json.load(open(d + "/t.json"))["traceEvents"]
fio = json.load(open(d + "/fio.json"))["jobs"][0]["read"]["total_ios"]

begins = {}
for e in ev:
    key = (e.get("cat"), e.get("id"), e["pid"])
    if e["ph"] == "b":
        assert key not in begins, ("two begins", e)
        begins[key] = e["ts"]
    elif e["ph"] == "e":
        assert key in begins and begins[key] <= e["ts"], ("end without begin", e)
        del begins[key]
    elif e["ph"] == "X":
        assert e["dur"] >= 0, e
assert not begins, ("begins without end", len(begins))

issued, completed = set(), 0
for line in open(d + "/rq.jsonl"):
    r = json.loads(line)
    if r["type"].startswith("block_rq_issue"):
        issued.add(r["rq"])
    elif r["rq"] in issued:
        issued.discard(r["rq"])
        completed += 1
names = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
devpid = [p for p, n in names.items() if n.startswith("dev " + devname + " ")]
assert len(devpid) == 1, names
slices = [e for e in ev if e["ph"] == "b" and e["cat"] == "request"]
ondev = [e for e in slices if e["pid"] == devpid[0]]
assert len(slices) == completed and len(ondev) >= fio, (len(slices), completed, len(ondev), fio)

preads = {}
for e in ev:
    if e["ph"] == "X" and e["name"] == "pread64":
        preads[(e["pid"], e["tid"])] = preads.get((e["pid"], e["tid"]), 0) + 1
job = [k for k, n in preads.items() if n == fio]
assert len(job) == 1, (preads, fio)
assert names.get(job[0][0]) == "fio", names.get(job[0][0])
EOF
then
	pass convert.perfetto
else
	fail convert.perfetto "see the assertion above"
fi
