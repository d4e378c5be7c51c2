#!/usr/bin/env bash
# Merges as the kernel counts them: a workload that merges thousands of
# bios, on ext4 over a loop device of its own with mq-deadline, recorded
# with `st-record -d DEV` under `-e all` (its block part is the `block`
# preset: stamped issues, compact completions), `-e block` and `-e
# block-all` (a probe per stage, block_rq_merge included), and per
# operation (reads, writes) each of these equals the merges the kernel
# counted in /sys/block/DEV/stat (fields 2 and 6) over the recording:
#   - recorded: sum over issued requests of nr_bios - 1, an issue after a
#     requeue of its request left out (the kernel counts a merge per bio
#     that joins a request, and per request merged into another, so a
#     request of n bios stands for n - 1 of them);
#   - st-analyze's `merged` in its summary: the read groups' for reads,
#     every other group's for writes (an fsync or fdatasync I/O holds the
#     write bios its thread queued; flushes never merge). Under `-e all`
#     their sum only: the stamped issue names the task that issued the
#     request, which for mq-deadline is often another's (a psync reader
#     dispatching the writes waiting in the scheduler), and a bio queued
#     inside that task's read joins the read (record/README.md);
#   - st-analyze's time series (`--interval --csv`): its `read_merged` and
#     `write_merged` counts summed over the intervals (merged % is their
#     share of the bios), under every preset: they count by the op of the
#     bios that merged, whichever I/O holds them;
#   - the blkparse text `st-format convert --to blkparse` prints (its
#     "Read Merges" / "Write Merges" totals), and blkparse's own on the
#     `convert --to blktrace` files, when blkparse is installed;
#   - st-analyze's on `import-blktrace` of those files, which rebuilds
#     requests by sector; from block-all its read and write I/Os are no
#     more often incomplete than the trace's (a request merged into
#     another gives it its bios: before that, 560 of 8330 imported writes
#     were incomplete). Not compared from stamped issues, as in
#     t_blktrace_stamped: the requests of one plug carry its one cached
#     clock, and by sector alone an I/O may take another's request (up to
#     32 of some 9000 here; 50 before their bios merged in chain order).
# Nothing else does I/O on the device: the test made it, the file system
# is made without lazy initialization (no ext4lazyinit writes later), the
# files are laid out and synced before the counters are read, and the
# recording ends after a sync.
#
# The workload (fio, one run of five jobs): buffered 4k writes with
# fdatasync every 8; direct 4k random reads; libaio direct 4k sequential
# writes with fsync every 64, and reads, 16 submitted and reaped at once
# (one plug: requests of 16 bios, past the 4 an issue stores); libaio
# direct 4k random writes over 128 blocks, 32 at once, whose adjacent
# requests mq-deadline merges at insert (block_rq_merge).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"

why=$(bpf_unavailable)
[ -z "$why" ] || { skip merges_truth "$why"; exit 0; }
command -v fio >/dev/null || { skip merges_truth "fio not installed"; exit 0; }

st_tmpdir T
st_loopdev dev 512
name=$(basename "$dev")
grep -q mq-deadline "/sys/block/$name/queue/scheduler" ||
	{ skip merges_truth "no mq-deadline scheduler"; exit 0; }
echo mq-deadline >"/sys/block/$name/queue/scheduler"
rec_ext4 merges_truth.mkfs "$dev" "$T/mnt" -E lazy_itable_init=0,lazy_journal_init=0
JOBS="buf dr aiow aior rw"
for f in $JOBS; do
	fio --name=layout --directory="$T/mnt" --filename=$f --size=64M --create_only=1 \
		>/dev/null 2>&1 || { fail merges_truth.layout "fio could not lay out $f"; exit 1; }
done
sync

# merges: the kernel's read and write merges on the device so far.
merges() {
	awk '{ print $2, $6 }' "/sys/block/$name/stat"
}

# recorded TRACE: "READS WRITES", sum of nr_bios - 1 over first issues.
recorded() {
	st-format cat --csv -t block_rq_requeue,block_rq_issue,block_rq_issue_stamped "$1" |
		awk -F, "$AWK_HEX"'
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$col["type"] == "block_rq_requeue" { requeued[$col["rq"]] = 1; next }
		$col["rq"] in requeued { delete requeued[$col["rq"]]; next }
		$col["nr_bios"] > 1 { m[hex($col["opf"]) % 256 == 1] += $col["nr_bios"] - 1 }
		END { print m[0] + 0, m[1] + 0 }'
}

# analyzed TRACE: "READS WRITES", st-analyze's merged by group.
analyzed() {
	st-analyze "$1" 2>/dev/null | awk '
		/^[^ ].*: [0-9]+ I\/Os,.* merged [0-9]+,/ {
			match($0, /merged [0-9]+/); n = substr($0, RSTART + 7, RLENGTH - 7)
			m[$2 == "read:"] += n }
		END { print m[1] + 0, m[0] + 0 }'
}

# series TRACE: "READS WRITES", the merges of the time series' intervals.
series() {
	st-analyze "$1" --interval 250ms --csv 2>/dev/null | awk -F, '
		$1 == "time_s" { for (i = 1; i <= NF; i++) col[$i] = i; next }
		"read_merged" in col { r += $col["read_merged"]; w += $col["write_merged"] }
		END { print r + 0, w + 0 }'
}

