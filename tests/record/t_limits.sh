#!/usr/bin/env bash
# -t, --max-size and SIGTERM end a recording: exit 0, a whole file (footer,
# verify passes), the size limit kept to within a chunk.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
rec_require_bpf record_limits

st_tmpdir T
st_loopdev L 128

start=$(date +%s%N)
st-record -o "$T/t.sttrace" -e block -d "$L" -t 1 2>"$T/tlog"
rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
if [ $rc -eq 0 ] && grep -q "duration reached" "$T/tlog" && [ $ms -ge 1000 ] && [ $ms -lt 15000 ]; then
	pass record_limit_duration
else
	fail record_limit_duration "exit $rc after $ms ms: $(tail -1 "$T/tlog")"
fi
check record_limit_duration_verifies st-format verify "$T/t.sttrace"

rec_start "$T/s.sttrace" "$T/slog" -e block -d "$L" --max-size 300K --chunk-size 64K ||
	{ fail record_limit_size "$(cat "$T/slog")"; exit 1; }
dd if="$L" of=/dev/null bs=4k count=200000 iflag=direct status=none &
dd_pid=$!
at_exit "kill $dd_pid"
wait "$REC_PID"
rc=$?
kill "$dd_pid" 2>/dev/null
size=$(stat -c %s "$T/s.sttrace")
# stops at the first check past the limit; the footer and a last chunk follow
if [ $rc -eq 0 ] && grep -q "size limit reached" "$T/slog" && [ "$size" -ge 300000 ] &&
	[ "$size" -lt 600000 ]; then
	pass record_limit_size
else
	fail record_limit_size "exit $rc, $size bytes: $(tail -1 "$T/slog")"
fi
check record_limit_size_verifies st-format verify "$T/s.sttrace"

# SIGTERM (what service managers send) ends it like SIGINT: everything
# drained, a whole file, exit 0
rec_start "$T/k.sttrace" "$T/klog" -e block -d "$L" || { fail record_sigterm "$(cat "$T/klog")"; exit 1; }
dd if="$L" of=/dev/null bs=4k count=100 iflag=direct status=none
kill -TERM "$REC_PID"
wait "$REC_PID"
rc=$?
n=$(rec_issued "$T/k.sttrace" ts | wc -l)
if [ $rc -eq 0 ] && grep -q "^st-record: terminated: " "$T/klog" && [ "$n" = 100 ]; then
	pass record_sigterm
else
	fail record_sigterm "exit $rc, $n requests (want 0, 100): $(tail -1 "$T/klog")"
fi
check record_sigterm_verifies st-format verify "$T/k.sttrace"
