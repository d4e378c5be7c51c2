#!/usr/bin/env bash
# The probes hand records over in per-CPU batches (bpf/stage.bpf.h): a
# record must still reach the file while recording when its CPU goes quiet
# right after it (st-record flushes such CPUs at each drain), and every
# record must come out once, in one piece, when the CPUs are busy.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
rec_require_bpf record_batches

st_tmpdir T
st_loopdev L 64
# Two jobs read every block once each: adjacent blocks in flight together could merge.
st_nomerges "$L"

# ---- one read on an otherwise quiet device, looked for while recording
rec_start "$T/q.sttrace" "$T/qlog" -e block -d "$L" ||
	{ fail record_batches_quiet "$(cat "$T/qlog")"; exit 1; }
dd if="$L" of=/dev/null bs=4k skip=777 count=1 iflag=direct status=none
# a partial chunk is sealed once a second; give it two
sleep 2.5
# its completion, the CPU's last record (a compact one names the request only)
rq=$(rec_issued "$T/q.sttrace" sector rq | awk '$1 == 6216 { print $2 }')
seen=$(rec_completed "$T/q.sttrace" rq | grep -cx "${rq:-none}")
if [ "$seen" = 1 ]; then
	pass record_batches_quiet_cpu_flushed
else
	fail record_batches_quiet_cpu_flushed "the read at sector 6216 (request ${rq:-not issued}) has ${seen:-0} completions in the live file, want 1"
fi
rec_stop

# ---- both CPUs busy: every I/O's events exactly once
# Every probe run in the window must leave its record in the file, once.
# The kernel's own count of the runs (BPF statistics) is the truth: the
# recording takes every disk (no -d) into a file on tmpfs (no block I/O of
# its own), so every run of the issue and completion programs records. A
# run under way as the window opened or closed (other users' I/O) may have
# recorded or not: st-record counts those apart (edge_runs). fio's
# count is the truth for the loop device. Under load this kernel now and then
# does not run the completion program for a burst of completions (the
# tracepoint fired: tracefs counted every one) and counts no miss either; the
# trace cannot hold those, so they are allowed, named, when the kernel's
# run count shows them (record/README.md, "What is lost").
rec_bpf_stats || { fail record_batches_busy "the kernel refused BPF run-time statistics"; exit 1; }
TMPDIR=/dev/shm st_tmpdir S
rec_start "$S/b.sttrace" "$T/blog" -e block ||
	{ fail record_batches_busy "$(cat "$T/blog")"; exit 1; }
# one job per CPU: both CPUs stage records
pin=()
[ "$(nproc)" -ge 2 ] && pin=(--cpus_allowed=0,1 --cpus_allowed_policy=split)
fio --name=busy --filename="$L" --direct=1 --ioengine=io_uring --iodepth=16 --rw=randread \
	--bs=4k --size=40M --numjobs=2 --randrepeat=0 "${pin[@]}" \
	--output-format=terse --terse-version=3 >"$T/fio.out"
rec_stop
mv "$S/b.sttrace" "$T/b.sttrace"
ios=$(awk -F';' '{ s += $6 } END { print s / 4 }' "$T/fio.out")	# terse v3: KiB read, in 4k reads
# probe runs the kernel skipped (a probe interrupted by itself) are counted, not lost
skipped=$(st-format info --json "$T/b.sttrace" | jq '.lost_per_cpu.any // 0')
ldev=$(rec_devno "$L")
# runs_recorded FILE PROGRAM ROWS: each run of PROGRAM in the window left one
# of the records ROWS (a command printing one line per record, given a
# column) lists, and a run under way at an edge one or none; else says so.
runs_recorded() {
	local file=$1 program=$2 rows=$3 total runs edge
	total=$($rows "$file" ts | wc -l)
	runs=$(rec_probe_runs "$file" "$program")
	edge=$(rec_probe_runs "$file" "$program" edge_runs)
	[ "$total" -ge "$runs" ] && [ "$total" -le $((runs + edge)) ] && return 0
	echo "the kernel ran the $program program $runs times in the window and $edge times as it opened or closed, the trace has $total records"
	return 1
}
# every_run PROGRAM ROWS: runs_recorded, and fio's reads on the loop device
# are all there.
every_run() {
	local program=$1 rows=$2 why n every=0
	if why=$(runs_recorded "$T/b.sttrace" "$program" "$rows"); then
		every=1
		pass "record_batches_busy_every_run_$program"
	else
		fail "record_batches_busy_every_run_$program" "$why"
	fi
	n=$($rows "$T/b.sttrace" dev | grep -cx "$ldev")
	if [ "$n" = "$ios" ] || { [ "$n" -lt "$ios" ] && [ $((ios - n)) -le "$skipped" ]; }; then
		pass "record_batches_busy_$program"
	elif [ "$n" -lt "$ios" ] && [ "$every" = 1 ]; then
		echo "the kernel did not run the $program program for $((ios - n)) of fio's $ios reads and counted no miss"
		pass "record_batches_busy_$program"
	else
		fail "record_batches_busy_$program" "fio did $ios reads, the trace has $n of its records on $ldev ($total in all, of $runs probe runs) and counts $skipped skipped probe runs"
	fi
}
stamped_issues() { rec_rows "$1" block_rq_issue_stamped "${@:2}"; }
every_run block_rq_issue_stamped stamped_issues
# the compact completion's program writes a whole record for a request in the flush sequence
every_run block_rq_complete_compact rec_completed

# ---- the window's edges busy: short recordings while fio reads on. A run
# the kernel counts once it ends, and it reads the window in its middle, so
# runs under way while the window opened or closed were counted with the
# window's runs and had no record: 5 of 10 such recordings showed 3-8 of
# them, the busy one above now and then one (20749 runs, 20748 records).
fio --name=edges --filename="$L" --direct=1 --ioengine=libaio --iodepth=16 --rw=randread \
	--bs=4k --time_based --runtime=120 --output=/dev/null &
EDGES=$!
at_exit "kill $EDGES"
edges_bad=""
for ((i = 0; i < 10; i++)); do
	rec_start "$S/e.sttrace" "$T/elog" -e block ||
		{ fail record_batches_busy_edges "$(cat "$T/elog")"; exit 1; }
	sleep 0.1
	rec_stop
	for program in "block_rq_issue_stamped stamped_issues" "block_rq_complete_compact rec_completed"; do
		why=$(runs_recorded "$S/e.sttrace" $program) || edges_bad+="recording $i: $why; "
	done
done
kill "$EDGES"
wait "$EDGES" 2>/dev/null
if [ -z "$edges_bad" ]; then
	pass record_batches_busy_edges
else
	fail record_batches_busy_edges "$edges_bad"
fi
dups=$(rec_issued "$T/b.sttrace" ts cpu rq | sort | uniq -d | wc -l)
if [ "$dups" = 0 ]; then
	pass record_batches_no_duplicates
else
	fail record_batches_no_duplicates "$dups issue events twice"
fi
cpus=$(rec_issued "$T/b.sttrace" cpu | sort -u | wc -l)
if [ "$(nproc)" -lt 2 ] || [ "$cpus" -ge 2 ]; then
	pass record_batches_several_cpus
else
	fail record_batches_several_cpus "submissions on $cpus CPU only with $(nproc) CPUs: the test did not exercise batches of several CPUs"
fi
ring_lost=$(($(rec_lost "$T/b.sttrace") - skipped))
if [ "$ring_lost" = 0 ]; then
	pass record_batches_no_loss
else
	fail record_batches_no_loss "$ring_lost records found no room in the ring buffer"
fi
