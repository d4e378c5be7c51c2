#!/usr/bin/env bash
# st-record's interface: --help, one-line errors with exit 2 for bad usage,
# exit 1 for an unwritable output, --config (stortrace keys applied, the
# command line overriding them).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"

st_tmpdir T

# expect_exit NAME STATUS PATTERN ARGS...: st-record ARGS (run by "${AS[@]}")
# exits with STATUS after one stderr line matching PATTERN
AS=()
expect_exit() {
	local name=$1 want=$2 pattern=$3 rc lines
	shift 3
	"${AS[@]}" st-record "$@" >"$T/out" 2>"$T/err"
	rc=$?
	lines=$(wc -l <"$T/err")
	if [ $rc -eq "$want" ] && [ "$lines" -eq 1 ] && grep -q -- "$pattern" "$T/err"; then
		pass "$name"
	else
		fail "$name" "exit $rc (want $want), $lines lines: $(head -2 "$T/err" | tr '\n' ' ')"
	fi
}

if [ ! -x "$ST_BUILD/st-record" ]; then
	skip record_options "st-record not built (no clang/bpftool/libbpf)"
	exit 0
fi
if st-record --help | grep -q -- "--events LIST"; then pass record_help; else fail record_help "no usage text"; fi
expect_exit record_usage_unknown_option 2 "'--frobnicate'" -o "$T/x" --frobnicate
expect_exit record_usage_no_output 2 "no output file" -e block
expect_exit record_usage_bad_size 2 "max-size: bad value" -o "$T/x" --max-size 12Q
expect_exit record_usage_bad_qd 2 "qd: bad value" -o "$T/x" --qd 0
# nan and inf are no sizes (nan passed every range check: no comparison holds);
# -t ends the recording that a value taken would start.
for v in nan inf nanK infM; do
	expect_exit "record_usage_max_size_$v" 2 "max-size: bad value '$v'" -o "$T/x" -t 0.5 \
		--max-size "$v"
	expect_exit "record_usage_ringbuf_size_$v" 2 "ringbuf-size: bad value '$v'" -o "$T/x" -t 0.5 \
		--ringbuf-size "$v"
done
# A ring of 4K never holds one of the probes' batches (4K of records and the last one).
expect_exit record_usage_ringbuf_too_small 2 "ringbuf-size 4096: .*at least 16K" -o "$T/x" -t 0.5 \
	--ringbuf-size 4096
# decimal only: strtod read hexadecimal and its floats
expect_exit record_usage_max_size_hex 2 "max-size: bad value '0x10'" -o "$T/x" -t 0.5 --max-size 0x10
expect_exit record_usage_duration_hex_float 2 "duration: bad value '0x1p-3'" -o "$T/x" -t 0x1p-3
expect_exit record_usage_rotate_hex_float 2 "rotate: bad value '0x1p3s'" -o "$T/x" -t 0.5 --rotate 0x1p3s
expect_exit record_usage_trigger_hex_float 2 "trigger: bad value 'D2C>0x1p-3'" -o "$T/x" -t 0.5 \
	--ring 1M --trigger 'D2C>0x1p-3'
expect_exit record_usage_rotate_nanK 2 "rotate: bad value 'nanK'" -o "$T/x" -t 0.5 --rotate nanK
expect_exit record_usage_rotate_infM 2 "rotate: bad value 'infM'" -o "$T/x" -t 0.5 --rotate infM
expect_exit record_usage_ring_nanM 2 "ring: bad value 'nanM'" -o "$T/x" -t 0.5 --ring nanM
expect_exit record_usage_no_events 2 "no event named" -o "$T/x" -e ,
expect_exit record_usage_unknown_device 2 "/dev/null: not a block device" -o "$T/x" -d /dev/null
expect_exit record_usage_no_such_pid 2 "-p 999999999: no such process" -o "$T/x" -p 999999999
expect_exit record_usage_pid_and_command 2 "give one" -o "$T/x" -p 1 -- true
echo '{"event_type": "block", "colour": "blue"}' >"$T/bad.json"
expect_exit record_config_unknown_key 2 "unknown key 'colour'" --config "$T/bad.json"
echo '{"event_type": ' >"$T/broken.json"
expect_exit record_config_not_a_file 2 "/dev/zero: not a regular file" --config /dev/zero
expect_exit record_config_broken_json 2 "broken.json: cannot read JSON" --config "$T/broken.json"

