#!/usr/bin/env bash
# st-record -- CMD: returns the command's exit status, traces the command's
# children, and names the short-lived processes it saw.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
rec_require_bpf record_command

st_tmpdir T
st_loopdev L 32
DEV=$(rec_devno "$L")

st-record -o "$T/c.sttrace" -e block -- \
	sh -c 'dd if="$1" of=/dev/null bs=4k count=30 iflag=direct status=none; exit 3' sh "$L" \
	2>"$T/log"
rc=$?
if [ $rc -eq 3 ]; then pass record_command_status; else fail record_command_status "exit $rc, want 3: $(cat "$T/log")"; fi

# dd is sh's child: traced through fork tracking. (Loading sh and dd may
# read from the root disk too: that is the command's I/O as well.)
got=$(rec_issued "$T/c.sttrace" dev | grep -cx "$DEV")
if [ "$got" -eq 30 ]; then
	pass record_command_children
else
	fail record_command_children "$got requests on $DEV, want 30: $(tr '\n' ' ' <"$T/log")"
fi
dd_pid=$(rec_issued "$T/c.sttrace" dev pid | awk -v d="$DEV" '$1 == d { print $2 }' | sort -u)
name=$(st-format info "$T/c.sttrace" | awk -v k="pid.$dd_pid" '$1 == k { print $3 }')
if [ "$name" = dd ]; then pass record_command_pid_names; else fail record_command_pid_names "pid.$dd_pid = '$name', want dd"; fi

# The clock offset sampled at the start and again at the end: over a
# recording of about a second, with no wall-clock step, they agree to within
# NTP's slewing (500 ppm, 0.5 ms a second; 50 ms allowed for a loaded host
# whose two clock_gettime calls may be interrupted between them).
read -r off0 off1 < <(st-format info --json "$T/c.sttrace" |
	jq -r '.metadata | "\(.["clock.realtime_offset_ns"]) \(.["clock.realtime_offset_end_ns"])"')
if [ "$off1" != null ] && [ $(( off1 > off0 ? off1 - off0 : off0 - off1 )) -lt 50000000 ]; then
	pass record_clock_offset_at_end
else
	fail record_clock_offset_at_end "offsets $off0 at the start, $off1 at the end"
fi

st-record -o "$T/k.sttrace" -e block -- sh -c 'kill -TERM $$' 2>/dev/null
rc=$?
if [ $rc -eq 143 ]; then pass record_command_signal_status; else fail record_command_signal_status "exit $rc, want 143"; fi

st-record -o "$T/n.sttrace" -e block -- "$T/no-such-command" 2>"$T/nlog"
rc=$?
if [ $rc -eq 127 ] && grep -q "no-such-command: No such file" "$T/nlog"; then
	pass record_command_not_found
else
	fail record_command_not_found "exit $rc, want 127: $(cat "$T/nlog")"
fi
