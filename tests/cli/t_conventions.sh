#!/usr/bin/env bash
# The conventions every sttrace program shares: --version, one-line usage
# errors with exit 2, one meaning of a time on the command line, output
# files that cannot be redirected by a symlink or another user's file, and a
# FIFO that blocks no program: refused as an output, read as `-` as an input.
. "$(dirname "$0")/../lib.sh"
st_tmpdir T

st-format synth -o "$T/a.st" --ios 300 --seed 9 >/dev/null || fail synth "synth failed"

# --- --version: the toolkit version, as the trace's `tool` metadata records it
version=$(st-format info --json spec/golden/synth-60.sttrace 2>/dev/null | jq -r '.metadata.tool' | awk '{print $NF}')
[ -n "$version" ] || version=$(jq -r '.metadata.tool' <(st-format info --json "$T/a.st") | awk '{print $NF}')
for tool in st-format st-analyze; do
	check "${tool}_version" grep -qx "$tool $version (format [0-9]*\.[0-9]*)" <("$tool" --version)
done
if [ -x "$ST_BUILD/st-record" ]; then
	check st-record_version grep -qx "st-record $version (format [0-9]*\.[0-9]*)" <(st-record --version)
else
	skip st-record_version "st-record not built (no clang/bpftool/libbpf)"
fi
if [ -x "$ST_BUILD/st-replay" ]; then
	check st-replay_version grep -qx "st-replay $version (format [0-9]*\.[0-9]*)" <(st-replay --version)
else
	skip st-replay_version "st-replay not built (no liburing or json-c)"
fi

# usage_error NAME ARGS...: exit 2 and exactly one line on stderr naming help.
usage_error() {
	local name=$1 rc
	shift
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
	if [ $rc -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q -- "--help)$" "$T/err"; then
		pass "$name"
	else
		fail "$name" "exit $rc, stderr: $(head -2 "$T/err" | tr '\n' ' ')"
	fi
}
# (diff plots its own comparison with --gnuplot: t_diff_gnuplot)
for opt in "--by op" "--top 3" "--interval 1s" "--heatmap lat"; do
	# shellcheck disable=SC2086
	usage_error "diff_refuses_${opt%% *}" st-analyze diff $opt "$T/a.st" "$T/a.st"
done
check diff_refusal_names_option grep -q -- "--heatmap: not an option of diff" \
	<(st-analyze diff --heatmap lat "$T/a.st" "$T/a.st" 2>&1)
usage_error analyze_from_after_to st-analyze --from 3 --to 1 "$T/a.st"
usage_error format_from_after_to st-format cat --from 3 --to 1 "$T/a.st"
usage_error analyze_bad_time st-analyze --from 2parsecs "$T/a.st"
# decimal from the first byte to the last, numbers and times alike (strtod
# read hexadecimal: --threshold 0x10 was 16 %, --interval 0x1p-3 125 ms)
usage_error diff_hex_threshold st-analyze diff --threshold 0x10 "$T/a.st" "$T/a.st"
check diff_hex_threshold_named grep -q -- "--threshold 0x10" "$T/err"
usage_error analyze_hex_float_interval st-analyze --interval 0x1p-3 "$T/a.st"
check analyze_hex_float_interval_named grep -q -- "--interval 0x1p-3" "$T/err"
usage_error format_hex_float_time st-format cat --from 0x1p-3 "$T/a.st"
check format_hex_float_time_named grep -q "0x1p-3" "$T/err"

# --- one time: `--from 2ms` selects the same window in st-format and st-analyze.
# st-analyze counts the I/Os whose first event is in the window; st-format
# slice keeps the events in it: the I/Os of the slice started in the window.
start=$(st-format info --json "$T/a.st" | jq -r '.metadata["record.start_ts"]')
first=$(st-format cat "$T/a.st" | head -1 | cut -d' ' -f1)
[ "$start" != "$first" ] || fail time_start_differs "synth's start equals its first event: the test cannot tell them apart"
st-format cat --from 2ms --to 3ms "$T/a.st" | cut -d' ' -f1 >"$T/ts"
check time_relative_to_trace_start awk -v a=$((start + 2000000)) -v b=$((start + 3000000)) \
	'$1 < a || $1 > b { bad = 1 } END { exit bad || NR == 0 }' "$T/ts"
check time_absolute_form diff <(st-format cat --from "@$((start + 2000000))" --to "@$((start + 3000000))" "$T/a.st" | cut -d' ' -f1) "$T/ts"
st-analyze --csv --by op --from 2ms --to 3ms "$T/a.st" >"$T/rel.csv" 2>/dev/null
st-analyze --csv --by op --from "@$((start + 2000000))" --to "@$((start + 3000000))" "$T/a.st" \
	>"$T/abs.csv" 2>/dev/null
check time_analyze_counts_from_trace_start diff "$T/rel.csv" "$T/abs.csv"
check time_analyze_window_nonempty test "$(wc -l <"$T/rel.csv")" -gt 1
# Both ends are inclusive: a window of one instant, the entry of a read,
# holds the I/O that read began.
at=$(st-format cat "$T/a.st" | awk '$2 == "sys_enter_pread64" { print $1; exit }')
check time_analyze_to_inclusive test "$(st-analyze --csv --by op --from "@$at" --to "@$at" "$T/a.st" 2>/dev/null |
	awk -F, 'NR > 1 && !seen[$1]++ { n += $2 } END { print n + 0 }')" = 1

