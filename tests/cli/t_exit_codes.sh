#!/usr/bin/env bash
# One table of exit statuses, kept by every tool and written the same in the
# README and each man page:
#   0 success, 1 a failed run (an input that cannot be read or is not a
#   trace, a damaged file, a failed write), 2 bad usage, 3 st-analyze diff's
#   regression, 130 st-replay interrupted; st-record -- CMD returns CMD's.
# Each documented code of each tool is provoked once here.
. "$(dirname "$0")/../lib.sh"
st_tmpdir T
ROOT=$(dirname "$0")/../..

st-format synth -o "$T/a.st" --ios 2000 --devices 1 --seed 4 >/dev/null || fail exit.synth "synth failed"
st-format synth -o "$T/slow.st" --ios 20000 --seed 2 --slow-factor 1.5 >/dev/null &&
	st-format synth -o "$T/base.st" --ios 20000 --seed 1 >/dev/null || fail exit.synth "synth failed"
echo "not a trace" >"$T/text"
cp "$T/a.st" "$T/damaged.st"
printf 'XXXXXXXX' | dd of="$T/damaged.st" bs=1 seek=$(($(stat -c %s "$T/a.st") / 2)) conv=notrunc status=none

# code NAME WANT CMD...: CMD exits WANT (stdout and stderr kept in $T/out, $T/err)
code() {
	local name=$1 want=$2 rc
	shift 2
	timeout 60 "$@" >"$T/out" 2>"$T/err"
	rc=$?
	[ "$rc" = "$want" ] && pass "exit.$name" || fail "exit.$name" "exit $rc, want $want: $(head -1 "$T/err")"
}

code format.ok 0 st-format info "$T/a.st"
code format.not_a_trace 1 st-format info "$T/text"
code format.missing 1 st-format info "$T/none.st"
code format.damaged 1 st-format verify "$T/damaged.st"
code format.write 1 st-format slice "$T/a.st" -o "$T/no/dir/out.st"
code format.usage 2 st-format info --bogus "$T/a.st"

code analyze.ok 0 st-analyze "$T/a.st"
code analyze.not_a_trace 1 st-analyze "$T/text"
code analyze.missing 1 st-analyze "$T/none.st"
code analyze.not_a_summary 1 st-analyze merge "$T/text"
code analyze.write 1 st-analyze "$T/a.st" --save-summary "$T/no/dir/s.sum"
code analyze.usage 2 st-analyze --bogus "$T/a.st"
code analyze.diff_same 0 st-analyze diff "$T/base.st" "$T/base.st"
code analyze.diff_regressed 3 st-analyze diff "$T/base.st" "$T/slow.st"
code analyze.diff_not_a_trace 1 st-analyze diff "$T/base.st" "$T/text"
code analyze.diff_usage 2 st-analyze diff "$T/base.st"

if [ -x "$ST_BUILD/st-replay" ]; then
	truncate -s 64M "$T/target"
	code replay.ok 0 st-replay "$T/a.st" --level block --target "$T/target" --wrap --allow-write --timing afap
	code replay.not_a_trace 1 st-replay "$T/text" --level block --target "$T/target"
	code replay.refused 1 st-replay "$T/a.st" --level block --target "$T/target" --timing afap
	code replay.usage 2 st-replay "$T/a.st" --bogus
	st-replay "$T/a.st" --level block --target "$T/target" --wrap --allow-write --timing scale=100000 \
		>"$T/out" 2>&1 &
	pid=$!
	at_exit "kill -KILL $pid"
	sleep 1
	kill -INT "$pid"
	wait "$pid"
	rc=$?
	[ $rc = 130 ] && pass exit.replay.interrupted || fail exit.replay.interrupted "exit $rc, want 130"
else
	skip exit.replay "st-replay not built"
fi

if [ -x "$ST_BUILD/st-record" ]; then
	code record.usage 2 st-record --bogus
	code record.write 1 st-record -o "$T/no/dir/r.st" -t 0.1
	why=$(bpf_unavailable)
	if [ -z "$why" ]; then
		code record.ok 0 st-record -o "$T/r.st" -e block -t 0.2
		code record.command 7 st-record -o "$T/c.st" -e block -- sh -c 'exit 7'
	else
		skip exit.record.ok "$why"
	fi
else
	skip exit.record "st-record not built"
fi

# the table as the README and each man page write it
bad=""
grep -q '^| 1 | a failed run' "$ROOT/README.md" && grep -q '^| 2 | bad usage' "$ROOT/README.md" &&
	grep -q '^| 3 | `st-analyze diff`' "$ROOT/README.md" || bad+="README.md; "
for man in record/st-record.8 format/st-format/st-format.1 replay/st-replay.1 analyze/st-analyze/st-analyze.1; do
	sed -n '/^\.SH EXIT STATUS/,/^\.SH /p' "$ROOT/$man" | tr '\n' ' ' >"$T/man"
	grep -q "0 success" "$T/man" || grep -q "0 replayed" "$T/man" || bad+="$man: 0; "
	grep -q "1 a failed run" "$T/man" || bad+="$man: 1; "
	grep -q "2 bad usage" "$T/man" || bad+="$man: 2; "
	grep -q "3" "$T/man" || bad+="$man: 3; "
done
[ -z "$bad" ] && pass exit.documented || fail exit.documented "$bad"