# incomplete TRACE: the I/Os st-analyze reports incomplete, all groups or
# (with a second argument) the read and write groups.
incomplete() {
	st-analyze "$1" 2>/dev/null | awk -v rw="${2:-}" '
		/^[^ ].*: [0-9]+ I\/Os,.* incomplete [0-9]+$/ && (!rw || $2 == "read:" || $2 == "write:") {
			n += $NF }
		END { print n + 0 }'
}

# blkparse_merges TEXT: "READS WRITES" of the Total statistics of blkparse's text.
blkparse_merges() {
	awk '/^Total \(/ { total = 1 }
		total && /Read Merges:/ { gsub(/,/, " "); print $3, $7; exit }' "$1"
}

for preset in all block block-all; do
	tag=merges_truth.$preset
	trace=$T/$preset.sttrace
	read -r r0 w0 < <(merges)
	rec_start "$trace" "$T/$preset.rec" -e "$preset" -d "$dev" ||
		{ fail "$tag.record" "$(cat "$T/$preset.rec")"; continue; }
	fio --directory="$T/mnt" --size=64M --output="$T/$preset.fio" \
		--name=buf --filename=buf --rw=write --bs=4k --ioengine=psync --fdatasync=8 \
		--number_ios=6000 \
		--name=dr --filename=dr --rw=randread --bs=4k --direct=1 --ioengine=psync \
		--number_ios=3000 \
		--name=aiow --filename=aiow --rw=write --bs=4k --direct=1 --ioengine=libaio \
		--iodepth=16 --iodepth_batch_submit=16 --iodepth_batch_complete_min=16 --fsync=64 \
		--number_ios=6000 \
		--name=aior --filename=aior --rw=read --bs=4k --direct=1 --ioengine=libaio \
		--iodepth=16 --iodepth_batch_submit=16 --iodepth_batch_complete_min=16 \
		--number_ios=6000 \
		--name=rw --filename=rw --rw=randwrite --bs=4k --direct=1 --ioengine=libaio \
		--iodepth=32 --iodepth_batch_submit=32 --iodepth_batch_complete_min=32 --size=512k \
		--loops=16 >/dev/null 2>&1 ||
		{ fail "$tag.fio" "fio failed: $(grep -m1 err= "$T/$preset.fio")"; rec_stop; continue; }
	sync -f "$T/mnt"
	rec_stop || { fail "$tag.record" "st-record failed: $(tail -1 "$T/$preset.rec")"; continue; }
	read -r r1 w1 < <(merges)
	kernel="$((r1 - r0)) $((w1 - w0))"
	echo "$preset: kernel read/write merges $kernel"
	# events the recorder lost (a busy machine) may explain a difference
	lost="$(rec_lost "$trace") events lost"
	[ "$((r1 - r0))" -gt 1000 ] && [ "$((w1 - w0))" -gt 1000 ] && pass "$tag.workload_merges" ||
		fail "$tag.workload_merges" "the workload merged too little to tell: $kernel"
	got=$(recorded "$trace")
	[ "$got" = "$kernel" ] && pass "$tag.recorded" || fail "$tag.recorded" "file $got, kernel $kernel; $lost"
	got=$(analyzed "$trace")
	want=$kernel
	if [ "$preset" = all ]; then
		got=$(awk '{ print $1 + $2 }' <<<"$got")
		want=$((r1 - r0 + w1 - w0))
	fi
	[ "$got" = "$want" ] && pass "$tag.analyze" || fail "$tag.analyze" "st-analyze $got, kernel $want; $lost"
	got=$(series "$trace")
	[ "$got" = "$kernel" ] && pass "$tag.series" ||
		fail "$tag.series" "st-analyze --interval $got, kernel $kernel; $lost"
	st-format convert "$trace" --to blkparse -o "$T/$preset.blkparse" 2>"$T/$preset.err" ||
		{ fail "$tag.blkparse" "convert: $(cat "$T/$preset.err")"; continue; }
	got=$(blkparse_merges "$T/$preset.blkparse")
	[ "$got" = "$kernel" ] && pass "$tag.blkparse" ||
		fail "$tag.blkparse" "convert --to blkparse ${got:-none}, kernel $kernel; $lost"
	mkdir -p "$T/$preset.bt"
	st-format convert "$trace" --to blktrace -o "$T/$preset.bt/$name" 2>"$T/$preset.err" ||
		{ fail "$tag.blktrace" "convert: $(cat "$T/$preset.err")"; continue; }
	if command -v blkparse >/dev/null; then
		LC_ALL=C blkparse -i "$T/$preset.bt/$name" >"$T/$preset.bt/text" 2>/dev/null
		got=$(blkparse_merges "$T/$preset.bt/text")
		[ "$got" = "$kernel" ] && pass "$tag.blkparse_own" ||
			fail "$tag.blkparse_own" "blkparse ${got:-none}, kernel $kernel; $lost"
	else
		skip "$tag.blkparse_own" "blkparse not installed"
	fi
	st-format import-blktrace "$T/$preset.bt/$name".blktrace.* -o "$T/$preset.imported.sttrace" \
		2>"$T/$preset.err" || { fail "$tag.import" "import: $(cat "$T/$preset.err")"; continue; }
	got=$(analyzed "$T/$preset.imported.sttrace")
	open=$(incomplete "$T/$preset.imported.sttrace" rw)
	[ "$preset" = block-all ] || open=0
	[ "$got" = "$kernel" ] && [ "$open" -le "$(incomplete "$trace")" ] && pass "$tag.import" ||
		fail "$tag.import" "imported: st-analyze $got, kernel $kernel; $open read/write I/Os incomplete, $(incomplete "$trace") in the trace; $lost"
done