why=$(bpf_unavailable)
if [ -n "$why" ]; then
	skip record_output_unwritable "$why"
	skip record_config_applied "$why"
	exit 0
fi
AS=(setpriv --reuid=65534 --regid=65534 --clear-groups)
expect_exit record_not_root 1 "must run as root" -o "$T/x" -e block -t 1
AS=()
# names are looked up in tracefs, so only where st-record can run
expect_exit record_usage_unknown_tracepoint 2 \
	"no tracepoint 'block_rq_frob' on this kernel; closest: block:block_rq_" -o "$T/x" -e block,block_rq_frob
expect_exit record_usage_unknown_tracepoint_subsys 2 \
	"no tracepoint 'ext4:ext4_da_writ_begin' on this kernel; closest: ext4:ext4_da_write_begin" \
	-o "$T/x" -e 'ext4:ext4_da_writ_begin'
expect_exit record_usage_unknown_tracepoint_glob 2 "no tracepoint 'ext4:nosuch_\\*'" \
	-o "$T/x" -e 'ext4:nosuch_*'
expect_exit record_output_unwritable 1 "$T/no/such/dir/x.sttrace: cannot create: No such file or directory" \
	-o "$T/no/such/dir/x.sttrace" -e block -t 1

st_loopdev L 32
DEV=$(rec_devno "$L")
cp "$(command -v dd)" "$T/ddcfg"
cat >"$T/c.json" <<JSON
{
	"name": "$T/from-config",
	"event_type": ["block"],
	"logger_io_uring_depth": 2,
	"select_target": { "common": "ddcfg", "files": ["$L"] },
	"zstd_level": 5,
	"filter": { "quantile": 99.9 }
}
JSON
# name -> the output file; event_type, depth, comm, files and zstd_level applied;
# --qd on the command line wins over logger_io_uring_depth
st-record --config "$T/c.json" --qd 3 -- sh -c \
	'"$1" if="$2" of=/dev/null bs=4k count=20 iflag=direct status=none
	 dd if="$2" of=/dev/null bs=4k count=5 iflag=direct status=none' sh "$T/ddcfg" "$L" 2>"$T/clog"
out="$T/from-config.sttrace"
opts=$(st-format info "$out" 2>/dev/null | awk '$1 == "options" { $1 = $2 = ""; print }')
types=$(st-format info "$out" | awk '/^events per type/ { on = 1; next } on && NF == 2 { print $1 }' |
	grep -v '^sched_' | sort -u | tr '\n' ' ')
# only ddcfg's 20 requests: the plain dd's 5 are not its command name
got=$(rec_issued "$out" dev | grep -cx "$DEV")
# select_target.files: the named paths' inodes
ino=$(stat -c '%d %i' "$L" | awk '{ printf "inode.%d:%d.%s", int($1 / 256), $1 % 256, $2 }')
named=$(st-format info "$out" | awk -v k="$ino" '$1 == k { print $3 }')
if [[ $opts == *'"events":"block"'* && $opts == *'"qd":3'* && $opts == *'"zstd_level":5'* &&
	$opts == *'"comm":"ddcfg"'* && $types == "block_bio_queue block_rq_complete_compact block_rq_issue_stamped " &&
	$got == 20 && $named == "$L" ]]; then
	pass record_config_applied
else
	fail record_config_applied "options $opts; types $types; $got requests on $DEV (want 20); $ino = '$named': $(cat "$T/clog")"
fi
