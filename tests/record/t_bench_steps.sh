#!/usr/bin/env bash
# bpf-steps, the tracer of scripts/bench/bpf_steps.sh: each step's programs
# run at both tracepoints st-record's `block` preset runs per request, for
# every request fio issues (psync 4k O_DIRECT reads on a loop device, one
# request each: fio's own count is the truth), and record what the step
# says: nothing before the ring buffer (steps 0 to 2), batches from step 3,
# a record per run with step 3r.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
rec_require_bpf bench_steps
STEPS=$ST_BUILD/bench/bpf-steps
[ -x "$STEPS" ] || { skip bench_steps "bpf-steps not built"; exit 0; }
rec_require_fio_stats bench_steps

IOS=2000
st_tmpdir T
st_loopdev L 64

for step in 0 2 3 7 3r; do
	"$STEPS" "$step" "$(rec_devno "$L")" 2>"$T/log" &
	PID=$!
	rec_wait_line "$PID" "$T/log" attached || { fail "bench_steps_${step}_start" "$(cat "$T/log")"; continue; }
	fio --name=steps --filename="$L" --rw=randread --bs=4k --direct=1 --ioengine=psync \
		--size=32M --number_ios=$IOS --output-format=json --output="$T/fio.json" >/dev/null 2>&1
	kill -INT "$PID"
	wait "$PID"
	fio_ios=$(jq '.jobs[0].read.total_ios' "$T/fio.json")
	# "N events, N lost, S s, C s CPU, R probe runs, NS ns of probe run time"
	read -r events lost runs ns < <(sed -n 's/^bpf-steps: \([0-9]*\) events, \([0-9]*\) lost, .* \([0-9]*\) probe runs, \([0-9]*\) ns of probe run time$/\1 \2 \3 \4/p' "$T/log")
	if [ "$fio_ios" = "$IOS" ] && [ "${runs:-0}" -ge $((2 * IOS)) ] && [ "${ns:-0}" -gt 0 ]; then
		pass "bench_steps_${step}_runs_at_issue_and_complete"
	else
		fail "bench_steps_${step}_runs_at_issue_and_complete" \
			"fio did $fio_ios of $IOS reads; $runs probe runs (want >= $((2 * IOS))), $ns ns: $(cat "$T/log")"
	fi
	case $step in
	0 | 2) check "bench_steps_${step}_records_nothing" test "${events:-x}" = 0 ;;
	3 | 7) check "bench_steps_${step}_records_batches" test "${events:-0}" -gt 0 -a "${lost:-x}" = 0 ;;
	3r) check bench_steps_3r_records_each_run test "${events:-0}" -ge $((2 * IOS)) -a "${lost:-x}" = 0 ;;
	esac
done

"$STEPS" 9 "$(rec_devno "$L")" >/dev/null 2>"$T/err"
rc=$?
check bench_steps_bad_step test "$rc" = 2 -a "$(head -1 "$T/err")" = "bpf-steps: step 9: no such step (0..7, 3r)"
"$STEPS" 3 loop >/dev/null 2>"$T/err"
rc=$?
check bench_steps_bad_device test "$rc" = 2 -a "$(head -1 "$T/err")" = "bpf-steps: device loop: not MAJOR:MINOR"
