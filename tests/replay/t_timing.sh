#!/usr/bin/env bash
# Original timing: a rate-limited fio run (1000 IOPS for 2 s) replayed on its
# recorded schedule lasts as long as the recording (first to last issue,
# within 5 %: the schedule is absolute, so only the last I/O's own slip adds,
# milliseconds on a loaded machine against a 100 ms bound); scale=0.5 halves
# it. The slip figures are printed; loose bounds are asserted (p99 under
# 50 ms, p50 under 10 us: see there). With --qd 1 at 1000 times the speed
# the late I/Os are put down to the queue depth. SIGINT stops a replay with
# a partial report; a terminal gets a progress line, a file does not.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"
. "$(dirname "$0")/common.sh"
rp_require replay_timing
rec_require_bpf replay_timing

st_tmpdir T
st_loopdev A 64
st_loopdev B 64

check replay_timing_record st-record -o "$T/run.sttrace" -e block -d "$A" -- \
	fio --name=r --filename="$A" --direct=1 --ioengine=psync --rw=randread --bs=4k \
	--rate_iops=1000 --number_ios=2000 --size=48M --randrepeat=1 --output="$T/fio.out"

# ratio_within NAME JSON WANT TOL: replayed span / recorded span within WANT +- TOL.
ratio_within() {
	local r
	r=$(rp_json "$2" '.replayed.span_s / .recorded.span_s')
	echo "$1: recorded span $(rp_json "$2" .recorded.span_s) s, replayed $(rp_json "$2" .replayed.span_s) s," \
		"slip us p50 $(rp_json "$2" .slip_us.p50) p99 $(rp_json "$2" .slip_us.p99) max $(rp_json "$2" .slip_us.max)"
	if awk -v r="$r" -v w="$3" -v t="$4" 'BEGIN { exit !(r >= w - t && r <= w + t) }'; then
		pass "$1"
	else
		fail "$1" "span ratio $r, want $3 +- $4"
	fi
}

st-replay "$T/run.sttrace" --target "$B" --report "$T/orig.json" >"$T/orig.out" 2>"$T/orig.err"
ratio_within replay_timing_original "$T/orig.json" 1 0.05
p99=$(rp_json "$T/orig.json" .slip_us.p99)
if awk -v p="$p99" 'BEGIN { exit !(p < 50000) }' && [ "$(rp_json "$T/orig.json" .completed)" -eq 2000 ]; then
	pass replay_timing_slip
else
	fail replay_timing_slip "slip p99 $p99 us, completed $(rp_json "$T/orig.json" .completed) of 2000"
fi
# The median slip: a sleeping thread is run about 75 us after its timer on
# this VM, loaded or not, so a fixed 50 us spin left a median slip of 19 to
# 61 us (10 runs at load 4); the margin that follows the wake-up delays left
# 0.2 to 0.5 us. 10 us is between the two with room either side. A burst of
# other work can hold a whole 2 s replay back (31.7 us seen once in CI), so
# the best of up to three replays counts: the fixed spin is late in every one.
p50s=$(rp_json "$T/orig.json" .slip_us.p50)
for again in 2 3; do
	awk -v p="${p50s##* }" 'BEGIN { exit !(p >= 10) }' || break
	st-replay "$T/run.sttrace" --target "$B" --report "$T/again.json" >/dev/null 2>&1
	p50s="$p50s $(rp_json "$T/again.json" .slip_us.p50)"
done
if awk -v p="${p50s##* }" 'BEGIN { exit !(p < 10) }'; then
	pass replay_timing_slip_p50
else
	fail replay_timing_slip_p50 "slip p50 $p50s us in three replays, want < 10 us in one"
fi
grep -q '^schedule slip us: p50 ' "$T/orig.out" && pass replay_timing_slip_text ||
	fail replay_timing_slip_text "no schedule slip line in the report"
# Not a terminal: no progress line.
if grep -q 'I/Os, ' "$T/orig.err"; then fail replay_timing_no_progress "$(cat "$T/orig.err")"; else pass replay_timing_no_progress; fi

st-replay "$T/run.sttrace" --target "$B" --timing scale=0.5 --report "$T/half.json" >/dev/null
ratio_within replay_timing_scale "$T/half.json" 0.5 0.025

# Compressed 1000-fold (1M IOPS planned, 2000 I/Os in 2 ms) with one I/O in
# flight at a time: at 5 us or more an I/O (a loop device's fastest here is
# about 10), I/O k is late by more than 1 ms from k = 250 on, so most are,
# and the report puts (nearly) all of them down to the queue depth: due
# while --qd I/Os were in flight. "Nearly": an I/O can also turn late in the
# moment between a completion and the next submission. (At 100-fold the
# device kept up with one I/O at a time once: none late.)
st-replay "$T/run.sttrace" --target "$B" --timing scale=0.001 --qd 1 --report "$T/qd1.json" >/dev/null
read -r late held <<<"$(rp_json "$T/qd1.json" '[.slip_us.late_1ms, .slip_us.late_1ms_qd_full] | join(" ")')"
if [ "${late:-0}" -ge 1000 ] && [ "$((held * 10))" -ge "$((late * 9))" ]; then
	pass replay_timing_late_qd
else
	fail replay_timing_late_qd "late by 1 ms: ${late:-none} of 2000, due with the queue full: ${held:-none}; want >= 1000 and >= 90 %"
fi

# SIGINT half-way through a 10 s replay: exit 130, a partial report, nothing in flight left.
st-replay "$T/run.sttrace" --target "$B" --timing scale=5 --report "$T/int.json" >"$T/int.out" 2>&1 &
pid=$!
at_exit "kill -KILL $pid"
sleep 2
kill -INT "$pid"
wait "$pid"
rc=$?
got=$(rp_json "$T/int.json" '[.interrupted, .issued, .completed + .failed] | join(" ")')
read -r interrupted issued done <<<"$got"
if [ "$rc" -eq 130 ] && [ "$interrupted" = true ] && [ "$issued" -gt 0 ] && [ "$issued" -lt 2000 ] &&
	[ "$done" -eq "$issued" ] && grep -q '^interrupted: partial report' "$T/int.out"; then
	pass replay_timing_sigint
else
	fail replay_timing_sigint "exit $rc, interrupted issued done: $got"
fi

# On a terminal: a progress line each second.
script -qec "st-replay '$T/run.sttrace' --target '$B'" /dev/null >"$T/tty.out"
if grep -aq 'st-replay: [0-9]*/2000 I/Os, [0-9]* IOPS' "$T/tty.out"; then
	pass replay_timing_progress
else
	fail replay_timing_progress "no progress line on a terminal: $(head -c 300 "$T/tty.out")"
fi
