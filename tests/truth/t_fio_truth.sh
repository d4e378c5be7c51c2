#!/usr/bin/env bash
# The truth suite: fio runs recorded with `st-record -e all -- fio ...` on
# ext4 and XFS (loop devices over /dev/shm), and st-analyze's figures checked
# against fio's own JSON, which sttrace did not compute.
#
# Which I/Os: every row of st-analyze's per-I/O list (--quantile with a
# threshold below every latency, --csv) whose file is the workload's data
# file (by path, or for libaio iocbs, which carry no fd, by device and inode
# as stat(1) gives them). fio's other I/O (the libraries and /sys files it
# reads, the layout of the data file, done by an unrecorded fio run before)
# is on other files or outside the recording. Each case runs a copy of fio
# made for it, after dropping the page cache: a fresh machine's first run
# (issue 22: the paths fio's job process passes from its binary's read-only
# data were unreadable at openat's entry there, and fds reused after them
# were charged to the wrong file).
#
# Counts exact: reads, writes, and fsync+fdatasync (op fsync) equal fio's
# read/write total_ios and sync lat_ns.N; no incomplete I/O of the data file
# (the workload ends inside the recording; st-analyze --by file counts them:
# I/Os of other files open as the recording ends, such as the writeback of
# fio's own output, are not the workload's).
#
# Latency, synchronous engines (psync, pvsync2, sync=1): sttrace's total runs
# from syscall entry to exit, inside fio's own clock reads around the call,
# so ours <= fio for each I/O and each percentile, up to the reports'
# quantization: fio reports a histogram bucket (64 per power of two, <= 1.6%),
# ours is exact (nearest rank). That upper bound finds mis-joined events and a
# sample biased to slow I/Os (issue 9 began with an fsync p50 3x fio's):
#   p50, p99:  sttrace  <=  fio * 1.02 + 5 us
# (+5 us: the few us of each side's clock read and syscall entry/exit that
# either may count.) Below, fio's clat of an I/O is ours plus fio's time in
# user space around the call (its clock reads, its bookkeeping, and its
# thread preempted or its vCPU stolen in between), which is no more than U,
# the time its thread spent in user space from the previous recorded call's
# exit to this entry plus from this exit to its next recorded call's entry,
# read per I/O from the trace's raw sys_enter/sys_exit events. That time
# depends on the load: 2-5 us at p50 unloaded, 7.8 us with a full `make
# check` beside fio, and in a clean-clone CI run of psync-fsync (two fio
# jobs on the two CPUs) on XFS fio's read p50 was 75.3 us against ours 50.9:
# no fixed fraction of fio's figure bounds it on every machine (0.75 failed
# there). So the p50's lower bound allows fio a quarter of its figure or U's
# median, whichever is more:
#   p50:  fio * 0.98 - max(fio * 0.25, U p50) - 5 us  <=  sttrace
# (the bound that holds whatever the load, ours p55 + U p95 >= fio p50 by
# P(X + Y > a + b) <= P(X > a) + P(Y > b), is looser still: U counts fio's
# bookkeeping between its calls too.) In the tail, fio preempted between its clock read and
# the call lands in fio's p99, never in ours (the merged make check beside
# other engineers' builds: fio's buffered-write p99 41 us, ours 23 us; for
# calls of a few us the few fio preempted may make its whole p99: a
# clean-clone CI run had ext4 buffered writes at fio p99 23.4 us, ours
# 6.4 us, fio p50 4.4 us), so the tail's lower bound is taken from fio's
# p90, which the few do not reach:
#   p99:  fio p90 * 0.5 - 5 us  <=  sttrace
# Async engines (io_uring, libaio): fio (run with --lat_percentiles=1) stamps
# an I/O as it prepares it (start), when the submitting call has returned
# (issue) and once it has reaped it (completion): slat = start..issue,
# clat = issue..completion, lat = start..completion (fio 3.33, io_u.c,
# ioengines.c, engines/io_uring.c and libaio.c). Ours: total + reap, from
# inside the submitting call (io_uring_submit_req; libaio's
# iomap_dio_rw_begin in io_submit) to the reap: libaio, the return of the
# io_getevents that handed the event over; io_uring, the return of a call
# that only waited, or else the entry of fio's first io_uring_enter whose
# ring CQ head has passed the CQE. fio reaps CQEs from the shared ring
# without a syscall whenever some are waiting (its submitting calls post
# them: it sets up the ring with DEFER_TASKRUN), so that read itself is
# invisible to the kernel; the head at the next entry shows it happened
# since the previous call. So per I/O: our start is after fio's start and
# before its issue; our end is just before its completion stamp (a return
# fio stamps right after) or after it, by fio's own time in user space
# between that stamp and its next call (io_uring only). Hence:
#   p50:       fio clat * 0.98 - 5 us  <=  total + reap
#   p99:       fio clat * 0.5 - 5 us   <=  total + reap
#   libaio:    total + reap  <=  fio lat * 1.02 + 5 us
#   io_uring:  total + reap  <=  fio lat * 1.02 + G
# (0.98, 1.02: fio's histogram bucket, <= 1.6 %; 5 us: the clock reads and
# syscall return between our stamp and fio's. p99's lower bound is loose as
# the sync engines' is: fio preempted between a waiting call's return and its
# completion stamp adds to its clat, not to ours; a clean-clone CI run had
# total+reap p99 996 us against fio clat p99 1122 us on XFS.) G is fio's time in user space
# between two of its io_uring_enter calls, which holds its completion stamp
# and our reap's end: 10 us at p50 (the gap's median was 2.1 us on the
# loaded machine). At p99 the bound is on a sum, per I/O at most fio's lat
# plus that gap, and P(X + Y > a + b) <= P(X > a) + P(Y > b): the sum's p99
# is at most fio lat's p99.5 plus the gap's p99.5, read from the trace's raw
# sys_exit/sys_enter events (75 us at p99 on the loaded machine: fio
# preempted in user space; using the p99s alone failed once by 12 us). At least 99 % of the I/Os show a reap: the CQEs fio reads
# after its last call of the run have no later entry to show it.
# The kernel's total alone (submit -> CQE posted, or iocb done) stays below
# fio's lat (the first 'latency' check).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"

