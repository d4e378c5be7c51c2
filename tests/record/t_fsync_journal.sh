#!/usr/bin/env bash
# The journal commit an fsync waits for stays in the trace under a task filter.
#
# fio makes 4k psync writes that extend a new file on ext4, with an fsync
# every 16: each fsync waits for jbd2's commit of the file's new size and
# blocks, which a kernel thread (jbd2) queues on the file system's device.
# Truth: the same fsyncs recorded system-wide at the same time by a second
# recorder (`-d` alone, block_bio_queue added so that both take the bios'
# queueing from the same probe), which keeps every bio of the device.
# - Recorded `-e all -- fio` (record_fsync_journal_command), the fsyncs of
#   the data file show `jnl` as often as in the system-wide trace, with a
#   p50 within 10 % of its p50.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
rec_require_bpf record_fsync_journal
command -v fio >/dev/null || { skip record_fsync_journal "fio not installed"; exit 0; }

st_tmpdir T
st_loopdev L 256
rec_ext4 record_fsync_journal "$L" "$T/mnt" -E lazy_itable_init=0,lazy_journal_init=0
DATA=$T/mnt/journal.dat

# jnl NAME TRACE: the jnl stage of every fsync of the data file (us, one a line)
jnl() {
	st-analyze --csv --quantile 0.0001 --top 10000000 "$2" 2>/dev/null |
		awk -F, -v data="$DATA" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
			{ f = $(col["file"]); gsub(/"/, "", f) }
			$(col["op"]) == "fsync" && f == data && $(col["jnl_us"]) != "" {
				print $(col["jnl_us"]) }' | sort -n >"$T/$1.jnl"
}

rec_start "$T/all.sttrace" "$T/all.log" -e all,block_bio_queue -d "$L" ||
	{ fail record_fsync_journal "$(cat "$T/all.log")"; exit 1; }
st-record -o "$T/cmd.sttrace" -e all -- fio --name=journal --filename="$DATA" --rw=write \
	--bs=4k --size=8M --ioengine=psync --fsync=16 --fallocate=none >"$T/cmd.log" 2>&1 ||
	fail record_fsync_journal_command "st-record failed: $(tail -1 "$T/cmd.log")"
rec_stop || fail record_fsync_journal_command "the system-wide recorder failed: $(tail -1 "$T/all.log")"

jnl all "$T/all.sttrace"
jnl cmd "$T/cmd.sttrace"
n_all=$(wc -l <"$T/all.jnl")
n_cmd=$(wc -l <"$T/cmd.jnl")
p50_all=$(awk -v n="$n_all" 'NR == int((n + 1) / 2) { print $1 }' "$T/all.jnl")
p50_cmd=$(awk -v n="$n_cmd" 'NR == int((n + 1) / 2) { print $1 }' "$T/cmd.jnl")
if [ "$n_all" -gt 0 ] && [ "$n_cmd" = "$n_all" ] &&
	awk -v a="$p50_cmd" -v b="$p50_all" 'BEGIN { exit !(a >= b * 0.9 && a <= b * 1.1) }'; then
	pass record_fsync_journal_command
else
	fail record_fsync_journal_command "jnl in $n_cmd fsyncs (system-wide $n_all), p50 ${p50_cmd:-none} us (system-wide ${p50_all:-none} us)"
fi
