#!/usr/bin/env bash
# st-replay's command line: --help, and one line with exit 2 for each bad
# usage, exit 1 for an unreadable file. Needs no root or BPF.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
rp_require replay_usage

st_tmpdir T
st-format synth -o "$T/s.sttrace" --ios 200 --seed 1 >/dev/null

st-replay --help >"$T/help" && grep -q -- '--allow-write' "$T/help" && grep -q 'st-analyze diff' "$T/help" &&
	pass replay_usage_help || fail replay_usage_help "no usage text with --allow-write and the compare command"

# usage NAME STATUS PATTERN ARGS...: exit STATUS and one stderr line matching PATTERN.
usage() {
	local name=$1 want=$2 pattern=$3 rc
	shift 3
	st-replay "$@" >/dev/null 2>"$T/err"
	rc=$?
	if [ "$rc" -eq "$want" ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q -- "$pattern" "$T/err"; then
		pass "$name"
	else
		fail "$name" "exit $rc (want $want), stderr: $(head -3 "$T/err" | tr '\n' ' ')"
	fi
}
usage replay_usage_no_file 2 "FILE missing"
usage replay_usage_two_files 2 "one FILE" a b --target x
usage replay_usage_no_target 2 "no target" "$T/s.sttrace"
usage replay_usage_unknown 2 "--frobnicate" "$T/s.sttrace" --frobnicate
usage replay_usage_timing 2 "--timing fast" "$T/s.sttrace" --target x --timing fast
usage replay_usage_scale 2 "scale=0" "$T/s.sttrace" --target x --timing scale=0
usage replay_usage_qd 2 "--qd 0" "$T/s.sttrace" --target x --qd 0
usage replay_usage_threads 2 "--threads 0" "$T/s.sttrace" --target x --threads 0
usage replay_usage_threads_qd 2 "--threads 8 above --qd 4" "$T/s.sttrace" --target x --threads 8 --qd 4
usage replay_usage_align 2 "--align 3000" "$T/s.sttrace" --target x --align 3000
usage replay_usage_max_io 2 "--max-io nan" "$T/s.sttrace" --target x --max-io nan
usage replay_usage_max_io_small 2 "--max-io 1K" "$T/s.sttrace" --target x --max-io 1K
# numbers as common/number.h reads them: no nan, blanks, sign or hexadecimal
usage replay_usage_scale_nan 2 "scale=nan" "$T/s.sttrace" --target x --timing scale=nan
usage replay_usage_qd_blank 2 "--qd  8" "$T/s.sttrace" --target x --qd " 8"
usage replay_usage_max_io_hex 2 "--max-io 0x100000" "$T/s.sttrace" --target x --max-io 0x100000
usage replay_usage_scale_hex 2 "scale=0x2" "$T/s.sttrace" --target x --timing scale=0x2
usage replay_usage_from_hex_float 2 "--from 0x1p-3" "$T/s.sttrace" --target x --from 0x1p-3
usage replay_usage_threads_sign 2 "--threads +2" "$T/s.sttrace" --target x --threads +2
usage replay_usage_map 2 "--map sda" "$T/s.sttrace" --map sda
usage replay_usage_level 2 "--level disk" "$T/s.sttrace" --target x --level disk
usage replay_usage_window 2 "--from 2s is after --to 1s" "$T/s.sttrace" --target x --from 2s --to 1s
usage replay_usage_dev 1 "--dev sdz: no such device" "$T/s.sttrace" --target x --dev sdz
usage replay_usage_missing 1 "No such file" "$T/none.sttrace" --target x
# A trace with data syscalls replays at file level, into a directory.
usage replay_usage_file_map 2 "file level replays into --target DIR" "$T/s.sttrace" --map vda=/dev/null

# --version and a --report file that is a symlink (refused unless --force).
check replay_usage_version grep -qx "st-replay [0-9.]* (format [0-9]*\.[0-9]*)" <(st-replay --version)
ln -s "$T/elsewhere" "$T/link.json"
truncate -s 64M "$T/img"
usage replay_usage_report_symlink 1 "link.json" "$T/s.sttrace" --level block --target "$T/img" --allow-write \
	--wrap --timing afap --report "$T/link.json"
[ ! -e "$T/elsewhere" ] && pass replay_usage_report_not_followed || fail replay_usage_report_not_followed "the symlink was followed"
