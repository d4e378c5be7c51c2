#!/usr/bin/env bash
# One device cache flush is one flush I/O, the task's that asked for it.
#
# fsync of a raw block device sends one empty PREFLUSH bio from the calling
# thread; kblockd issues the flush request that serves it (no bios), and the
# bio's own request then completes without an issue. Both used to be flush
# I/Os: st-analyze showed twice the flushes the device made. Truth: the
# device's flush counter (/sys/block/X/stat field 16, flush requests
# completed) over the recording, and the flush requests blkparse shows
# dispatched (D FN) in the recording converted to blktrace's format.
# - raw loop device, fio --direct=1 --fsync=16, recorded with
#   block_bio_queue (--no-stamps) and without (stamped issues): flush I/Os =
#   the counter's flushes = blkparse's; with the bios queued, every flush
#   I/O is fio's and has the flush's D2C; stamped, the bio's request's
#   completion is not one of a request begun before the trace.
# - ext4 on the loop device, fio --fsync=1: flush I/Os = the counter's.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
rec_require_bpf record_flush_count
command -v fio >/dev/null || { skip record_flush_count "fio not installed"; exit 0; }
command -v blkparse >/dev/null || { skip record_flush_count "blkparse not installed"; exit 0; }

st_tmpdir T
st_loopdev L 64
NAME=$(basename "$L")
flushes_done() { awk '{ print $16 }' "/sys/block/$NAME/stat"; }

# record NAME TRACE CMD...: CMD recorded with `-d L` and the recorder options
# in $OPTS; the device's flushes over it in $DISK_FLUSHES.
record() {
	local name=$1 trace=$2 before
	shift 2
	# shellcheck disable=SC2086
	rec_start "$trace" "$T/$name.log" $OPTS -d "$L" || { fail "$name" "$(cat "$T/$name.log")"; return 1; }
	before=$(flushes_done)
	"$@" >"$T/$name.out" 2>&1 || { fail "$name" "$* failed: $(tail -1 "$T/$name.out")"; rec_stop; return 1; }
	sync
	DISK_FLUSHES=$(($(flushes_done) - before))
	rec_stop || { fail "$name" "st-record failed: $(tail -1 "$T/$name.log")"; return 1; }
}

# flush_ios TRACE: the flush I/Os st-analyze counts on the device
flush_ios() {
	st-analyze --dev "$L" "$1" 2>/dev/null | awk -v d="$NAME" '$1 == d && $2 == "flush:" { n += $3 } END { print n + 0 }'
}

# blk_flushes TRACE: flush requests dispatched, as blkparse reads the trace
blk_flushes() {
	st-format convert "$1" --to blktrace -o "$T/bt" --force >/dev/null 2>&1 &&
		blkparse -i "$T/bt" 2>/dev/null | awk '$6 == "D" && $7 ~ /^FN/' | wc -l
}

for mode in queued stamped; do
	name=record_flush_count_raw_$mode
	OPTS="-e block"
	[ $mode = queued ] && OPTS="-e block --no-stamps"
	record "$name" "$T/$mode.sttrace" fio --name=flush --filename="$L" --rw=write --bs=4k --size=1M \
		--fsync=16 --direct=1 || continue
	ios=$(flush_ios "$T/$mode.sttrace")
	blk=$(blk_flushes "$T/$mode.sttrace")
	if [ "$DISK_FLUSHES" -gt 0 ] && [ "$ios" -eq "$DISK_FLUSHES" ] && [ "$blk" -eq "$DISK_FLUSHES" ]; then
		pass "$name"
	else
		fail "$name" "$ios flush I/Os, the device completed $DISK_FLUSHES flushes, blkparse dispatched $blk"
	fi
	if [ $mode = stamped ]; then
		# the PREFLUSH bios' requests complete unissued after their flush:
		# not requests begun before the trace (the device idled before it)
		orphans=$(st-analyze "$T/$mode.sttrace" 2>/dev/null | sed -n 's/.* requests, \([0-9]*\) completions.*/\1/p')
		if [ "$orphans" = 0 ]; then
			pass record_flush_count_raw_no_orphans
		else
			fail record_flush_count_raw_no_orphans "${orphans:-no} completions begun before the trace"
		fi
		continue
	fi
	# every flush I/O: fio's, with a D2C
	other=$(st-analyze --csv --quantile 0.0001 --top 1000000 --dev "$L" "$T/$mode.sttrace" 2>/dev/null |
		awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
			$(col["op"]) == "flush" && ($(col["comm"]) != "fio" || $(col["D2C_us"]) == "")' | wc -l)
	if [ "$other" -eq 0 ]; then
		pass record_flush_count_raw_owner
	else
		fail record_flush_count_raw_owner "$other flush I/Os not fio's or without D2C"
	fi
done

rec_ext4 record_flush_count_ext4 "$L" "$T/mnt" -E lazy_itable_init=0,lazy_journal_init=0
for mode in queued stamped; do
	name=record_flush_count_ext4_$mode
	OPTS="-e all"
	[ $mode = queued ] && OPTS="-e all --no-stamps"
	record "$name" "$T/ext4$mode.sttrace" fio --name=flush --filename="$T/mnt/f.$mode" --rw=write --bs=4k \
		--size=256k --fsync=1 || continue
	ios=$(flush_ios "$T/ext4$mode.sttrace")
	if [ "$DISK_FLUSHES" -gt 0 ] && [ "$ios" -eq "$DISK_FLUSHES" ]; then
		pass "$name"
	else
		fail "$name" "$ios flush I/Os, the device completed $DISK_FLUSHES flushes"
	fi
done
