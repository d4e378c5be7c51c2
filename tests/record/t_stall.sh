#!/usr/bin/env bash
# An output that stops taking bytes (issue 45 item 3, issue 44 item 3).
#
# A reader that reads for a moment, then stops reading without closing its
# end (as `| sleep 100` does, or a follower that is busy), while direct reads
# run on a loop device:
# - SIGTERM, SIGINT and -t end st-record within 2 s (a pipe, and a FIFO
#   given with -o FIFO --force), exit status 1 (the end of the file did not
#   go out), the summary saying how many bytes were not written; what the
#   reader got, read after, is a trace up to its last complete chunk
#   (st-format recover, then verify), with the events of the I/O;
# - a reader that stalls 4 s and then reads again gets a whole file: the
#   probes lost nothing (the BPF ring was drained all along), the events the
#   output did not take in time were dropped in whole chunks and counted
#   under their own reason, the same count as st-record's summary.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
rec_require_bpf record_stall

st_tmpdir T
st_loopdev L 64

# reader IN OUT: copy IN (a FIFO, or - for standard input) into OUT until
# the file $T/stall exists, then stop reading, the input left open, until
# the file $T/go exists; then copy the rest up to its end. Its pid in $T/reader.pid,
# once a FIFO is open (without waiting for the writer: read, a FIFO without
# a writer yet says end of file, taken as the end only once data came).
cat >"$T/reader.py" <<'EOF'
import os, sys, time
src, out, stall, go, pidfile = sys.argv[1:6]
fd = 0 if src == "-" else os.open(src, os.O_RDONLY | os.O_NONBLOCK)
open(pidfile, "w").write(str(os.getpid()))
seen = False
def chunk():  # bytes, b"" at the end, None: nothing yet
    global seen
    try:
        b = os.read(fd, 1 << 16)
    except BlockingIOError:
        b = None
    if not b and not seen:
        b = None
    if b is None:
        time.sleep(0.01)
    else:
        seen = True
    return b
with open(out, "wb") as f:
    while not os.path.exists(stall):
        b = chunk()
        if b == b"":
            sys.exit(0)
        f.write(b or b"")
    while not os.path.exists(go):
        time.sleep(0.05)
    while True:
        b = chunk()
        if b == b"":
            break
        f.write(b or b"")
EOF
reader() {
	python3 "$T/reader.py" "$@" "$T/stall" "$T/go" "$T/reader.pid"
}

# load SECONDS: direct random reads on the loop device
load() {
	fio --name=stall --filename="$L" --rw=randread --bs=4k --direct=1 --ioengine=psync \
		--time_based --runtime="$1" --output=/dev/null
}

# wait_exit PID SECONDS: wait until PID is gone, at most SECONDS; prints the
# time it took (s), returns 1 when it had to SIGKILL it.
wait_exit() {
	local t0 i
	t0=$(date +%s.%N)
	for ((i = 0; i < $2 * 20; i++)); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.05
	done
	awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'
	kill -0 "$1" 2>/dev/null || return 0
	kill -KILL "$1"
	return 1
}

# reader_done: let the reader read the rest, and wait for it to end
reader_done() {
	local i
	touch "$T/go"
	for ((i = 0; i < 200; i++)); do
		kill -0 "$(cat "$T/reader.pid")" 2>/dev/null || return 0
		sleep 0.05
	done
	kill -KILL "$(cat "$T/reader.pid")"
}

# check_captured NAME FILE: what the reader got recovers into a trace that
# verifies and holds block events
check_captured() {
	local events
	rm -f "$T/rec.sttrace"
	if st-format recover "$2" -o "$T/rec.sttrace" >"$T/recover.log" 2>&1 &&
	   st-format verify "$T/rec.sttrace" >/dev/null 2>&1; then
		events=$(rec_count "$T/rec.sttrace" block_rq_issue_stamped)
		if [ "$events" -gt 0 ]; then
			pass "$1"
		else
			fail "$1" "no block_rq_issue_stamped event in what the reader got"
		fi
	else
		fail "$1" "$(wc -c <"$2") bytes captured, not a trace: $(tail -1 "$T/recover.log")"
	fi
}

