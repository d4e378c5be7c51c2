#!/usr/bin/env bash
# bare-ring --empty, the floor row of scripts/bench/overhead.sh: programs that
# do nothing, at the two tracepoints st-record's `block` preset runs per
# request. It must record nothing, run at both tracepoints for every request
# fio issues (psync 4k O_DIRECT reads on a loop device, one request each:
# fio's own count is the truth; other users' I/O only adds runs), and report
# the run time the kernel's BPF statistics measured.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
rec_require_bpf bench_empty
BARE=$ST_BUILD/bench/bare-ring
[ -x "$BARE" ] || { skip bench_empty "bare-ring not built"; exit 0; }
rec_require_fio_stats bench_empty

IOS=3000
st_tmpdir T
st_loopdev L 64

"$BARE" --empty 2>"$T/log" &
PID=$!
at_exit "kill -KILL $PID"
rec_wait_line "$PID" "$T/log" attached || { fail bench_empty_start "$(cat "$T/log")"; exit 1; }
fio --name=empty --filename="$L" --rw=randread --bs=4k --direct=1 --ioengine=psync \
	--size=32M --number_ios=$IOS --output-format=json --output="$T/fio.json" >/dev/null 2>&1
kill -INT "$PID"
wait "$PID"
fio_ios=$(jq '.jobs[0].read.total_ios' "$T/fio.json")
# "N events, N lost, S s, C s CPU, R probe runs, NS ns of probe run time"
read -r events runs ns < <(sed -n 's/^bare-ring: \([0-9]*\) events, .* \([0-9]*\) probe runs, \([0-9]*\) ns of probe run time$/\1 \2 \3/p' "$T/log")

check bench_empty_records_nothing test "${events:-x}" = 0
if [ "$fio_ios" = "$IOS" ] && [ "${runs:-0}" -ge $((2 * IOS)) ] && [ "${ns:-0}" -gt 0 ]; then
	pass bench_empty_runs_at_issue_and_complete
else
	fail bench_empty_runs_at_issue_and_complete \
		"fio did $fio_ios of $IOS reads; $runs probe runs (want >= $((2 * IOS))), $ns ns: $(cat "$T/log")"
fi

"$BARE" --bogus >/dev/null 2>"$T/err"
rc=$?
check bench_empty_bad_argument test "$rc" = 2 -a "$(head -1 "$T/err")" = "bare-ring: unknown argument --bogus"
