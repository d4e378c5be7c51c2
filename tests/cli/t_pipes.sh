#!/usr/bin/env bash
# Traces through pipes: st-record -o - streams a whole trace to standard
# output (nothing else lands in it, not even the command's output), and
# st-analyze - and st-format cat|info|verify - read one from standard input.
. "$(dirname "$0")/../lib.sh"
st_tmpdir T

st-format synth -o "$T/a.st" --ios 400 --seed 3 >/dev/null || fail synth "synth failed"
check pipe_format_cat diff <(cat "$T/a.st" | st-format cat -) <(st-format cat "$T/a.st")
check pipe_format_cat_csv diff <(cat "$T/a.st" | st-format cat --csv -) <(st-format cat --csv "$T/a.st")
check pipe_format_info_json diff <(cat "$T/a.st" | st-format info --json - | jq -S 'del(.file)') \
	<(st-format info --json "$T/a.st" | jq -S 'del(.file)')
check pipe_format_verify eval 'cat "$T/a.st" | st-format verify -q -'
check pipe_format_redirected_file diff <(st-format cat - <"$T/a.st") <(st-format cat "$T/a.st")
check pipe_analyze diff <(cat "$T/a.st" | st-analyze --csv - 2>/dev/null) <(st-analyze --csv "$T/a.st" 2>/dev/null)
check pipe_analyze_diff_side eval 'cat "$T/a.st" | st-analyze diff - "$T/a.st" >/dev/null'
# A stream cut short reads up to its last complete chunk, like a cut file.
head -c 40000 "$T/a.st" >"$T/cut.st"
check pipe_cut_stream diff <(head -c 40000 "$T/a.st" | st-format cat -) <(st-format cat "$T/cut.st")
echo garbage | st-format verify - >/dev/null 2>"$T/err"
check pipe_garbage_one_line test "$?" -eq 1 -a "$(wc -l <"$T/err")" -eq 1

. "$(dirname "$0")/../record/common.sh"
rec_require_bpf pipe_record
st_loopdev L 64
# The command writes to its standard output: it must go to standard error.
st-record -o - -e block -d "$L" -- sh -c "echo from-the-command; dd if=/dev/zero of=$L bs=4k count=100 oflag=direct status=none" \
	2>"$T/rec.err" | cat >"$T/r.st"
check pipe_record_exit test "${PIPESTATUS[0]}" -eq 0
check pipe_record_verifies st-format verify -q "$T/r.st"
check pipe_record_command_output_on_stderr grep -qx from-the-command "$T/rec.err"
check pipe_record_stream_clean test "$(grep -c from-the-command "$T/r.st")" -eq 0
# dd's 100 direct writes, read by st-analyze from a pipe.
writes=$(cat "$T/r.st" | st-analyze --csv --by op - 2>/dev/null | awk -F, '$1 == "write" && $7 == "total" { print $2 }')
check pipe_record_analyze_counts_dd test "${writes:-0}" -eq 100
