#!/usr/bin/env bash
# convert and anonymize on bad input: one line naming the file, exit 1, no
# output left; convert's progress line on a terminal (script(1) gives it
# one) and none when stderr is not a terminal.
. "$(dirname "$0")/../lib.sh"

st_tmpdir dir
yes "not a trace" | head -c 10000 >"$dir/garbage.sttrace"
bad_input() { # NAME ARGS...: exit 1, one stderr line naming garbage.sttrace
	local name=$1 rc
	shift
	timeout 20 st-format "$@" >/dev/null 2>"$dir/err"
	rc=$?
	if [ $rc = 1 ] && [ "$(wc -l <"$dir/err")" = 1 ] && grep -q "garbage.sttrace" "$dir/err"; then
		pass "$name"
	else
		fail "$name" "exit $rc: $(head -2 "$dir/err")"
	fi
}
for to in blktrace blkparse fio-iolog csv jsonl perfetto; do
	bad_input "convert.bad_input.$to" convert "$dir/garbage.sttrace" --to $to -o "$dir/out.$to"
done
bad_input convert.bad_input.records convert "$dir/garbage.sttrace" --to csv --records
bad_input anonymize.bad_input anonymize "$dir/garbage.sttrace" -o "$dir/anon.sttrace"
[ -e "$dir/anon.sttrace" ] && fail anonymize.bad_input_no_output "output left" ||
	pass anonymize.bad_input_no_output

# About 8.6 events per synthetic I/O: 20000 I/Os pass the 65536 events
# after which the progress line is first printed.
st-format synth -o "$dir/big.sttrace" --ios 20000 --seed 2 >/dev/null ||
	{ fail convert.progress "synth failed"; exit 1; }
# Every writer's pass and cat's, which writes the events of csv and jsonl.
progress=1
for f in fio-iolog csv jsonl; do
	script -qec "st-format convert '$dir/big.sttrace' --to $f -o '$dir/big.$f'" /dev/null \
		>"$dir/tty" 2>&1
	st-format convert "$dir/big.sttrace" --to $f -o "$dir/big2.$f" 2>"$dir/notty"
	if ! grep -q "convert: 65536 of [0-9]* events" "$dir/tty" || [ -s "$dir/notty" ] ||
		! cmp -s "$dir/big.$f" "$dir/big2.$f"; then
		progress=0
		echo "$f: terminal: '$(tr '\r' '\n' <"$dir/tty" | head -2 | tr '\n' ' ')', pipe: '$(head -c 100 "$dir/notty")'"
	fi
done
[ $progress = 1 ] && pass convert.progress ||
	fail convert.progress "no progress line on a terminal, or one elsewhere (see above)"

# FILE - : the trace on standard input, read once for the whole conversion.
if st-format convert - --to fio-iolog <"$dir/big.sttrace" | cmp -s - "$dir/big2.fio-iolog" &&
	cat "$dir/big.sttrace" | st-format convert - --to fio-iolog | cmp -s - "$dir/big2.fio-iolog"; then
	pass convert.stdin
else
	fail convert.stdin "convert - differs from convert FILE"
fi
