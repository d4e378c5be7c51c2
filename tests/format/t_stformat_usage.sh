#!/usr/bin/env bash
# st-format's command line: --help everywhere, and bad arguments give exit
# status 2 and exactly one line on stderr naming the problem.
. "$(dirname "$0")/../lib.sh"
st_tmpdir T

# usage_error NAME PATTERN ARGS...: exit 2, one stderr line matching PATTERN, no stdout.
usage_error() {
	local name=$1 pattern=$2 rc lines
	shift 2
	timeout 20 st-format "$@" >"$T/out" 2>"$T/err"
	rc=$?
	lines=$(wc -l <"$T/err")
	if [ "$rc" -ne 2 ]; then
		fail "$name" "exit $rc, expected 2 (st-format $*)"
	elif [ "$lines" -ne 1 ]; then
		fail "$name" "$lines lines on stderr, expected 1: $(head -c 300 "$T/err")"
	elif ! grep -q -- "$pattern" "$T/err"; then
		fail "$name" "stderr '$(cat "$T/err")' does not match '$pattern'"
	elif [ -s "$T/out" ]; then
		fail "$name" "unexpected stdout: $(head -c 200 "$T/out")"
	else
		pass "$name"
	fi
}

st-format synth -o "$T/s.st" --ios 20 >/dev/null || fail synth_for_usage "synth failed"

# --help: exit 0, usage on stdout, nothing on stderr.
for sub in "" info verify cat slice recover synth anonymize convert import-blktrace; do
	out=$(st-format $sub --help 2>"$T/err")
	rc=$?
	if [ $rc -eq 0 ] && [[ $out == Usage:\ st-format* ]] && [ ! -s "$T/err" ]; then
		pass "help_${sub:-main}"
	else
		fail "help_${sub:-main}" "exit $rc, stdout '${out:0:80}'"
	fi
done
# Every listed subcommand is documented by the main help.
main_help=$(st-format --help)
for sub in info verify cat slice recover synth anonymize convert import-blktrace; do
	if grep -q "^  $sub " <<<"$main_help"; then
		pass "help_lists_$sub"
	else
		fail "help_lists_$sub" "main help does not list $sub"
	fi
done

# No subcommand: exit 2, usage on stderr.
st-format >/dev/null 2>&1
check no_subcommand_exit_2 test $? -eq 2

usage_error unknown_subcommand "unknown subcommand 'frobnicate'" frobnicate
usage_error unknown_long_option "unknown option '--bogus'" info --bogus "$T/s.st"
usage_error unknown_short_option "unknown option '-x'" cat -x "$T/s.st"
usage_error missing_file "missing FILE" info
usage_error extra_argument "unexpected argument 'extra'" verify "$T/s.st" extra
usage_error option_needs_value "needs a value" cat "$T/s.st" --type
usage_error csv_and_json "exclude each other" cat --csv --json "$T/s.st"
usage_error bad_time "bad time '12parsecs' for --from" cat --from 12parsecs "$T/s.st"
usage_error negative_time "bad time '-1s' for --to" cat --to=-1s "$T/s.st"
usage_error from_after_to "after --to" cat --from 2s --to 1s "$T/s.st"
usage_error unknown_type "no event type 'no_such_event'" cat --type block_rq_issue,no_such_event "$T/s.st"
usage_error slice_without_output "missing -o OUT" slice "$T/s.st" --from 0
usage_error recover_has_no_range "unknown option '--from'" recover "$T/s.st" -o "$T/r.st" --from 1
usage_error synth_without_ios "required" synth -o "$T/x.st"
usage_error synth_bad_ios "bad value 'many' for --ios" synth -o "$T/x.st" --ios many
usage_error synth_too_many_devices "bad value '99' for --devices" synth -o "$T/x.st" --ios 5 --devices 99
usage_error synth_bad_slow_factor "bad factor '-2' for --slow-factor" synth -o "$T/x.st" --ios 5 --slow-factor -2
usage_error synth_positional "unexpected argument 'stray'" synth -o "$T/x.st" --ios 5 stray
# Out of the range a synthetic host has, and beyond zstd's levels: usage, before any writing.
usage_error synth_no_cpus "bad value '0' for --cpus" synth -o "$T/x.st" --ios 5 --cpus 0
usage_error synth_no_devices "bad value '0' for --devices" synth -o "$T/x.st" --ios 5 --devices 0
usage_error synth_no_procs "bad value '0' for --procs" synth -o "$T/x.st" --ios 5 --procs 0
usage_error synth_slow_factor_nan "bad factor 'nan' for --slow-factor" synth -o "$T/x.st" --ios 5 --slow-factor nan
usage_error synth_slow_factor_inf "bad factor 'inf' for --slow-factor" synth -o "$T/x.st" --ios 5 --slow-factor inf
usage_error synth_slow_factor_hex "bad factor '0x2' for --slow-factor" synth -o "$T/x.st" --ios 5 --slow-factor 0x2
usage_error hex_float_time "bad time '0x1p-3' for --from" cat --from 0x1p-3 "$T/s.st"
usage_error synth_bad_level "bad level '999' for -z" synth -o "$T/x.st" --ios 5 -z 999
usage_error anonymize_bad_level "bad level '999' for -z" anonymize "$T/s.st" -o "$T/x.st" -z 999
usage_error slice_bad_level "bad level '-999999' for -z" slice "$T/s.st" -o "$T/x.st" -z -999999
usage_error slice_blank_level "bad level ' 3' for -z" slice "$T/s.st" -o "$T/x.st" -z " 3"
usage_error synth_negative_seed "bad value '-1' for --seed" synth -o "$T/x.st" --ios 5 --seed -1
usage_error convert_without_to "missing --to FORMAT" convert "$T/s.st"
usage_error convert_unknown_format "unknown format 'pcap' for --to" convert "$T/s.st" --to pcap
usage_error convert_blktrace_needs_prefix "--to blktrace needs -o PREFIX" convert "$T/s.st" --to blktrace
usage_error convert_records_not_here "--records is for --to csv and jsonl" convert "$T/s.st" --to blkparse --records
usage_error anonymize_without_output "missing -o OUT" anonymize "$T/s.st"
usage_error anonymize_bad_keep "unknown 'uid' for --keep" anonymize "$T/s.st" -o "$T/x.st" --keep comm,uid
usage_error import_without_files "missing blktrace FILE" import-blktrace -o "$T/x.st"
usage_error import_without_output "missing -o OUT" import-blktrace "$T/s.st"
[ -e "$T/x.st" ] && fail synth_usage_writes_nothing "a file was created" || pass synth_usage_writes_nothing

# Bad values inside the file-name position are file errors (exit 1), not usage errors.
timeout 20 st-format info "$T/does-not-exist" 2>"$T/err"
rc=$?
if [ $rc -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "^st-format: $T/does-not-exist: " "$T/err"; then
	pass missing_file_exit_1
else
	fail missing_file_exit_1 "exit $rc: $(cat "$T/err")"
fi
