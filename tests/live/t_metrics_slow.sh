#!/usr/bin/env bash
# The metrics endpoint and slow clients (issue 45 item 7): 40 connections on
# 127.0.0.1 that each send one header line every 4 s, and never finish their
# request (reconnecting when cut), must not keep a scrape out: 4 scrapes of
# /metrics, one every 2 s among them, each answer within 6 s. The clients
# are a bounded loop (40 s at most), stopped by the test itself.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"
. "$(dirname "$0")/common.sh"

NAME=live.metrics.slow_clients
live_require $NAME
command -v curl >/dev/null || { skip $NAME "curl not installed"; exit 0; }

st_tmpdir dir
st_loopdev dev 16
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

rec_start "$dir/run.sttrace" "$dir/record.log" -d "$dev" -e block ||
	{ fail $NAME "st-record did not start"; exit 1; }
st-analyze --follow --metrics "127.0.0.1:$port" "$dir/run.sttrace" >"$dir/follow.out" 2>"$dir/follow.err" &
follower=$!
at_exit "kill -KILL $follower"
for ((i = 0; i < 100; i++)); do
	curl -s -o /dev/null -m 2 "http://127.0.0.1:$port/metrics" && break
	sleep 0.1
done

python3 - "$port" "$dir/slow.count" <<'EOF' &
import socket, sys, time
port, count = int(sys.argv[1]), sys.argv[2]
end = time.monotonic() + 40
conns, made = [None] * 40, 0
def connect():
    global made
    s = socket.create_connection(("127.0.0.1", port), timeout=2)
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    made += 1
    return s
while time.monotonic() < end:
    for i in range(len(conns)):
        try:
            if conns[i] is None:
                conns[i] = connect()
            else:
                conns[i].sendall(b"X-Slow: 1\r\n")
        except OSError:
            conns[i] = None
    open(count, "w").write(str(made))
    time.sleep(4)
EOF
slow=$!
at_exit "kill -KILL $slow"
sleep 2

answered=0 times=""
for ((n = 0; n < 4; n++)); do
	t=$(curl -s -o "$dir/scrape.$n" -w '%{http_code} %{time_total}' -m 6 "http://127.0.0.1:$port/metrics")
	times+=" ${t:-none}"
	[ "${t%% *}" = 200 ] && grep -q '^sttrace_' "$dir/scrape.$n" && answered=$((answered + 1))
	sleep 2
done
kill "$slow" 2>/dev/null
wait "$slow" 2>/dev/null
if [ "$answered" = 4 ]; then
	pass $NAME
else
	fail $NAME "$answered of 4 scrapes answered within 6 s (code, seconds:$times) beside $(cat "$dir/slow.count" 2>/dev/null) slow connections"
fi
kill -INT "$follower" 2>/dev/null
rec_stop >/dev/null
