#!/usr/bin/env bash
# The `why` events (issue 24), each on a workload that causes it, counted
# against bpftrace counting the same tracepoint for the same threads inside
# the same syscalls (its own map of who is inside one), and against what
# the kernel and the files say:
# - why_sched (-e all,sched): 3000 direct 4k reads by dd of a loop device beside two busy
#   loops. dd's switch-outs recorded (inside its reads: it is followed only
#   there) equal bpftrace's count (+-1 % + 2) and are at most its context
#   switches (/usr/bin/time -v: voluntary + involuntary), its blocked ones
#   at most its voluntary switches.
# - why_run_delay: in the same recording (-e all,sched), dd's run-queue
#   wait inside its calls from the run_delay fields (exit's - entry's)
#   equals bpftrace's sum of the same counter at the same tracepoints.
# - why_svc_run_delay: the threads that completed the requests are kernel
#   threads whose svc_run_delay never decreases and is at most their
#   /proc/TID/schedstat run-queue time read after.
# - why_svc_raiser: the threads those records name as raising the block
#   softirq (ksoftirqd completes under the busy loops) are kernel threads,
#   the loop device's workers among them, whose raiser_run_delay never
#   decreases in the order of their raises (each before its record) and is
#   at most their /proc/TID/schedstat run-queue time read after.
# - why_service: the loop device's workers (the kworkers /proc names after
#   its workqueue) have sched records: dd's reads woke them.
# - why_untraced: the busy loops, not traced, appear only in switches whose
#   other thread is followed (dd, another thread inside a traced call, a
#   thread that completed a request, a loop worker), and are never woken in
#   a record.
# - why_lock: two fio jobs writing one file buffered: contention_begin
#   records of fio's threads inside their calls equal bpftrace's count, and
#   there are some;
#   -e all (no sched preset) wrote no sched record.
# - why_dirty: vm.dirty_bytes = 4 MiB, 64 MiB of buffered writes to ext4:
#   balance_dirty_pages records and those with a pause equal bpftrace's.
# - why_cache: a cold buffered read of a 16 MiB file: the pages its
#   page-cache adds name equal the file's 4096 pages, and bpftrace's count.
# - why_device: with -d, two cold buffered reads at once, one of a file on
#   the device, one on another: the first's 4096 pages are added in the
#   records, none of the other device's.
# - why_reclaim: the same read of a 96 MiB file in a memory cgroup (v1)
#   limited to 32 MiB: memcg reclaim begins recorded equal bpftrace's,
#   and there are some; every begin has its end.
# - why_held: 100 direct reads in a blkio cgroup (v1) limited to 50 read
#   IOPS: a block_bio_held after each held block_bio_queue, with its ts,
#   blkcg = the cgroup directory's inode number, and metadata naming the
#   cgroup and its limit.
# - why_raiser_device: fio's direct reads of the loop device beside dd's of a
#   file on a disk with one hardware queue (/var/tmp's; SKIP on another), one
#   busy loop: no completion of that disk names a raiser (its hardirq raised
#   the softirq, or its request joined a list a loop worker's raise began),
#   some of the loop device's do.
# sysctls, cgroups, the mount and the loop device are restored or removed
# at exit, also on failure.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
rec_require_bpf why
rec_require_fio why
command -v bpftrace >/dev/null || { skip why "bpftrace not installed"; exit 0; }

st_tmpdir T
st_loopdev L 512
DEV=$(rec_devno "$L")
# workloads under names of their own: other tests may run dd or fio meanwhile
cp "$(command -v dd)" "$T/why_dd"
cp "$(command -v fio)" "$T/why_fio"
DD=$T/why_dd

CALLS="read write pread64 pwrite64 readv writev preadv pwritev preadv2 pwritev2 fsync fdatasync
	sync_file_range io_submit io_getevents io_uring_enter"