# --- safe outputs (st-format slice/recover, st-analyze --gnuplot, st-record -o)
echo keep >"$T/target"
ln -s "$T/target" "$T/link"
st-format slice "$T/a.st" -o "$T/link" >/dev/null 2>"$T/err"
rc=$?
check output_symlink_refused test $rc -eq 1
check output_symlink_message grep -q "is a symbolic link" "$T/err"
check output_symlink_target_kept grep -qx keep "$T/target"
check output_force_follows eval 'st-format recover "$T/a.st" -o "$T/link" --force >/dev/null'
check output_force_wrote_target st-format verify -q "$T/target"
st-format slice "$T/a.st" -o "$T/new.st" >/dev/null
check output_created_0600 test "$(stat -c %a "$T/new.st")" = 600
st-format recover "$T/a.st" -o /dev/null >/dev/null 2>"$T/err"
check output_non_regular_refused grep -q "not a regular file" "$T/err"
check output_non_regular_forced eval 'st-format recover "$T/a.st" -o /dev/null --force >/dev/null'
if [ "$(id -u)" -eq 0 ]; then
	echo theirs >"$T/theirs"
	chown 65534:65534 "$T/theirs"
	st-format slice "$T/a.st" -o "$T/theirs" --force >/dev/null 2>"$T/err"
	check output_other_user_refused grep -q "belongs to another user" "$T/err"
	check output_other_user_kept grep -qx theirs "$T/theirs"
	mkdir "$T/theirdir" && chown 65534:65534 "$T/theirdir"
	st-analyze --gnuplot "$T/theirdir" "$T/a.st" >/dev/null 2>"$T/err"
	check gnuplot_other_users_dir_refused grep -q "belongs to another user" "$T/err"
else
	skip output_other_user_refused "needs root to make a file of another user"
	skip gnuplot_other_users_dir_refused "needs root to make a directory of another user"
