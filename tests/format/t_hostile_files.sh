#!/usr/bin/env bash
# Every read-only command and report on every hostile file: the crafted
# traces of tests/format/hostile/ (valid checksums, absurd contents), the
# fuzzer's corpus, files made here (text, empty, a header alone, random
# bytes, traces cut short and with flipped bytes), /dev/zero, and a set
# re-sealed by craft-trace from a synthetic trace (timestamps 0, 2^64-1 and
# backwards, CPU 0xffffffff and random, every number field at its maximum
# or random, strings full without a NUL and with control bytes, unknown
# types, chunk headers that lie about counts or span 0..2^64-1, events
# chunks swapped and duplicated, index counts that lie, 1 MiB metadata
# values, 100 k metadata keys).
#
# Each run is bounded: 20 s (timeout), 2 GiB of address space (ulimit -v;
# ASan: its RSS limit instead) and 64 MiB per file it writes (ulimit -f: a
# larger write is SIGXFSZ); the outputs of one run together stay under 64
# MiB. A run fails on a signal (a crash, SIGXFSZ), a hang (the timeout), an
# exit status other than 0, 1 or 2, more output than that, or a sanitizer's report. Each runs in a
# directory of its own, so a script a report writes stays there.
# One result per command, naming each file it failed on.
#
# ST_HOSTILE_ASAN=1 runs the ASan+UBSan programs of build-asan/ instead, and
# ST_HOSTILE_FULL=1 adds every other report flag and 250 k lost entries
# (craft-trace): `make fuzz-hostile` runs both ways with both. Run time on
# the shared 2-core VM at a load average of 7-12 (2026-12-07): in `make
# test` (26 commands and st-replay's two on 64 files) 4 min 10 s, 46 s of
# CPU; make fuzz-hostile (43 commands on 65 files) under ASan 13 min 52 s,
# and about as long plain (on main's code it had 8 timeouts: slice twice,
# recover, anonymize on the 250 k lost entries and the 100 k metadata keys;
# and convert --to blkparse crashed on CPU 0xffffffff).
. "$(dirname "$0")/../lib.sh"

bin=$ST_BUILD
if [ "${ST_HOSTILE_ASAN:-0}" = 1 ]; then
	bin=$(dirname "$ST_BUILD")/build-asan
	[ -x "$bin/st-format" ] && [ -x "$bin/st-analyze" ] ||
		{ skip hostile.asan "no ASan+UBSan st-format and st-analyze in $bin"; exit 0; }
	export ASAN_OPTIONS=hard_rss_limit_mb=2048:allocator_may_return_null=1:detect_leaks=1
	export UBSAN_OPTIONS=print_stacktrace=1
fi
# in memory: the commands that write a trace fsync it
TMPDIR=/dev/shm st_tmpdir T
mkdir "$T/in"
H=$(dirname "$0")/hostile
cp "$H"/*.sttrace "$H"/*.sum "$T/in/"
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
crafts=(ts-zero ts-max ts-backwards cpu-max cpu-random fields-max fields-random strings-unterminated
	unknown-types hdr-events-plus hdr-range-wide swap-chunks dup-chunks typecount-lie meta-huge)
[ "${ST_HOSTILE_FULL:-0}" = 1 ] && crafts+=("lost 250000")
for c in "${crafts[@]}"; do
	# shellcheck disable=SC2086
	"$ST_BUILD/tests/craft-trace" "$T/good.sttrace" "$T/in/craft-${c// /-}" $c ||
		fail "hostile.craft.${c// /-}" "craft-trace failed"
done
truncate -s 64M "$T/target.img"
mkdir "$T/replay"

# The commands; @IN is the file, @OUT an output path in the run's own directory.
commands=(
	"st-format info --chunks @IN"
	"st-format info --json --chunks @IN"
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
	"st-analyze --sizes --seek --hist --depth @IN"
	"st-analyze --gnuplot @OUT @IN"
	"st-analyze --save-summary @OUT @IN"
	"st-analyze diff @IN @IN"
	"st-analyze merge @IN"
)
# and every other report flag, with make fuzz-hostile
[ "${ST_HOSTILE_FULL:-0}" = 1 ] && commands+=(
	"st-format cat --csv @IN"
	"st-format slice @IN -o @OUT"
	"st-format convert @IN --to jsonl --records -o @OUT"
	"st-analyze --quantile 50 --stage D2C --top 5 --csv @IN"
	"st-analyze --heatmap pos --heatmap-rows 50 @IN"
	"st-analyze --interval 1ms @IN"
	"st-analyze --top-by comm --top-by file:bytes --top-by pid:tail --top-by cgroup @IN"
	"st-analyze --why @IN"
	"st-analyze --by file --hist @IN"
	"st-analyze --by comm --sizes @IN"
	"st-analyze --by pid --csv @IN"
	"st-analyze --by cgroup @IN"
	"st-analyze --by host @IN"
	"st-analyze --by cache @IN"
	"st-analyze --span rq=block_rq_issue..block_rq_complete:sector @IN"
	"st-analyze --from 0.001 --to 0.01 --quantile 90 @IN"
	"st-analyze --html @OUT @IN"
)
if [ -x "$bin/st-replay" ] && [ "${ST_HOSTILE_ASAN:-0}" != 1 ]; then
	commands+=("st-replay @IN --level block --target $T/target.img --wrap --allow-write --timing afap"
		"st-replay @IN --level file --target $T/replay --timing afap")
fi

vlimit=2097152
[ "${ST_HOSTILE_ASAN:-0}" = 1 ] && vlimit=unlimited
for cmd in "${commands[@]}"; do
	bad=""
	for f in "$T"/in/* /dev/zero; do
		rm -rf "$T/out"
		mkdir "$T/out"
		run=${cmd//@IN/$f}
		run=${run//@OUT/$T/out/o}
		# shellcheck disable=SC2086
		(cd "$T/out" && ulimit -v $vlimit -f 65536 && exec timeout 20 "$bin/"$run) \
			>"$T/out/stdout" 2>"$T/out/stderr"
		rc=$?
		kb=$(du -sk "$T/out" | cut -f1)
		if [ $rc -gt 2 ]; then
			bad="$bad $(basename "$f"): exit $rc$([ $rc = 124 ] && echo ' (timeout)')$([ $rc = 153 ] && echo ' (file size limit)');"
		elif [ "$kb" -gt 65536 ]; then
			bad="$bad $(basename "$f"): $kb kB of output;"
		fi
		if grep -q 'runtime error:\|Sanitizer' "$T/out/stderr"; then
			bad="$bad $(basename "$f"): $(grep -m1 'runtime error:\|Sanitizer' "$T/out/stderr");"
		fi
	done
	name=hostile.$(echo "${cmd//@IN/}" | sed 's/@OUT//g; s/ --target [^ ]*//; s/ -o//; s/  */ /g; s/ $//; s/[^a-zA-Z0-9.]\{1,\}/_/g')
	[ "${ST_HOSTILE_ASAN:-0}" = 1 ] && name=$name.asan
	[ -z "$bad" ] && pass "$name" || fail "$name" "$bad"
done