# bt_script COMM: bpftrace's program counting, for the threads of COMM while
# inside one of the data calls st-record follows them in, each tracepoint of
# a why event
bt_script() {
	local enter="" exit="" c
	for c in $CALLS; do
		enter+="${enter:+, }tracepoint:syscalls:sys_enter_$c"
		exit+="${exit:+, }tracepoint:syscalls:sys_exit_$c"
	done
	cat <<BT
$enter /comm == "$1"/ { @in[tid] = 1; @rd0[tid] = curtask->sched_info.run_delay; }
$exit /comm == "$1"/ { if (@in[tid]) { @runq = sum(curtask->sched_info.run_delay - @rd0[tid]); } delete(@in[tid]); }
tracepoint:sched:sched_switch /@in[args->prev_pid]/ { @switch_out = count(); }
tracepoint:lock:contention_begin /@in[tid]/ { @lock = count(); }
tracepoint:writeback:balance_dirty_pages /@in[tid]/ { @dirty = count(); if (args->pause > 0) { @paused = count(); } }
tracepoint:filemap:mm_filemap_add_to_page_cache /@in[tid]/ { @adds = count(); }
tracepoint:vmscan:mm_vmscan_memcg_reclaim_begin /@in[tid]/ { @memcg = count(); }
END { clear(@in); clear(@rd0); }
BT
}

# bt_count NAME: bpftrace's count @NAME (0 when it never counted)
bt_count() {
	awk -v m="@$1:" '$1 == m { print $2; found = 1 } END { if (!found) print 0 }' "$T/bt.out"
}

# near A B: A within 1 % + 2 of B
near() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= b / 100 + 2) }'; }

# kthread_delays ROWS: ROWS ("tid run_delay", each thread's in time order; -
# standard input) as kernel threads' run-queue counts: prints how many
# threads, then each one whose count decreases, is above what
# /proc/TID/schedstat (its second column, the same counter) says now, or is
# no kernel thread (PF_KTHREAD in /proc/TID/stat)
kthread_delays() {
	local rows tid last now flags bad="" n=0
	rows=$(cat "$1")
	for tid in $(awk '{ print $1 }' <<<"$rows" | sort -u); do
		n=$((n + 1))
		last=$(awk -v t="$tid" '$1 == t { if ($2 < m) d = 1; m = $2 } END { print d ? -1 : m }' <<<"$rows")
		now=$(awk '{ print $2 }' "/proc/$tid/schedstat" 2>/dev/null)
		flags=$(awk '{ sub(/^.*\) /, ""); print $7 }' "/proc/$tid/stat" 2>/dev/null)
		if [ "$last" = -1 ] || { [ -n "$now" ] && [ "$last" -gt "$now" ]; } ||
			{ [ -n "$flags" ] && [ $((flags & 0x200000)) = 0 ]; }; then
			bad+=" $tid(last $last, schedstat ${now:-gone}, flags ${flags:-gone})"
		fi
	done
	echo "$n$bad"
}

# record NAME COMM ARGS...: st-record -e $EVENTS (default all) -- ARGS, run
# by bpftrace (-c: its probes are attached before and it ends with the
# command), counting for COMM
record() {
	local name=$1 comm=$2
	shift 2
	printf '%q ' st-record -o "$T/$name.sttrace" -e "${EVENTS:-all}" -- "$@" >"$T/$name.sh"
	echo ">'$T/$name.log' 2>&1" >>"$T/$name.sh"
	bt_script "$comm" >"$T/$name.bt"
	bpftrace -c "/bin/sh $T/$name.sh" "$T/$name.bt" >"$T/bt.out" 2>"$T/bt.err" ||
		{ fail "$name" "bpftrace failed: $(tail -1 "$T/bt.err")"; return 1; }
	grep -q "^st-record: wrote" "$T/$name.log" ||
		{ fail "$name" "st-record failed: $(tail -1 "$T/$name.log")"; return 1; }
	[ "$(rec_lost "$T/$name.sttrace")" = 0 ] || { fail "$name" "events lost"; return 1; }
}

# ---- scheduling: dd's direct reads beside two busy loops ----------------
BUSY=()
for i in 1 2; do
	sh -c 'while :; do :; done' &
	BUSY+=($!)
	at_exit "kill -KILL ${BUSY[-1]}"