fi
mkdir "$T/real"
ln -s "$T/real" "$T/plots"
st-analyze --gnuplot "$T/plots" "$T/a.st" >/dev/null 2>"$T/err"
check gnuplot_symlink_dir_refused grep -q "is a symbolic link" "$T/err"
check gnuplot_symlink_dir_untouched test -z "$(ls -A "$T/real")"
st-analyze --gnuplot "$T/plots2" --interval 1ms "$T/a.st" >/dev/null 2>&1
check gnuplot_dir_created_0700 test "$(stat -c %a "$T/plots2")" = 700
check gnuplot_data_0600 test "$(stat -c %a "$T/plots2/cdf.dat")" = 600
# The plots gnuplot renders are outputs too: 0600, and a symlink planted at
# a plot's name in a directory others write (1777) is not followed.
if command -v gnuplot >/dev/null; then
	check gnuplot_png_0600 test "$(stat -c %a "$T/plots2/cdf.png")" = 600
	check gnuplot_svg_0600 test "$(stat -c %a "$T/plots2/heatmap_position.svg")" = 600
	mkdir -m 1777 "$T/shared"
	echo keep >"$T/victim"
	ln -s "$T/victim" "$T/shared/timeseries.svg"
	st-analyze --gnuplot "$T/shared" "$T/a.st" >/dev/null 2>"$T/err"
	rc=$?
	check gnuplot_plot_symlink_refused test $rc -eq 1
	check gnuplot_plot_symlink_message grep -q "timeseries.svg: is a symbolic link" "$T/err"
	check gnuplot_plot_symlink_target_kept grep -qx keep "$T/victim"
else
	skip gnuplot_png_0600 "gnuplot not installed"
fi
# convert --to blktrace writes a file per CPU: one refused (a symlink at
# OUT.blktrace.3), none of the others is left behind, empty or half-written.
mkdir "$T/bt"
echo keep >"$T/bt_target"
ln -s "$T/bt_target" "$T/bt/out.blktrace.3"
st-format convert "$T/a.st" --to blktrace -o "$T/bt/out" >/dev/null 2>"$T/err"
rc=$?
check blktrace_symlink_refused test $rc -eq 1
check blktrace_symlink_message grep -q "out.blktrace.3: is a symbolic link" "$T/err"
check blktrace_refused_leaves_nothing test "$(ls "$T/bt")" = out.blktrace.3
check blktrace_symlink_target_kept grep -qx keep "$T/bt_target"
# dump-raw (a benchmark helper) makes its output as every writer does.
echo keep >"$T/raw_target"
ln -s "$T/raw_target" "$T/raw_link"
st-format dump-raw "$T/a.st" -o "$T/raw_link" >/dev/null 2>"$T/err"
check dump_raw_symlink_refused grep -q "is a symbolic link" "$T/err"
check dump_raw_symlink_target_kept grep -qx keep "$T/raw_target"
st-format dump-raw "$T/a.st" -o "$T/raw" >/dev/null
check dump_raw_0600 test "$(stat -c %a "$T/raw")" = 600

