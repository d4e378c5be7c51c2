#!/usr/bin/env bash
# The file survives what ends a recording badly: kill -9 leaves every complete
# chunk readable (verify reports the damage, recover makes it whole), a full
# output file system stops the recording cleanly with a clear message, a
# readable file and exit status 1, and so does a failing output disk (EIO).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
rec_require_bpf record_damage

st_tmpdir T
st_loopdev L 128

events_of() { st-format info "$1" | awk '/^events / { print $2; exit }'; }

# ---- kill -9 while events stream in
rec_start "$T/k.sttrace" "$T/klog" -e block -d "$L" --chunk-size 64K ||
	{ fail record_kill9 "$(cat "$T/klog")"; exit 1; }
dd if="$L" of=/dev/null bs=4k count=30000 iflag=direct status=none &
dd_pid=$!
at_exit "kill $dd_pid"
# the file grows chunk by chunk while recording: wait for a few of them
for ((i = 0; i < 200 && $(stat -c %s "$T/k.sttrace") < 200000; i++)); do sleep 0.05; done
kill -KILL "$REC_PID"
wait "$REC_PID" 2>/dev/null
wait "$dd_pid"
if st-format verify "$T/k.sttrace" >"$T/verify.out" 2>&1; then
	fail record_kill9_verify_reports "verify accepted a file without footer"
else
	pass record_kill9_verify_reports
fi
check record_kill9_recover st-format recover "$T/k.sttrace" -o "$T/kr.sttrace"
check record_kill9_recovered_verifies st-format verify "$T/kr.sttrace"
before=$(events_of "$T/k.sttrace")
after=$(events_of "$T/kr.sttrace")
if [ "${before:-0}" -gt 1000 ] && [ "$before" = "$after" ]; then
	pass record_kill9_keeps_chunks
else
	fail record_kill9_keeps_chunks "events readable after kill: ${before:-none}, after recover: ${after:-none}"
fi

# ---- output on a tiny file system that fills up
mkdir "$T/small"
mount -t tmpfs -o size=384k tmpfs "$T/small" || { fail record_enospc "cannot mount tmpfs"; exit 1; }
at_exit "umount '$T/small'"
st-record -o "$T/small/s.sttrace" -e block -d "$L" --chunk-size 64K -- \
	dd if="$L" of=/dev/null bs=4k count=100000 iflag=direct status=none 2>"$T/slog"
rc=$?
if [ $rc -eq 1 ] && grep -q "No space left on device" "$T/slog"; then
	pass record_enospc_stops
else
	fail record_enospc_stops "exit $rc, want 1 and a 'No space left' message: $(tail -2 "$T/slog")"
fi
n=$(events_of "$T/small/s.sttrace")
if [ "${n:-0}" -gt 1000 ]; then
	pass record_enospc_readable
else
	fail record_enospc_readable "the full file reads back ${n:-no} events"
fi
check record_enospc_recover st-format recover "$T/small/s.sttrace" -o "$T/sr.sttrace"
check record_enospc_recovered_verifies st-format verify "$T/sr.sttrace"

# ---- the output disk fails: its device shrinks under the file system, so
# the file's pages can no longer be written back (EIO). Writes into the page
# cache still succeed; the recorder's datasync each second notices. Or ext4
# notices first (a metadata write fails), aborts its journal and turns the
# mount read-only: the recorder's next write then fails with EROFS (once in
# a clean-clone CI rehearsal). Either error stops it the same way.
st_loopdev O 64
rec_ext4 record_eio "$O" "$T/failing"
rec_start "$T/failing/e.sttrace" "$T/elog" -e block -d "$L" -t 60 ||
	{ fail record_eio_stops "$(cat "$T/elog")"; exit 1; }
dd if="$L" of=/dev/null bs=4k count=200000 iflag=direct status=none &
dd_pid=$!
at_exit "kill $dd_pid"
sleep 1
truncate -s 1M "$(losetup -n -O BACK-FILE "$O")"
losetup -c "$O"
start=$(date +%s)
for ((i = 0; i < 300; i++)); do kill -0 "$REC_PID" 2>/dev/null || break; sleep 0.05; done
wait "$REC_PID"
rc=$?
secs=$(($(date +%s) - start))
kill "$dd_pid" 2>/dev/null
if [ $rc -eq 1 ] && [ $secs -lt 15 ] &&
	grep -Eq "(Input/output error|Read-only file system); recording stopped" "$T/elog"; then
	pass record_eio_stops
else
	fail record_eio_stops "exit $rc after $secs s (want 1 within 15 s, not the 60 s limit, stopped by EIO or EROFS): $(tail -2 "$T/elog" | tr '\n' ' ')"
fi
