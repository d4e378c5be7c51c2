#!/usr/bin/env bash
# st-analyze --follow and --metrics on bad input: a port in use, bad
# addresses, options that need each other: exit 2; a file that is not a
# trace: exit 1; each with one line naming the input. A follower started before its file
# exists waits, saying so, and reads it once it is there (copied in place
# here: no recorder needed). Scrapers that disconnect mid-response, by the
# hundred, leave the follower serving; SIGINT ends it with the report.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"

st_tmpdir T
st-format synth -o "$T/a.st" --ios 3000 --devices 16 --seed 3 >/dev/null ||
	{ fail live.errors.synth "st-format synth failed"; exit 1; }

# expect_error NAME PATTERN ARGS...: st-analyze ARGS exits $RC (default 2) after one stderr line matching PATTERN.
expect_error() {
	local name=$1 pattern=$2 rc lines
	shift 2
	timeout 10 st-analyze "$@" >"$T/out" 2>"$T/err"
	rc=$?
	lines=$(wc -l <"$T/err")
	if [ $rc -eq "${RC:-2}" ] && [ "$lines" -eq 1 ] && grep -q -- "$pattern" "$T/err"; then
		pass "$name"
	else
		fail "$name" "exit $rc, $lines lines: $(head -2 "$T/err" | tr '\n' ' ')"
	fi
}

python3 -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
print(s.getsockname()[1], flush=True)
time.sleep(60)' >"$T/busy.port" &
busy=$!
at_exit "kill $busy"
live_wait_line "$T/busy.port" "[0-9]" 5
port=$(cat "$T/busy.port")
expect_error live.errors.port_in_use "127.0.0.1:$port: cannot listen: Address already in use" \
	--follow --metrics "127.0.0.1:$port" "$T/a.st"
expect_error live.errors.addr_word "nonsense: not PORT" --follow --metrics nonsense "$T/a.st"
expect_error live.errors.addr_port0 "127.0.0.1:0: not PORT" --follow --metrics 127.0.0.1:0 "$T/a.st"
expect_error live.errors.addr_port_big "not PORT" --follow --metrics 127.0.0.1:70000 "$T/a.st"
expect_error live.errors.addr_bad_ip "999.0.0.1: not a numeric address" --follow --metrics 999.0.0.1:9100 "$T/a.st"
expect_error live.errors.addr_name "localhost: not a numeric address" --follow --metrics localhost:9100 "$T/a.st"
expect_error live.errors.addr_not_mine "10.255.255.1:9100: cannot listen" --follow --metrics 10.255.255.1:9100 "$T/a.st"
expect_error live.errors.metrics_alone "--metrics serves what --follow reads" --metrics 9100 "$T/a.st"
expect_error live.errors.two_files "--follow reads one FILE" --follow "$T/a.st" "$T/a.st"
head -c 5000 /dev/urandom >"$T/junk.st"
RC=1 expect_error live.errors.not_a_trace "$T/junk.st: not a .sttrace file" --follow "$T/junk.st"

# --- a follower started before its file exists; the file arrives complete
st-analyze --follow "$T/later.st" >"$T/later.out" 2>"$T/later.err" &
follower=$!
at_exit "kill -KILL $follower"
if live_wait_line "$T/later.err" "waiting for $T/later.st to appear" 5 && kill -0 $follower; then
	cp "$T/a.st" "$T/later.st"
	for ((i = 0; i < 100; i++)); do kill -0 $follower 2>/dev/null || break; sleep 0.1; done
	wait $follower
	rc=$?
	st-analyze "$T/a.st" >"$T/a.offline" 2>&1
	live_report "$T/later.out" >"$T/later.final"
	if [ $rc -eq 0 ] && cmp -s "$T/later.final" "$T/a.offline"; then
		pass live.errors.wait_for_file
	else
		fail live.errors.wait_for_file "exit $rc: $(diff "$T/later.final" "$T/a.offline" | head -3 | tr '\n' ' ')"
	fi
else
	fail live.errors.wait_for_file "no waiting message: $(head -2 "$T/later.err")"
fi

# --- scrapers that vanish mid-response: a file cut before its trailer keeps
# the follower waiting for more, so it serves until SIGINT
size=$(stat -c %s "$T/a.st")
head -c $((size - 100)) "$T/a.st" >"$T/cut.st"
mport=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
st-analyze --follow --metrics "127.0.0.1:$mport" "$T/cut.st" >"$T/cut.out" 2>"$T/cut.err" &
follower=$!
at_exit "kill -KILL $follower"
# The file stopped growing: its events are handed out after the hold (1.5 s).
for ((i = 0; i < 100; i++)); do
	full=$(curl -s "http://127.0.0.1:$mport/metrics" | wc -c)
	[ "$full" -gt 200000 ] && break
	sleep 0.1
done
python3 - "$mport" <<'EOF'
import socket, struct, sys
port = int(sys.argv[1])
for i in range(300):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
    if i % 3:
        s.recv(1000 * (i % 50 + 1))
    # reset, not a clean close: the server's next send fails
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()
EOF
after=$(curl -s "http://127.0.0.1:$mport/metrics" | wc -c)
if [ "$full" -gt 200000 ] && [ "$after" -gt 200000 ] && kill -0 $follower; then
	pass live.errors.disconnects
else
	fail live.errors.disconnects "page of $full bytes, then $after bytes: $(head -2 "$T/cut.err")"
fi
kill -INT $follower
for ((i = 0; i < 50; i++)); do kill -0 $follower 2>/dev/null || break; sleep 0.1; done
wait $follower
rc=$?
if [ $rc -eq 0 ] && grep -q "^--- end of the recording (interrupted)" "$T/cut.out" &&
	grep -q "(recovered: footer missing)" "$T/cut.out"; then
	pass live.errors.sigint
else
	fail live.errors.sigint "exit $rc: $(tail -2 "$T/cut.err")"
fi