done
# the loop device's workers meanwhile: kworkers /proc names after their last
# work's workqueue ("kworker/u8:1-loop0"), sampled (others' loops share them)
LOOPN=$(basename "$L")
while :; do
	grep -lE "^kworker.*[-+]$LOOPN\$" /proc/[0-9]*/task/[0-9]*/comm 2>/dev/null | awk -F/ '{ print $5 }'
	sleep 0.02
done >"$T/workers.all" &
SAMPLER=$!
at_exit "kill $SAMPLER"
if EVENTS=all,sched record why_sched why_dd /usr/bin/time -v -o "$T/time.txt" \
	"$DD" if="$L" of=/dev/null bs=4k count=3000 iflag=direct; then
	kill "$SAMPLER"
	F=$T/why_sched.sttrace
	rec_rows "$F" sched_switch prev_tid next_tid prev_state prev_comm >"$T/switches"
	awk '$4 == "why_dd" { print $1 }' "$T/switches" | sort -u >"$T/dd.tids"
	# dd's switch-outs inside its calls (it also switches to followed threads between them)
	st-format cat "$F" | awk -v calls="$(echo $CALLS | tr ' ' '|')" 'FNR == NR { dd["tid=" $1] = 1; next }
		$2 ~ "^sys_enter_(" calls ")$" && ($5 in dd) { in_call[$5] = 1 }
		$2 ~ "^sys_exit_(" calls ")$" && ($5 in dd) { in_call[$5] = 0 }
		$2 == "sched_switch" && ($5 in dd) && in_call[$5] { n++; if ($8 != "prev_state=0x0") b++ }
		END { print n + 0, b + 0 }' "$T/dd.tids" - >"$T/in_calls"
	read -r out blocked <"$T/in_calls"
	vol=$(awk -F': ' '/Voluntary context switches/ { print $2 }' "$T/time.txt")
	invol=$(awk -F': ' '/Involuntary context switches/ { print $2 }' "$T/time.txt")
	bt=$(bt_count switch_out)
	if [ "$out" -gt 0 ] && near "$out" "$bt" && [ "$out" -le $((vol + invol)) ] && [ "$blocked" -le "$vol" ]; then
		pass why_sched
	else
		fail why_sched "dd's switch-outs recorded $out (blocked $blocked), bpftrace $bt, dd's context switches $vol voluntary + $invol involuntary"
	fi

	# the loop device's workers: kworkers whose last work was its (/proc names them
	# "kworker/u4:1-loop0"), with sched records; and the threads that completed its requests
	sort -u "$T/workers.all" >"$T/workers"
	{ rec_rows "$F" block_rq_complete_compact tid dev; rec_rows "$F" block_rq_complete tid dev; } |
		awk -v d="$DEV" '$2 == d { print $1 }' | sort -u >"$T/svc.tids"
	seen=$(awk 'FNR == NR { w[$1] = 1; next } ($1 in w) || ($2 in w) { s[$1 in w ? $1 : $2] = 1 }
		END { print length(s) }' "$T/workers" "$T/switches")
	if [ -s "$T/workers" ] && [ "$seen" -gt 0 ]; then
		pass why_service
	else
		fail why_service "$(wc -l <"$T/workers") kworkers of $LOOPN ($(tr '\n' ' ' <"$T/workers")), $seen with sched records"
	fi

	# the busy loops: only beside dd, another thread inside a traced call (its exit
	# recorded: the command, before its exec, waits for st-record in a read begun
	# before the probes) or a kernel thread (PF_KTHREAD in /proc/TID/stat)
	st-format cat "$F" | awk -v calls="$(echo $CALLS | tr ' ' '|')" '$2 ~ "^sys_exit_(" calls ")$" {
		sub(/^tid=/, "", $5); print $5 }' | sort -u >"$T/callers"
	busy_tids=$(printf '%s\n' "${BUSY[@]}")
	awk -v busy="$busy_tids" 'BEGIN { n = split(busy, b, "\n"); for (i = 1; i <= n; i++) bz[b[i]] = 1 }
		$1 in bz { print $2 } $2 in bz { print $1 }' "$T/switches" | sort | uniq -c >"$T/beside"
	named=0 stray=""
	while read -r n tid; do
		named=$((named + n))
		grep -qx "$tid" "$T/dd.tids" "$T/callers" && continue
		flags=$(awk '{ sub(/^.*\) /, ""); print $7 }' "/proc/$tid/stat" 2>/dev/null)
		[ -n "$flags" ] && [ $((flags & 0x200000)) != 0 ] && continue
		stray+=" $tid($(cat "/proc/$tid/comm" 2>/dev/null || echo gone)) x$n"
	done <"$T/beside"
	woken=$(rec_rows "$F" sched_wakeup woken_tid | grep -cxF -f <(echo "$busy_tids"))
	if [ -z "$stray" ] && [ "$woken" = 0 ]; then
		pass why_untraced
	else
		fail why_untraced "busy loops in $named switches, beside threads neither dd nor in a traced call nor kernel threads:${stray:- none}; woken in $woken records"
	fi

	# dd's run-queue waits inside its calls: exit's run_delay less entry's, summed,
	# equal bpftrace's sum of the same counter read at the same tracepoints
	for c in read write; do
		rec_rows "$F" "sys_enter_$c" ts tid run_delay
		rec_rows "$F" "sys_exit_$c" ts tid run_delay | sed 's/$/ exit/'
	done | sort -n >"$T/calls"
	runq=$(awk 'FNR == NR { dd[$1] = 1; next } !($2 in dd) { next }
		$4 != "exit" { at[$2] = $3; next } ($2 in at) { s += $3 - at[$2]; delete at[$2] }
		END { printf "%.0f\n", s }' "$T/dd.tids" "$T/calls")
	bt=$(bt_count runq)
	if [ "$runq" -gt 0 ] && near "$runq" "$bt"; then
		pass why_run_delay
	else
		fail why_run_delay "dd's run-queue wait inside its calls from run_delay: $runq ns, bpftrace $bt ns"
	fi

	# the completing kernel threads' run_delay: never decreasing, at most what
	# /proc/TID/schedstat (its second column, the same counter) says now
	rec_rows "$F" svc_run_delay tid run_delay >"$T/svc_delays"
	read -r n bad < <(kthread_delays "$T/svc_delays")
	if [ "$n" -gt 0 ] && [ -z "$bad" ]; then
		pass why_svc_run_delay
	else
		fail why_svc_run_delay "$n completing threads with svc_run_delay records; wrong:${bad:- none}"
	fi

	# the threads that raised the block softirq ksoftirqd completed in: the same,
	# in the order of their raises (each before its record), the loop device's
	# workers among them
	rec_rows "$F" svc_run_delay raised_at raiser_tid raiser_run_delay ts | awk '$2 != 0' |
		sort -n >"$T/raises"
	late=$(awk '$1 > $4' "$T/raises" | wc -l)
	read -r n bad < <(awk '{ print $2, $3 }' "$T/raises" | kthread_delays -)
	workers=$(awk '{ print $2 }' "$T/raises" | sort -u | grep -cxF -f "$T/workers")
	if [ "$n" -gt 0 ] && [ "$workers" -gt 0 ] && [ "$late" = 0 ] && [ -z "$bad" ]; then
		pass why_svc_raiser
	else
		fail why_svc_raiser "$n raising threads in $(wc -l <"$T/raises") svc_run_delay records, $workers of them $LOOPN's workers, $late raised after their record; wrong:${bad:- none}"
	fi
fi
for pid in "${BUSY[@]}"; do kill -KILL "$pid"; wait "$pid" 2>/dev/null; done

# ---- the raiser is the device's: a single-queue disk's completions name none --
# A disk with one hardware queue (virtio-blk here) raises the block softirq
# from its completion's hardirq, and its requests may join a list a loop
# worker's raise began: neither names a raiser, while the loop device's
# completions run in ksoftirqd do (one busy loop keeps them there; at nice
# -15 it starved st-record into losing events in a CI rehearsal, and fio's
# rate is bounded for the same reason).
disk=$(lsblk -no PKNAME "$(df --output=source /var/tmp | tail -1)" 2>/dev/null | head -1)
[ -n "$disk" ] || disk=$(basename "$(df --output=source /var/tmp | tail -1)")
if [ ! -d "/sys/block/$disk/mq" ] || [ "$(ls "/sys/block/$disk/mq" | wc -l)" != 1 ]; then
	skip why_raiser_device "/var/tmp is on $disk, not a disk with one hardware queue"
else
	DISKDEV=$(rec_devno "/dev/$disk")
	DATA=$(mktemp /var/tmp/why_raiser.XXXXXX)
	at_exit "rm -f '$DATA'"
	dd if=/dev/urandom of="$DATA" bs=1M count=32 status=none && sync
	sh -c 'while :; do :; done' &
	HOG=$!
	at_exit "kill -KILL $HOG"
	cat >"$T/raiser_load.sh" <<LOAD
'$T/why_fio' --name=r --filename='$L' --rw=randread --bs=4k --direct=1 --ioengine=psync \\
	--rate_iops=3000 --runtime=3 --time_based --output=/dev/null &
end=\$((\$(date +%s) + 3))
while [ \$(date +%s) -lt \$end ]; do
	'$DD' if='$DATA' of=/dev/null bs=4k iflag=direct status=none
done
wait
LOAD
	if record why_raiser why_fio sh "$T/raiser_load.sh"; then
		{ rec_rows "$T/why_raiser.sttrace" svc_run_delay cpu ts raiser_tid | sed 's/^/S /'
		  rec_rows "$T/why_raiser.sttrace" block_rq_complete_compact cpu ts dev | sed 's/^/C /'
		  rec_rows "$T/why_raiser.sttrace" block_rq_complete cpu ts dev | sed 's/^/C /'; } |
			awk '$1 == "S" { raiser[$2 " " $3] = $4; next } ($2 " " $3) in raiser {
				n[$4]++; if (raiser[$2 " " $3] != 0) named[$4]++ }
				END { for (d in n) print d, n[d], named[d] + 0 }' >"$T/raisers"
		read -r _ n_disk named_disk < <(awk -v d="$DISKDEV" '$1 == d' "$T/raisers")
		read -r _ n_loop named_loop < <(awk -v d="$DEV" '$1 == d' "$T/raisers")
		if [ "${n_disk:-0}" -gt 0 ] && [ "$named_disk" = 0 ] && [ "${named_loop:-0}" -gt 0 ]; then
			pass why_raiser_device
		else
			fail why_raiser_device "completions in kernel threads naming a raiser: $disk ${named_disk:-0} of ${n_disk:-0} (want 0 of some), $(basename "$L") ${named_loop:-0} of ${n_loop:-0} (want some)"
		fi
	fi
	kill -KILL "$HOG"
	wait "$HOG" 2>/dev/null
