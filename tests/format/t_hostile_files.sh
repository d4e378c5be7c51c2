#!/usr/bin/env bash
# Every command on every hostile file: the crafted traces of
# tests/format/hostile/ (valid checksums, absurd contents: a timestamp near
# 2^64, an offset of 1 PiB, a gap in the chunk sequence), the fuzzer's corpus
# and files made here (text, empty, a header alone, random bytes, traces cut
# short and with flipped bytes) and /dev/zero. Each run is bounded: 20 s (timeout), 2 GiB of
# address space (ulimit -v) and 64 MiB per file it writes (ulimit -f: a
# larger write is SIGXFSZ); the outputs of one run together stay under
# 64 MiB. A run fails on a signal (a crash, SIGXFSZ), a hang (the timeout),
# an exit status other than 0, 1 or 2, or more output than that.
# One result per command, naming each file it failed on.
. "$(dirname "$0")/../lib.sh"

st_tmpdir T
mkdir "$T/in"
cp "$(dirname "$0")"/hostile/*.sttrace "$T/in/"
for f in "$(dirname "$0")"/../fuzz/corpus/*; do
	[ -f "$f" ] && cp "$f" "$T/in/corpus-$(basename "$f")"
done
st-format synth -o "$T/good.sttrace" --ios 300 --seed 4 >/dev/null || { fail hostile.synth "synth failed"; exit 1; }
size=$(stat -c %s "$T/good.sttrace")
for _ in $(seq 200); do echo "this is not a trace, just text"; done >"$T/in/text"
: >"$T/in/empty"
head -c 32 "$T/good.sttrace" >"$T/in/header-only"
awk 'BEGIN { srand(11); for (i = 0; i < 65536; i++) printf "%c", int(rand() * 256) }' >"$T/in/garbage"
head -c $((size / 3)) "$T/good.sttrace" >"$T/in/cut-third"
head -c $((size * 2 / 3)) "$T/good.sttrace" >"$T/in/cut-two-thirds"
# a byte flipped in each eighth of the trace (header, chunks, index, trailer)
for i in $(seq 0 7); do
	off=$((i * size / 8 + 17))
	cp "$T/good.sttrace" "$T/in/flip-$off"
	printf '\xa5' | dd of="$T/in/flip-$off" bs=1 seek="$off" conv=notrunc status=none
done
truncate -s 64M "$T/target.img"
mkdir "$T/replay"

# The commands; @IN is the file, @OUT an output path in a directory of the run's own.
commands=(
	"st-format info @IN"
	"st-format info --json @IN"
	"st-format verify @IN"
	"st-format cat @IN"
	"st-format cat --json @IN"
	"st-format slice @IN -o @OUT --from 0 --to 1"
	"st-format recover @IN -o @OUT"
	"st-format anonymize @IN -o @OUT"
	"st-format convert @IN --to blktrace -o @OUT"
	"st-format convert @IN --to blkparse -o @OUT"
	"st-format convert @IN --to fio-iolog -o @OUT"
	"st-format convert @IN --to csv -o @OUT"
	"st-format convert @IN --to csv --records -o @OUT"
	"st-format convert @IN --to jsonl -o @OUT"
	"st-format convert @IN --to perfetto -o @OUT"
	"st-analyze @IN"
	"st-analyze --csv @IN"
	"st-analyze --quantile 99.9 @IN"
	"st-analyze --heatmap lat @IN"
	"st-analyze --heatmap pos @IN"
	"st-analyze --interval 1s --csv @IN"
	"st-analyze --gnuplot @OUT @IN"
	"st-analyze --save-summary @OUT @IN"
	"st-analyze diff @IN @IN"
	"st-analyze merge @IN"
)
if [ -x "$ST_BUILD/st-replay" ]; then
	commands+=("st-replay @IN --level block --target $T/target.img --wrap --allow-write --timing afap"
		"st-replay @IN --level file --target $T/replay --timing afap")
fi

for cmd in "${commands[@]}"; do
	bad=""
	for f in "$T"/in/* /dev/zero; do
		rm -rf "$T/out"
		mkdir "$T/out"
		run=${cmd//@IN/$f}
		run=${run//@OUT/$T/out/o}
		# shellcheck disable=SC2086
		(ulimit -v 2097152 -f 65536; exec timeout 20 $run) >"$T/out/stdout" 2>"$T/out/stderr"
		rc=$?
		kb=$(du -sk "$T/out" | cut -f1)
		if [ $rc -gt 2 ]; then
			bad="$bad $(basename "$f"): exit $rc$([ $rc = 124 ] && echo ' (timeout)')$([ $rc = 153 ] && echo ' (file size limit)');"
		elif [ "$kb" -gt 65536 ]; then
			bad="$bad $(basename "$f"): $kb kB of output;"
		fi
	done
	name=hostile.$(echo "${cmd//@IN/}" | sed 's/@OUT//g; s/ --target [^ ]*//; s/ -o//; s/  */ /g; s/ $//; s/[^a-zA-Z0-9.]\{1,\}/_/g')
	[ -z "$bad" ] && pass "$name" || fail "$name" "$bad"
done