# stop_case NAME HOW OUTPUT [ST-RECORD OPTION...]: st-record -e block -d LOOP
# into OUTPUT (- for a pipe to the reader, or a FIFO the reader opened),
# I/O runs 4 s, the reader stalls after 1.5 s of it, then HOW: TERM or INT
# (a signal) or "duration" (-t 6 from the start). Checks the time to the end, the exit
# status and the summary, then what the reader got.
stop_case() {
	local name=$1 how=$2 out=$3 took rc=0 limit=2
	shift 3
	rm -f "$T/stall" "$T/go" "$T/reader.pid" "$T/rc" "$T/got" "$T/log"
	if [ "$out" = - ]; then
		{
			st-record -o - -e block -d "$L" "$@" 2>"$T/log" &
			echo $! >"$T/rec.pid"
			wait $!
			echo $? >"$T/rc"
		} | reader - "$T/got" &
	else
		reader "$out" "$T/got" &
		for ((i = 0; i < 100; i++)); do [ -s "$T/reader.pid" ] && break; sleep 0.05; done
		{
			st-record -o "$out" --force -e block -d "$L" "$@" 2>"$T/log" &
			echo $! >"$T/rec.pid"
			wait $!
			echo $? >"$T/rc"
		} &
	fi
	for ((i = 0; i < 300; i++)); do
		[ -s "$T/rec.pid" ] && grep -q "recording .* probes" "$T/log" 2>/dev/null && break
		sleep 0.05
	done
	REC=$(cat "$T/rec.pid")
	at_exit "kill -KILL $REC 2>/dev/null"
	load 4 &
	sleep 1.5
	touch "$T/stall"
	wait $!
	case $how in
	TERM | INT) kill "-$how" "$REC" ;;
	duration) limit=4 ;;	# -t 6 from the start: about 1 s after the load's 4 s and the start
	esac
	if ! took=$(wait_exit "$REC" 10); then
		fail "$name" "st-record still ran 10 s after $how (SIGKILLed): $(tail -1 "$T/log")"
		reader_done
		wait
		return
	fi
	wait_file=0
	for ((i = 0; i < 100; i++)); do [ -s "$T/rc" ] && break; sleep 0.05; done
	rc=$(cat "$T/rc" 2>/dev/null)
	if awk -v t="$took" -v l="$limit" 'BEGIN { exit !(t <= l) }' && [ "$rc" = 1 ] &&
	   grep -q "bytes of the file not written" "$T/log"; then
		pass "$name"
	else
		fail "$name" "ended ${took} s after $how (limit $limit), exit ${rc:-?} (want 1): $(tail -1 "$T/log")"
	fi
	reader_done
	wait
	check_captured "${name}_readable" "$T/got"
}

stop_case record_stall_pipe_sigterm TERM - -t 120
stop_case record_stall_pipe_sigint INT - -t 120
stop_case record_stall_pipe_duration duration - -t 6
mkfifo "$T/fifo"
stop_case record_stall_fifo_sigterm TERM "$T/fifo" -t 120

# A reader that stalls 4 s, then reads on: the smallest --stream-buffer
# (1M) fills with -e all beside fio; the file is whole and counts the
# dropped chunks' events under their reason, the probes lost none.
rm -f "$T/go" "$T/rc" "$T/got"
{
	st-record -o - -e all -t 8 --stream-buffer 1M --chunk-size 64K 2>"$T/log"
	echo $? >"$T/rc"
} | python3 -c '
import os, sys, time
with open(sys.argv[1], "wb") as f:
    time.sleep(4)
    while True:
        b = os.read(0, 1 << 16)
        if not b:
            break
        f.write(b)' "$T/got" &
pipeline=$!
for ((i = 0; i < 300; i++)); do
	grep -q "recording .* probes" "$T/log" 2>/dev/null && break
	sleep 0.05
done
load 6
wait "$pipeline"
summary=$(sed -n 's/.*: \([0-9]*\) events dropped in .*/\1/p' "$T/log")
st-format info "$T/got" >"$T/info" 2>&1
dropped=$(sed -n 's/.*dropped, output too slow: \([0-9]*\).*/\1/p' "$T/info")
cpus=$(grep '^lost events' "$T/info" | grep -c 'cpu [0-9]*:')
if [ "$(cat "$T/rc")" = 0 ] && st-format verify "$T/got" >/dev/null 2>&1 &&
   [ "${dropped:-0}" -gt 0 ] && [ "$dropped" = "$summary" ] && [ "$cpus" = 0 ] &&
   [ "$(rec_lost "$T/got")" = "$dropped" ]; then
	pass record_stall_dropped_counted
else
	fail record_stall_dropped_counted "exit $(cat "$T/rc"), $(grep '^lost events' "$T/info"); summary: $(grep -E 'lost|dropped' "$T/log" | tr '\n' ' ')"
fi
