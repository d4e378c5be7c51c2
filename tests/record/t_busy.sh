#!/usr/bin/env bash
# Attaching and detaching the 50-odd probes of `-e all` takes the kernel
# milliseconds each, while the probes attached so far already fire: on a
# workload running flat out, st-record must drain the ring buffer meanwhile
# and lose nothing, at start and at stop.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
rec_require_bpf record_busy

st_tmpdir T
st_loopdev L 256

fio --name=busy --filename="$L" --direct=1 --ioengine=io_uring --iodepth=32 --rw=randread \
	--bs=4k --time_based --runtime=8 --randrepeat=0 --output=/dev/null &
fio_pid=$!
at_exit "kill $fio_pid"
sleep 1
if st-record -o "$T/b.sttrace" -e all -d "$L" -t 2 2>"$T/log"; then
	pass record_busy_runs
else
	fail record_busy_runs "$(cat "$T/log")"
fi
wait "$fio_pid"
n=$(rec_count "$T/b.sttrace" block_rq_complete)
if [ "${n:-0}" -gt 10000 ]; then
	pass record_busy_recorded
else
	fail record_busy_recorded "only ${n:-no} completions recorded in 2 s of fio"
fi
rec_check_no_loss record_busy_no_loss "$T/b.sttrace"