fi

# ---- a file system on the loop device ------------------------------------
mkfs.ext4 -q -F "$L" || { fail why "mkfs.ext4 $L failed"; exit 1; }
mkdir "$T/mnt"
mount "$L" "$T/mnt" || { fail why "cannot mount $L"; exit 1; }
at_exit "umount '$T/mnt'"

# ---- lock contention: two fio jobs writing one file -----------------------
if record why_lock why_fio "$T/why_fio" --name=lock --filename="$T/mnt/shared" --rw=write --bs=4k \
	--size=32M --numjobs=2 --ioengine=psync --output=/dev/null; then
	# those inside the calls' recorded entry..exit, bpftrace's window: st-record's
	# goes on to the return to user space, where the scheduler's spinlocks may be
	# contended after the exit tracepoint (1-3 of 30-40 seen under load)
	n=$(st-format cat "$T/why_lock.sttrace" | awk -v calls="$(echo $CALLS | tr ' ' '|')" '
		$2 ~ "^sys_enter_(" calls ")$" { in_call[$5] = 1 }
		$2 ~ "^sys_exit_(" calls ")$" { in_call[$5] = 0 }
		$2 == "contention_begin" && in_call[$5] { n++ }
		END { print n + 0 }')
	bt=$(bt_count lock)
	# -e all has the why events but not the sched preset's
	sched=$(($(rec_count "$T/why_lock.sttrace" sched_switch) + $(rec_count "$T/why_lock.sttrace" sched_wakeup)))
	if [ "$n" -gt 0 ] && near "$n" "$bt" && [ "$sched" = 0 ]; then
		pass why_lock
	else
		fail why_lock "contention_begin recorded $n, bpftrace $bt; sched records $sched (want 0 without -e sched)"
	fi
fi

# ---- dirty throttling -------------------------------------------------------
rec_dirty_bytes 4194304
if record why_dirty why_dd "$DD" if=/dev/zero of="$T/mnt/dirty" bs=1M count=64; then
	rec_rows "$T/why_dirty.sttrace" balance_dirty_pages pause_ns >"$T/pauses"
	n=$(wc -l <"$T/pauses")
	paused=$(awk '$1 > 0 { n++ } END { print n + 0 }' "$T/pauses")
	bt=$(bt_count dirty) bt_paused=$(bt_count paused)
	if [ "$n" = 0 ] && [ "$bt" = 0 ]; then
		# the sysctl is global: another test may have set it back meanwhile
		skip why_dirty "the kernel paused no write (vm.dirty_bytes now $(cat /proc/sys/vm/dirty_bytes))"
	elif [ "$paused" -gt 0 ] && near "$n" "$bt" && near "$paused" "$bt_paused"; then
		pass why_dirty
	else
		fail why_dirty "balance_dirty_pages recorded $n ($paused paused), bpftrace $bt ($bt_paused)"
	fi
fi
eval "$REC_DIRTY_RESTORE"

# cold FILE MB: a file of MB MiB written, on the disk, and out of the page cache
cold() {
	"$DD" if=/dev/zero of="$1" bs=1M count="$2" status=none && sync "$1" &&
		"$DD" if="$1" iflag=nocache count=0 status=none
}

# ---- page-cache adds of a cold buffered read --------------------------------
if cold "$T/mnt/cold" 16 && [ "$(fincore -n -o PAGES "$T/mnt/cold" | tr -d ' ')" = 0 ] &&
	record why_cache why_dd "$DD" if="$T/mnt/cold" of=/dev/null bs=1M; then
	ino=$(stat -c %i "$T/mnt/cold")
	pages=$(rec_rows "$T/why_cache.sttrace" mm_filemap_add_to_page_cache ino nr_pages |
		awk -v i="$ino" '$1 == i { s += $2 } END { print s + 0 }')
	n=$(rec_count "$T/why_cache.sttrace" mm_filemap_add_to_page_cache)
	want=$(($(stat -c %s "$T/mnt/cold") / $(getconf PAGESIZE)))
	bt=$(bt_count adds)
	if [ "$pages" = "$want" ] && near "$n" "$bt"; then
		pass why_cache
	else
		fail why_cache "page-cache adds of the file: $pages pages (the file has $want), $n records, bpftrace $bt"
	fi
else
	fail why_cache "cannot make a cold 16 MiB file"
fi

# ---- -d: only the threads of the device's I/O are followed ------------------
# two cold buffered reads at once, of a file on $L and of one on a second
# loop device, recorded with -d $L: the first file's adds are all there, the
# other device's none (its reader is in a traced call, but not on $L)
st_loopdev L2 64
mkfs.ext4 -q -F "$L2" && mkdir "$T/mnt2" && mount "$L2" "$T/mnt2" || { fail why_device "cannot mount $L2"; exit 1; }
at_exit "umount '$T/mnt2'"
if cold "$T/mnt/cold" 16 && cold "$T/mnt2/other" 16 &&
	st-record -o "$T/why_device.sttrace" -e all -d "$L" -- sh -c '"$1" if="$2" of=/dev/null bs=1M &
		"$1" if="$3" of=/dev/null bs=1M; wait' sh "$DD" "$T/mnt/cold" "$T/mnt2/other" >"$T/why_device.log" 2>&1; then
	rec_rows "$T/why_device.sttrace" mm_filemap_add_to_page_cache dev ino nr_pages >"$T/adds"
	ino=$(stat -c %i "$T/mnt/cold")
	pages=$(awk -v d="$(rec_devno "$L")" -v i="$ino" '$1 == d && $2 == i { s += $3 } END { print s + 0 }' "$T/adds")
	other=$(awk -v d="$(rec_devno "$L2")" '$1 == d { s += $3 } END { print s + 0 }' "$T/adds")
	want=$(($(stat -c %s "$T/mnt/cold") / $(getconf PAGESIZE)))
	if [ "$pages" = "$want" ] && [ "$other" = 0 ]; then
		pass why_device
	else
		fail why_device "page-cache adds: $pages pages of the file on $L (it has $want), $other of $L2's (want 0)"
	fi
else
	fail why_device "st-record or the files failed: $(tail -1 "$T/why_device.log")"
fi

# ---- memory cgroup reclaim ------------------------------------------------
MEMCG=/sys/fs/cgroup/memory
if [ -w "$MEMCG/cgroup.procs" ]; then
	CG=$MEMCG/sttrace-why.$$
	mkdir "$CG" && at_exit "rmdir '$CG'"
	echo $((32 << 20)) >"$CG/memory.limit_in_bytes"
	# shellcheck disable=SC2016
	if cold "$T/mnt/big" 96 && record why_reclaim why_dd sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' \
		sh "$CG" "$DD" if="$T/mnt/big" of=/dev/null bs=1M; then
		begins=$(rec_count "$T/why_reclaim.sttrace" mm_vmscan_memcg_reclaim_begin)
		ends=$(rec_count "$T/why_reclaim.sttrace" mm_vmscan_memcg_reclaim_end)
		bt=$(bt_count memcg)
		if [ "$begins" -gt 0 ] && [ "$ends" = "$begins" ] && near "$begins" "$bt"; then
			pass why_reclaim
		else
			fail why_reclaim "memcg reclaim recorded $begins begins, $ends ends; bpftrace $bt begins"
		fi
	fi
else
	skip why_reclaim "no cgroup v1 memory hierarchy at $MEMCG"
fi

# ---- a bio the blkio throttle held -----------------------------------------
umount "$T/mnt"
BLKIO=$(findmnt -n -t cgroup -o TARGET,OPTIONS | awk '$2 ~ /(^|,)blkio(,|$)/ { print $1; exit }')
if [ -n "$BLKIO" ]; then
	CG=$BLKIO/sttrace-why.$$
	mkdir "$CG" && at_exit "rmdir '$CG'"
	echo "$DEV 50" >"$CG/blkio.throttle.read_iops_device"
	# shellcheck disable=SC2016
	if record why_held why_dd sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' \
		sh "$CG" "$DD" if="$L" of=/dev/null bs=4k count=100 iflag=direct; then
		F=$T/why_held.sttrace
		ino=$(stat -c %i "$CG")
		# ST_F_HELD is 1 << 16 (format/lib/sttrace_events.h)
		rec_rows "$F" block_bio_queue ts bio opf | awk "$AWK_HEX"' int(hex($3) / 65536) % 2 { print $1, $2 }' |
			sort >"$T/held.queue"
		rec_rows "$F" block_bio_held ts bio blkcg dev | sort >"$T/held"
		bad=$(awk -v i="$ino" -v d="$DEV" '$3 != i || $4 != d' "$T/held" | wc -l)
		st-format info "$F" >"$T/held.info"
		if [ -s "$T/held" ] && [ "$(cut -d' ' -f1,2 "$T/held")" = "$(cat "$T/held.queue")" ] &&
			[ "$bad" = 0 ] && grep -qxF "  blkcg.$ino = blkio:/sttrace-why.$$" "$T/held.info" &&
			grep -qxF "  blkcg.$ino.limit = $DEV riops=50" "$T/held.info"; then
			pass why_held
		else
			fail why_held "$(wc -l <"$T/held") held records for $(wc -l <"$T/held.queue") held queue records, $bad not of cgroup $ino on $DEV; metadata: $(grep blkcg "$T/held.info" | tr '\n' ' ')"
		fi
	fi
else
	skip why_held "no cgroup v1 blkio hierarchy"
fi
exit "${ST_FAILED:-0}"