# --- FIFOs: an output FIFO without a reader is refused at once (it blocked
# open() for good); an input FIFO is copied as - is (pread needs a file),
# one without a writer reads empty instead of blocking
mkfifo "$T/fifo"
timeout 10 st-format slice "$T/a.st" -o "$T/fifo" >/dev/null 2>"$T/err"
rc=$?
check output_fifo_refused test $rc -eq 1
check output_fifo_message grep -q "fifo: is a FIFO without a reader" "$T/err"
timeout 10 st-format info "$T/fifo" >/dev/null 2>"$T/err"
rc=$?
check input_fifo_no_writer test $rc -eq 1
# The merge of summaries and import-blktrace read theirs through the same
# copy: without a writer an empty input, refused or imported as empty.
st-analyze "$T/a.st" --save-summary "$T/a.summary" >/dev/null
timeout 10 st-analyze merge "$T/fifo" >/dev/null 2>"$T/err"
rc=$?
check merge_fifo_no_writer test $rc -eq 1
check merge_fifo_no_writer_message grep -q "fifo: line 1: not an st-analyze summary" "$T/err"
timeout 10 st-format import-blktrace "$T/fifo" -o "$T/fifo_import.st" >/dev/null 2>"$T/err"
rc=$?
check import_blktrace_fifo_no_writer test $rc -eq 0
# fifo_writer SRC: cat SRC into the FIFO, its pid in $writer, returning once
# the writer is blocked in its open (openat, syscall 257 on x86-64, in
# /proc/PID/syscall) until the reader comes.
fifo_writer() {
	cat "$1" >"$T/fifo" &
	writer=$!
	for _ in $(seq 100); do
		read -r nr _ <"/proc/$writer/syscall" 2>/dev/null && [ "$nr" = 257 ] && break
		sleep 0.05
	done
}
fifo_writer "$T/a.st"
timeout 10 st-analyze --csv --by op "$T/fifo" >"$T/fifo.csv" 2>"$T/err"
rc=$?
wait $writer
st-analyze --csv --by op "$T/a.st" >"$T/file.csv" 2>/dev/null
check input_fifo_read_as_stdin test $rc -eq 0
check input_fifo_same_summary cmp -s "$T/fifo.csv" "$T/file.csv"
fifo_writer "$T/a.summary"
timeout 10 st-analyze merge --csv "$T/fifo" >"$T/fifo.csv" 2>"$T/err"
rc=$?
wait $writer
st-analyze merge --csv "$T/a.summary" >"$T/file.csv" 2>/dev/null
check merge_fifo_read_as_stdin test $rc -eq 0
check merge_fifo_same_report cmp -s "$T/fifo.csv" "$T/file.csv"
st-format convert "$T/a.st" --to blktrace -o "$T/fifo_bt" >/dev/null
fifo_writer "$T/fifo_bt.blktrace.0"
timeout 10 st-format import-blktrace "$T/fifo" -o "$T/fifo_import.st" >/dev/null 2>"$T/err"
rc=$?
wait $writer
st-format import-blktrace "$T/fifo_bt.blktrace.0" -o "$T/file_import.st" >/dev/null
check import_blktrace_fifo_read_as_stdin test $rc -eq 0
check import_blktrace_fifo_same_events cmp -s <(st-format cat "$T/fifo_import.st") \
	<(st-format cat "$T/file_import.st")
check import_blktrace_fifo_has_events test "$(st-format cat "$T/file_import.st" | wc -l)" -gt 0

why=$(bpf_unavailable)
if [ -n "$why" ]; then
	skip record_output_symlink_refused "$why"
	skip record_output_fifo_refused "$why"
	skip record_rotate_into_symlink "$why"
	exit 0
fi
timeout 20 st-record -o "$T/fifo" -e block -t 0.2 >/dev/null 2>"$T/err"
rc=$?
check record_output_fifo_refused test $rc -eq 1
check record_output_fifo_message grep -q "fifo: is a FIFO without a reader" "$T/err"

# --rotate when the next file cannot be made (a symlink planted at its name):
# one error, exit 1, the file before it whole (it was SIGSEGV in finish()).
echo keep >"$T/victim"
ln -s "$T/victim" "$T/rot.0002.sttrace"
timeout 30 st-record -o "$T/rot.sttrace" -e block --rotate 1s -t 3 >/dev/null 2>"$T/err"
rc=$?
check record_rotate_into_symlink_exit test $rc -eq 1
check record_rotate_into_symlink_message grep -q "rot.0002.sttrace: is a symbolic link" "$T/err"
check record_rotate_into_symlink_victim_kept grep -qx keep "$T/victim"
check record_rotate_into_symlink_first_whole st-format verify -q "$T/rot.0001.sttrace"
echo keep >"$T/rtarget"
ln -s "$T/rtarget" "$T/rlink"
st-record -o "$T/rlink" -e block -t 0.2 >/dev/null 2>"$T/err"
rc=$?
check record_output_symlink_refused test $rc -eq 1
check record_output_symlink_message grep -q "rlink: is a symbolic link" "$T/err"
check record_output_symlink_target_kept grep -qx keep "$T/rtarget"
st-record -o "$T/r.st" -e block -t 0.2 >/dev/null 2>&1
check record_output_0600 test "$(stat -c %a "$T/r.st")" = 600
