#!/usr/bin/env bash
# bpf_steps.sh - where the `block` preset's BPF time goes: the run time per
# fio I/O of its two programs built up part by part (bpf_steps.bpf.c, steps
# 0 to 7 and the variant 3r, loaded by bpf-steps), and of st-record -e block
# itself at ring buffer sizes RINGS, at the same tracepoints, with the
# kernel's BPF statistics on (bpf-stats-on).
#
# fio 4k random reads, io_uring, iodepth 32, O_DIRECT, on a loop device over
# a file in /dev/shm, SECONDS per line. The machine is shared and its speed
# drifts: every round runs every configuration once, in turn, odd rounds in
# reverse order, and the table shows the median over the rounds of each
# configuration's probe run time per fio I/O (what the programs cost,
# whatever the IOPS), and the step from the row above. The probes also run
# for other disks' requests, which every step but 0 drops at once: runs per
# I/O above 2 say how many, and BPF ns/IO leaves them out at the cost of an
# empty run in the same round (a dropped run costs a little more: a few
# loads).
#
# Usage: scripts/bench/bpf_steps.sh   (as root, after `make`)
#   BENCH_ROUNDS=5  BENCH_SECONDS=4  BENCH_RINGS="16M 4M 1M" (st-record's --ringbuf-size)
#   BENCH_OUT_DIR=/var/tmp (st-record's recordings)
set -u
cd "$(dirname "$0")/../.."
BUILD=${ST_BUILD:-$PWD/build}
ROUNDS=${BENCH_ROUNDS:-5}
SECONDS_PER_RUN=${BENCH_SECONDS:-4}
OUT_DIR=${BENCH_OUT_DIR:-/var/tmp}
RINGS=(${BENCH_RINGS:-16M 4M 1M})
STEPS=(0 1 2 3 4 5 6 7 3r)
LABELS=("0 empty programs" "1 + disk filter, clock" "2 + record header in the stage" "3 + batch into the ring buffer"
	"4 + request fields, bio chain" "5 + bio stamps" "6 + other checks (own task...)"
	"7 + page-cache check (rq_inode)" "3r = 1 + a reservation per record")
FROM=(- 0 1 2 3 4 5 6 1)	# the row each row's step is measured from
for size in "${RINGS[@]}"; do
	LABELS+=("st-record -e block --ringbuf-size $size")
	FROM+=(7)
done

die() { echo "bpf_steps.sh: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "run as root (BPF and loop devices)"
[ -x "$BUILD/bench/bpf-steps" ] || die "$BUILD/bench/bpf-steps not built (make)"
[ -x "$BUILD/st-record" ] || die "$BUILD/st-record not built (make)"
command -v fio >/dev/null || die "fio not installed (make deps)"
command -v jq >/dev/null || die "jq not installed (make deps)"

. tests/lib.sh	# st_loopdev and the EXIT trap that releases what it makes
. tests/record/common.sh	# rec_bpf_stats, rec_devno
TMPDIR=$OUT_DIR st_tmpdir WORK || die "cannot create a directory in $OUT_DIR"
st_loopdev LOOP 1024 || die "losetup failed"
DEV=$(rec_devno "$LOOP")
TRACER=""
at_exit '[ -n "$TRACER" ] && kill -KILL "$TRACER"'
rec_bpf_stats || die "the kernel refused BPF run-time statistics"

# run INDEX: one fio run under configuration INDEX (a step, or st-record with RINGS[INDEX - steps]);
# prints "fio_ios probe_runs probe_ns"
run() {
	local i=$1 runs ns
	: >"$WORK/log"
	if ((i < ${#STEPS[@]})); then
		"$BUILD/bench/bpf-steps" "${STEPS[i]}" "$DEV" 2>"$WORK/log" &
	else
		"$BUILD/st-record" -o "$WORK/r.sttrace" -e block -d "$LOOP" \
			--ringbuf-size "${RINGS[i - ${#STEPS[@]}]}" 2>"$WORK/log" &
	fi
	TRACER=$!
	for ((t = 0; t < 1200; t++)); do
		grep -q "attached\|recording .* probes" "$WORK/log" && break
		kill -0 "$TRACER" 2>/dev/null || die "the tracer did not start: $(cat "$WORK/log")"
		sleep 0.05
	done
	fio --name=steps --filename="$LOOP" --direct=1 --ioengine=io_uring --iodepth=32 --rw=randread \
		--bs=4k --time_based --runtime="$SECONDS_PER_RUN" --randrepeat=0 \
		--output-format=json --output="$WORK/fio.json" >/dev/null || die "fio failed"
	kill -INT "$TRACER"
	wait "$TRACER"
	TRACER=""
	if ((i < ${#STEPS[@]})); then
		read -r runs ns < <(sed -n 's/.* \([0-9]*\) probe runs, \([0-9]*\) ns of probe run time$/\1 \2/p' "$WORK/log")
	else
		read -r runs ns < <("$BUILD/st-format" info "$WORK/r.sttrace" |
			awk '$1 ~ /^probe\./ { split($3, kv, /[=;]/); r += kv[2]; n += kv[4] } END { printf "%.0f %.0f\n", r, n }')
		rm -f "$WORK/r.sttrace"
	fi
	echo "$(jq '.jobs[0].read.total_ios' "$WORK/fio.json") ${runs:-0} ${ns:-0}"
}

echo "bpf_steps.sh: fio randread 4k io_uring QD32 direct on $LOOP ($DEV, 1 GiB in /dev/shm), ${SECONDS_PER_RUN} s" \
	"per run, $ROUNDS rounds, BPF statistics on; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
LAST=$((${#STEPS[@]} + ${#RINGS[@]} - 1))
for ((r = 0; r < ROUNDS; r++)); do
	for ((k = 0; k <= LAST; k++)); do
		i=$((r % 2 ? LAST - k : k))
		echo "$r $i $(run "$i")" >>"$WORK/runs"
	done
done
printf '%-40s %9s %9s %9s %9s\n' configuration runs/IO "ns/run" "BPF ns/IO" step
awk -v labels="$(printf '%s\n' "${LABELS[@]}")" -v from="${FROM[*]}" -v last="$LAST" '
	function median(list,   n, v, j, k, t) {
		n = split(list, v, " ")
		for (j = 2; j <= n; j++)
			for (k = j; k > 1 && v[k - 1] > v[k]; k--) { t = v[k]; v[k] = v[k - 1]; v[k - 1] = t }
		return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
	}
	BEGIN { split(labels, label, "\n"); split(from, base, " ") }
	# "ROUND CONFIG FIO_IOS RUNS NS"; first pass: what an empty run cost in each round
	FNR == NR { if ($2 == 0) empty[$1] = $5 / $4; next }
	{ per_io[$2] = per_io[$2] " " ($5 - ($4 - 2 * $3) * empty[$1]) / $3; per_run[$2] = per_run[$2] " " $5 / $4
	  runs[$2] = runs[$2] " " $4 / $3 }
	END {
		for (i = 0; i <= last; i++) {
			m[i] = median(per_io[i])
			printf "%-40s %9.2f %9.0f %9.0f %9s\n", label[i + 1], median(runs[i]), median(per_run[i]),
				m[i], i ? sprintf("%+.0f", m[i] - m[base[i + 1]]) : ""
		}
	}' "$WORK/runs" "$WORK/runs"
echo "(medians over the rounds; BPF ns/IO: the programs' run time per fio I/O, less the runs past 2 per"
echo " I/O (other disks' requests, dropped at once) at the round's empty-program ns/run; step: from"
echo " the row above; 3r's from step 1, st-record's from step 7)"