why=$(bpf_unavailable)
[ -z "$why" ] || { skip truth "$why"; exit 0; }
for tool in fio jq mkfs.xfs; do
	command -v $tool >/dev/null || { skip truth "$tool not installed"; exit 0; }
done

st_tmpdir T
SUMMARY=$T/summary
DATA=truth.dat

# pct FILE Q: nearest-rank Q-th percentile of the numbers in FILE (one a line).
pct() {
	sort -n "$1" | awk -v q="$2" '{ v[NR] = $1 } END {
		if (!NR) { print "none"; exit } r = int(q / 100 * NR); if (r < q / 100 * NR) r++;
		if (r < 1) r = 1; print v[r] }'
}

# between OURS FIO LOW SLACK [inf]: fio * LOW - SLACK <= ours <= fio * 1.02 + SLACK
# (with inf: the lower bound alone)
between() {
	awk -v o="$1" -v f="$2" -v low="$3" -v s="$4" -v up="${5:-}" 'BEGIN {
		exit !(o != "none" && o >= f * low - s && (up == "inf" || o <= f * 1.02 + s)) }'
}

# within OURS CLAT LOW LAT SLACK: clat * LOW - 5 <= ours <= lat * 1.02 + SLACK
within() {
	awk -v o="$1" -v c="$2" -v low="$3" -v l="$4" -v s="$5" 'BEGIN {
		exit !(o != "none" && o >= c * low - 5 && o <= l * 1.02 + s) }'
}

# user_gap FILE Q: Q-th percentile in us of the time threads spent in user space
# from an io_uring_enter's return to their next io_uring_enter (raw events), at least 5.
user_gap() {
	st-format cat --csv -t sys_enter_io_uring_enter,sys_exit_io_uring_enter "$1" |
		awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
			{ print $(col["ts"]), $(col["tid"]), $(col["type"]) }' | sort -n -k1,1 |
		awk '$3 == "sys_exit_io_uring_enter" { out[$2] = $1; next }
			($2 in out) { print ($1 - out[$2]) / 1000; delete out[$2] }' >"$T/gaps"
	pct "$T/gaps" "$2" | awk '{ print ($1 == "none" || $1 < 5) ? 5 : $1 }'
}

# user_time FILE Q: Q-th percentile in us of U per data call (pread64, pwrite64,
# preadv2, pwritev2, fsync, fdatasync) of the workload's threads: the user
# space time from the thread's previous recorded call's exit to its entry,
# plus from its exit to the next recorded call's entry (a side with no call
# counts 0).
user_time() {
	local t calls="pread64 pwrite64 preadv2 pwritev2 fsync fdatasync" types=
	for t in $calls; do types+="sys_enter_$t,sys_exit_$t,"; done
	st-format cat --csv -t "${types%,}" "$1" |
		awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		{ print $(col["tid"]), $(col["ts"]), $(col["type"]) }' | sort -n -k1,1 -k2,2 |
		awk '$1 != tid { if (open) print before / 1000; tid = $1; out = ""; open = 0 }
		$3 ~ /^sys_enter_/ { gap = out == "" ? 0 : $2 - out
			if (open) print (before + gap) / 1000
			before = gap; open = 1; next }
		{ out = $2 }
		END { if (open) print before / 1000 }' >"$T/user_time"
	pct "$T/user_time" "$2"
}

