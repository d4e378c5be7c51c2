#!/usr/bin/env bash
# stortrace's example config (its keys and values as its guide gives them,
# event_type set to a preset) drives both programs unchanged. One recording
# of 200 direct reads by dd, a process st-record did not start, on a loop
# device; then each key is checked for doing what its mapping says
# (record/README.md and analyze/README.md, "Config files"), the analyzer's
# keys by changing one value at a time.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
rec_require_bpf record_stortrace

READS=200
st_tmpdir T
st_loopdev L 32
DEV=$(rec_devno "$L")

# stortrace's example config; `"event_type": "blk"` there names stortrace's own module
cat >"$T/stortrace.json" <<'JSON'
{
    "name":"blk_trace_demo",
    "event_type":"block",
    "trace_level":"info",
    "logger_io_uring_depth":32,
    "select_target":{
        "pid":-1,
        "common":"",
        "files":[]
    },
    "filter":{
        "enable":false,
        "quantile":99.95,
        "filter_accuracy":30,
        "stage":"block_io"
    },
    "statistical_params":{
        "pmc_inv":1000,
        "heatmap_row":20
    },
    "show_bpf_internal":false
}
JSON

# name: the output file, in the working directory
(cd "$T" && exec st-record --config stortrace.json -d "$L") 2>"$T/log" &
REC_PID=$!
at_exit "kill -KILL $REC_PID"
rec_wait_line "$REC_PID" "$T/log" "recording .* probes" ||
	{ fail record_stortrace_start "$(cat "$T/log")"; exit 1; }
dd if="$L" of=/dev/null bs=4k count=$READS iflag=direct status=none
sleep 1.2
check record_stortrace_stop rec_stop
F=$T/blk_trace_demo.sttrace
check record_stortrace_name sh -c 'st-format verify "$1" >/dev/null' sh "$F"

opts=$(st-format info --json "$F" | jq -r '.metadata.options')
reads=$(rec_issued "$F" dev | grep -cx "$DEV")
others=$(st-format info --json "$F" | jq -r '.events_per_type | keys[]' | grep -v '^block_\|^sched_')
# event_type: the block preset, nothing else; select_target.pid -1 and common "":
# every process, so dd's reads, which st-record did not start, are all there
if [ "$reads" = $READS ] && [ -z "$others" ]; then pass record_stortrace_event_type; else
	fail record_stortrace_event_type "$reads of $READS reads; other types: $others"; fi
if [[ $opts == *'"pid":0'* && $reads == "$READS" ]]; then pass record_stortrace_pid_all; else
	fail record_stortrace_pid_all "options $opts"; fi
if [[ $opts == *'"comm":null'* && $reads == "$READS" ]]; then pass record_stortrace_common_none; else
	fail record_stortrace_common_none "options $opts"; fi
if [[ $opts == *'"files":[]'* ]] && ! st-format info "$F" | grep -q '^  inode\.'; then
	pass record_stortrace_files_none
else
	fail record_stortrace_files_none "options $opts"
fi
if [[ $opts == *'"qd":32'* ]]; then pass record_stortrace_io_uring_depth; else
	fail record_stortrace_io_uring_depth "options $opts"; fi
for key in trace_level show_bpf_internal; do
	if grep -qx "st-record: stortrace.json: $key has no st-record equivalent; ignored" "$T/log"; then
		pass "record_stortrace_$key"
	else
		fail "record_stortrace_$key" "$(cat "$T/log")"
	fi
done

# analyze_with KEY VALUE: the config with one value changed (jq path KEY)
analyze_with() {
	jq "$1 = $2" "$T/stortrace.json" >"$T/changed.json"
	shift 2
	st-analyze "$F" --config "$T/changed.json" "$@" 2>"$T/alog"
}
st-analyze "$F" --config "$T/stortrace.json" >"$T/a.out" 2>"$T/alog"
check analyze_stortrace_runs test $? -eq 0
# statistical_params.pmc_inv: a time series of 1000 ms intervals (500: twice as many)
step=$(awk 'NR == 4 { a = $1 } NR == 5 { printf "%.3f", $1 - a }' "$T/a.out")
step2=$(analyze_with .statistical_params.pmc_inv 500 | awk 'NR == 4 { a = $1 } NR == 5 { printf "%.3f", $1 - a }')
if [ "$step" = 1.000 ] && [ "$step2" = 0.500 ]; then pass analyze_stortrace_pmc_inv; else
	fail analyze_stortrace_pmc_inv "interval $step s (want 1.000), $step2 s with 500 (want 0.500)"; fi
# statistical_params.heatmap_row: a heatmap of that many intervals
rows=$(st-analyze "$F" --config "$T/stortrace.json" --heatmap lat 2>/dev/null | grep -c '^[0-9]*\.[0-9]* ')
rows2=$(analyze_with .statistical_params.heatmap_row 7 --heatmap lat | grep -c '^[0-9]*\.[0-9]* ')
if [ "$rows" = 20 ] && [ "$rows2" = 7 ]; then pass analyze_stortrace_heatmap_row; else
	fail analyze_stortrace_heatmap_row "$rows rows (want 20), $rows2 with 7"; fi
# filter.enable: false reports statistics; true lists the I/Os at or above
# filter.quantile of filter.stage (block_io: Q2C)
if ! grep -q ' shown, slowest first' "$T/a.out" &&
	analyze_with .filter.enable true | grep -q '^Q2C p99.95: .* I/Os at or above it'; then
	pass analyze_stortrace_filter_enable
else
	fail analyze_stortrace_filter_enable "$(head -3 "$T/a.out" | tr '\n' ' ')"
fi
jq '.filter.enable = true | .filter.quantile = 50' "$T/stortrace.json" >"$T/q50.json"
listed=$(st-analyze "$F" --config "$T/q50.json" --top 1000 2>/dev/null | grep -c '^ *[0-9]* *[0-9.]* .* read ')
head=$(st-analyze "$F" --config "$T/q50.json" 2>/dev/null | grep '^Q2C p50: ')
# nearest rank: at least half of the reads rank at or above their median
if [ -n "$head" ] && [ "$listed" -ge $((READS / 2)) ]; then pass analyze_stortrace_filter_quantile; else
	fail analyze_stortrace_filter_quantile "'$head', $listed listed"; fi
jq '.filter.enable = true | .filter.stage = "sum"' "$T/stortrace.json" >"$T/sum.json"
if st-analyze "$F" --config "$T/sum.json" 2>/dev/null | grep -q '^total p99.95: '; then
	pass analyze_stortrace_filter_stage
else
	fail analyze_stortrace_filter_stage "stage sum is not total"
fi
if grep -q "filter.filter_accuracy has no sttrace equivalent" "$T/alog"; then
	pass analyze_stortrace_filter_accuracy
else
	fail analyze_stortrace_filter_accuracy "no note: $(cat "$T/alog")"
fi
