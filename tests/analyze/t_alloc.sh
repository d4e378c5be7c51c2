#!/usr/bin/env bash
# st-analyze allocates nothing per event (issue 25): its calls to malloc,
# calloc, realloc and the aligned allocators (count-allocs.so, preloaded)
# grow with its tables' doublings and the tasks and files a trace names, not
# with the trace's length. A trace and one ten times as long, each through
# the summary with one thread and with the default, --quantile 99.95, --csv,
# --heatmap lat, --by file (and --why on recordings): the longer one's count
# exceeds the shorter one's by at most one call per 1,000 more events.
# Measured: 49-122 more calls for synthetic traces of 20,000 and 200,000
# I/Os (1.5 M more events), 6-131 for recordings of 5,000 and 50,000 (294 k
# more), 961 for real 4 s and 40 s `-e all` recordings (11 M more); a
# malloc per completion adds 45,000-180,000. Synthetic traces (st-format
# synth) always; real `-e all` recordings of fio (stamped issues, compact
# completions, the why events) where BPF is there.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"
COUNT_ALLOCS=$ST_BUILD/tests/analyze/count-allocs.so
st_tmpdir T

events_of() { st-format info "$1" | sed -n 's/^events  *\([0-9]*\).*/\1/p'; }

# allocs FILE ARGS...: st-analyze's allocation calls for FILE
allocs() {
	local file=$1
	shift
	rm -f "$T/count"
	ST_COUNT_ALLOCS=$T/count LD_PRELOAD=$COUNT_ALLOCS st-analyze "$@" "$file" >/dev/null 2>"$T/err" ||
		{ echo "st-analyze $* failed: $(tail -1 "$T/err")" >&2; return 1; }
	cat "$T/count"
}

# compare NAME SMALL BIG OPTIONS...: each option set's counts for the two traces
compare() {
	local name=$1 small=$2 big=$3 args test a b bound
	shift 3
	bound=$((($(events_of "$big") - $(events_of "$small")) / 1000))
	for args in "$@"; do
		test=alloc_${name}_$(echo "${args:-summary}" | tr -d '-' | tr ' .' '__')
		# shellcheck disable=SC2086
		a=$(allocs "$small" $args) && b=$(allocs "$big" $args) || {
			fail "$test" "no count"
			continue
		}
		echo "$name ${args:-summary}: $a calls, $b for the longer trace (at most $((a + bound)))"
		if [ "$a" -gt 0 ] && [ $((b - a)) -le "$bound" ]; then
			pass "$test"
		else
			fail "$test" "$((b - a)) more calls for $bound thousand more events"
		fi
	done
}

if [ ! -x "$COUNT_ALLOCS" ]; then
	fail alloc_tool "$COUNT_ALLOCS not built"
	exit 1
fi
st-format synth -o "$T/small.sttrace" --ios 20000 --seed 1 >/dev/null 2>&1 &&
	st-format synth -o "$T/big.sttrace" --ios 200000 --seed 1 >/dev/null 2>&1 ||
	{ fail alloc_synth "st-format synth failed"; exit 1; }
OPTIONS=("--threads 1" "" "--quantile 99.95" "--csv" "--heatmap lat" "--by file")
compare synth "$T/small.sttrace" "$T/big.sttrace" "${OPTIONS[@]}"

why=$(bpf_unavailable)
if [ -n "$why" ]; then
	skip alloc_recorded "$why"
	exit 0
fi
rec_require_fio alloc_recorded
st_loopdev L 128
# 25,000 I/Os a job: all of them inside the 100 MiB the job covers once
for n in 2500 25000; do
	check "alloc_record_$n" st-record -o "$T/rec$n.sttrace" -e all -d "$L" -- \
		fio --name=t --filename="$L" --direct=1 --rw=randrw --rwmixread=70 --bs=4k --size=100M \
		--number_ios=$n --numjobs=2 --ioengine=psync --group_reporting --output="$T/fio$n.out"
done
compare recorded "$T/rec2500.sttrace" "$T/rec25000.sttrace" "${OPTIONS[@]}" --why