# run_case FS NAME KIND FIO_ARGS...: KIND sync, uring or libaio (the bounds above).
run_case() {
	local fs=$1 name=$2 kind=$3 dir=$T/$1 tag="truth.$1.$2" n
	shift 3
	rm -f "$dir/$DATA"
	fio --name=layout --directory="$dir" --filename=$DATA --size=32M --create_only=1 \
		>/dev/null 2>&1 || { fail "$tag.layout" "fio could not lay out the file"; return; }
	# a fio of its own, out of the page cache, as on a machine that never ran
	# it: which of its pages a job process has mapped when it passes a path
	# from them to openat differs from a warm run (the recorder must read
	# those paths all the same)
	local fio
	st_fresh_fio fio "$T/fio.$fs.$name"
	st-record -o "$T/$name.sttrace" -e all -- "$fio" --name="$name" --directory="$dir" \
		--filename=$DATA --size=32M --group_reporting=1 --output-format=json \
		--output="$T/$name.json" "$@" >"$T/$name.rec" 2>&1 ||
		{ fail "$tag.record" "st-record failed: $(tail -1 "$T/$name.rec")"; return; }
	st-analyze "$T/$name.sttrace" >"$T/$name.sum" 2>&1 ||
		{ fail "$tag.analyze" "st-analyze failed: $(tail -1 "$T/$name.sum")"; return; }
	st-analyze --csv --quantile 0.0001 --top 10000000 "$T/$name.sttrace" >"$T/$name.csv" 2>/dev/null
	# op, total and reap of every I/O fio's threads made of the data file, one
	# a line: named by its path, or (libaio iocbs, known by their iomap begin)
	# by device and inode. A kernel worker's writeback of the file's pages
	# outside fio's calls is an I/O of its own (once in 3 runs of
	# buffered-fdatasync: a loop worker's 32 KB write), no call fio counts.
	local ino
	ino="ino $(rec_devno "$(findmnt -no SOURCE "$dir")")/$(stat -c %i "$dir/$DATA")"
	awk -F, -v data="$DATA" -v ino="$ino" -v comm="${fio##*/}" '
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		{ f = $(col["file"]); gsub(/"/, "", f) }
		$(col["comm"]) == substr(comm, 1, 15) && (f ~ ("/" data "$") || f == data || f == ino) {
			print $(col["op"]), $(col["total_us"]), $(col["reap_us"]) }' "$T/$name.csv" >"$T/$name.ios"
	# incomplete I/Os of the data file: its group in the summary by file
	local incomplete
	st-analyze --csv --by file "$T/$name.sttrace" 2>/dev/null >"$T/$name.byfile"
	incomplete=$(awk -F, -v data="$DATA" -v ino="$ino" '
		{ g = $1; gsub(/"/, "", g) }
		(g ~ ("/" data "$") || g == data || g == ino) && !done[g]++ { n += $5; seen = 1 }
		END { if (seen) print n }' \
		"$T/$name.byfile" | head -1)
	if [ "$incomplete" = 0 ]; then pass "$tag.incomplete"; else
		fail "$tag.incomplete" "${incomplete:-?} incomplete I/Os; recorder: $(tail -1 "$T/$name.rec"); analyzer: $(sed -n 2p "$T/$name.sum")"; fi
	local op fio_op count fio_count p50 p99 f50 f90 f99 low clat u50=
	for op in read write fsync; do
		# fio's sync section counts its fsync/fdatasync calls in lat_ns.N (total_ios
		# stays 0 for fdatasync)
		fio_op=$op count=total_ios; [ $op = fsync ] && fio_op=sync count=lat_ns.N
		fio_count=$(jq ".jobs[0].$fio_op.$count" "$T/$name.json")
		awk -v op=$op '$1 == op { print $2 }' "$T/$name.ios" >"$T/$name.$op"
		count=$(wc -l <"$T/$name.$op")
		[ "$fio_count" = 0 ] && [ "$count" = 0 ] && continue
		if [ "$count" = "$fio_count" ]; then pass "$tag.$op.count"; else
			fail "$tag.$op.count" "fio $fio_count, sttrace $count"; fi
		# sync engines: clat (no submission latency); fsyncs and async engines: lat
		clat=clat_ns; [ $op = fsync ] || [ "$kind" != sync ] && clat=lat_ns
		f50=$(jq ".jobs[0].$fio_op.$clat.percentile[\"50.000000\"] / 1000" "$T/$name.json")
		f90=$(jq ".jobs[0].$fio_op.$clat.percentile[\"90.000000\"] / 1000" "$T/$name.json")
		f99=$(jq ".jobs[0].$fio_op.$clat.percentile[\"99.000000\"] / 1000" "$T/$name.json")
		p50=$(pct "$T/$name.$op" 50)
		p99=$(pct "$T/$name.$op" 99)
		printf '| %s %s | %s | %s | %s / %s | %s / %s |\n' "$fs" "$name" "$op" \
			"$fio_count vs $count" "$f50" "$f99" "$p50" "$p99" >>"$SUMMARY"
		if [ "$kind" = sync ]; then
			[ -n "$u50" ] || u50=$(user_time "$T/$name.sttrace" 50)
			between "$p50" "$f50" 0 5 && between "$p99" "$f99" 0 5 &&
				awk -v o="$p50" -v u="$u50" -v f="$f50" 'BEGIN {
					exit !(o >= f * 0.98 - (u > f * 0.25 ? u : f * 0.25) - 5) }' &&
				between "$p99" "$f90" 0.5 5 inf
		else
			between "$p50" "$f50" 0 1 && between "$p99" "$f99" 0 1
		fi && pass "$tag.$op.latency" ||
			fail "$tag.$op.latency" "p50 $p50 us vs fio $f50 us, p99 $p99 us vs fio $f99 us ($kind${u50:+; U p50 $u50 us})"
		[ "$kind" = sync ] && continue
		awk -v op=$op '$1 == op && $3 != "" { print $2 + $3 }' "$T/$name.ios" >"$T/$name.$op.reaped"
		p50=$(pct "$T/$name.$op.reaped" 50)
		p99=$(pct "$T/$name.$op.reaped" 99)
		local c50 c99 g50=5 g99=5 l99=$f99
		c50=$(jq ".jobs[0].$fio_op.clat_ns.percentile[\"50.000000\"] / 1000" "$T/$name.json")
		c99=$(jq ".jobs[0].$fio_op.clat_ns.percentile[\"99.000000\"] / 1000" "$T/$name.json")
		if [ "$kind" = uring ]; then
			g50=10
			g99=$(user_gap "$T/$name.sttrace" 99.5)
			l99=$(jq ".jobs[0].$fio_op.lat_ns.percentile[\"99.500000\"] / 1000" "$T/$name.json")
		fi
		printf '| %s %s | %s total+reap | %s reaped | clat %s / %s, lat %s / %s | %s / %s |\n' \
			"$fs" "$name" "$op" "$(wc -l <"$T/$name.$op.reaped")" "$c50" "$c99" "$f50" "$f99" \
			"$p50" "$p99" >>"$SUMMARY"
		if [ "$(wc -l <"$T/$name.$op.reaped")" -ge $((fio_count * 99 / 100)) ] &&
			within "$p50" "$c50" 0.98 "$f50" "$g50" && within "$p99" "$c99" 0.5 "$l99" "$g99"; then
			pass "$tag.$op.total_reap"
		else
			fail "$tag.$op.total_reap" "$(wc -l <"$T/$name.$op.reaped") reaped; p50 $p50 us vs fio clat $c50 lat $f50 us, p99 $p99 us vs fio clat $c99 lat $f99 us (upper bound from lat $l99 us, G $g99 us)"
		fi
	done
}

echo "| workload | op | fio count vs sttrace | fio p50 / p99 (us) | sttrace p50 / p99 (us) |" >"$SUMMARY"
echo "|---|---|---|---|---|" >>"$SUMMARY"
for fs in ext4 xfs; do
	st_loopdev dev 512
	mkdir -p "$T/$fs"
	if [ $fs = ext4 ]; then mkfs.ext4 -q -F "$dev"; else mkfs.xfs -q -f "$dev"; fi ||
		{ fail "truth.$fs.mkfs" "mkfs.$fs failed"; continue; }
	mount "$dev" "$T/$fs" || { fail "truth.$fs.mount" "mount failed"; continue; }
	at_exit "umount '$T/$fs'"
	run_case $fs psync-fsync sync --rw=randrw --rwmixread=70 --bssplit=4k/70:16k/30 --direct=1 \
		--ioengine=psync --fsync=16 --numjobs=2 --number_ios=2000
	run_case $fs buffered-fdatasync sync --rw=write --bs=8k --ioengine=psync --fdatasync=4 \
		--number_ios=2000
	run_case $fs sync1 sync --rw=randwrite --bs=4k --direct=1 --sync=1 --ioengine=psync \
		--number_ios=2000
	run_case $fs pvsync2 sync --rw=randread --bs=4k --direct=1 --ioengine=pvsync2 \
		--number_ios=4000
	run_case $fs io_uring-qd16 uring --rw=randread --bs=4k --direct=1 --ioengine=io_uring \
		--iodepth=16 --number_ios=8000 --lat_percentiles=1
	run_case $fs libaio-qd8 libaio --rw=randread --bs=4k --direct=1 --ioengine=libaio \
		--iodepth=8 --number_ios=8000 --lat_percentiles=1
done
cat "$SUMMARY"
