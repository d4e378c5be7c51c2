#!/usr/bin/env bash
# What each selection option replays, on a synthetic trace (st-format synth:
# two devices, requeues, merges, splits, four processes) into a file target:
# the planned counts against the trace's own events read with st-format cat,
# and the default thread counts. Needs no root or BPF.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"
. "$(dirname "$0")/common.sh"
rp_require replay_options

st_tmpdir T
F=$T/s.sttrace
st-format synth -o "$F" --ios 3000 --seed 2 >/dev/null
truncate -s 256M "$T/img"
mkdir "$T/dir"

# planned NAME WANT ARGS...: st-replay F ARGS plans WANT I/Os (and completes them, none failed).
planned() {
	local name=$1 want=$2 got
	shift 2
	if ! st-replay "$F" --timing afap --allow-write --wrap --report "$T/r.json" "$@" >"$T/out" 2>&1; then
		fail "$name" "st-replay $*: $(tail -2 "$T/out")"
		return
	fi
	got=$(rp_json "$T/r.json" '[.planned, .completed, .failed] | join(" ")')
	if [ "$got" = "$want $want 0" ]; then pass "$name"; else fail "$name" "planned completed failed: $got, want $want"; fi
}

rec_rows "$F" block_rq_issue dev pid ts >"$T/issues"
rec_rows "$F" block_rq_requeue dev >"$T/requeues"
rec_rows "$F" block_bio_queue dev pid ts >"$T/bios"
DEV1=$(awk '{ print $1; exit }' "$T/issues")
count() { awk "$2" "$1" | wc -l; }

# Requests: every issue, a requeued request once (from its final issue).
planned replay_options_requests $(($(wc -l <"$T/issues") - $(wc -l <"$T/requeues"))) \
	--level block --target "$T/img"
dev1=$(($(count "$T/issues" "\$1 == \"$DEV1\"") - $(count "$T/requeues" "\$1 == \"$DEV1\"")))
planned replay_options_map "$dev1" --level block --map "$DEV1=$T/img"
other=$(($(wc -l <"$T/issues") - $(wc -l <"$T/requeues") - dev1))
[ "$(rp_json "$T/r.json" .not_replayable)" -eq "$other" ] && pass replay_options_map_unmapped ||
	fail replay_options_map_unmapped "not replayable $(rp_json "$T/r.json" .not_replayable), want $other"
planned replay_options_dev "$dev1" --level block --target "$T/img" --dev "$DEV1"

# Bios as queued, and the selections on them.
planned replay_options_bios "$(wc -l <"$T/bios")" --level block --bios --target "$T/img"
first=$(st-format info "$F" | awk '/^time span/ { print $3 }')
from=$((first + 10000000)) to=$((first + 20000000))
planned replay_options_window "$(count "$T/bios" "\$3 >= $from && \$3 <= $to")" \
	--level block --bios --target "$T/img" --from 10ms --to 20ms
PID=$(awk '{ print $2 }' "$T/bios" | sort | uniq -c | sort -n | awk '{ p = $2 } END { print p }')
planned replay_options_pid "$(count "$T/bios" "\$2 == $PID")" --level block --bios --target "$T/img" --pid "$PID"
planned replay_options_loop $((3 * $(wc -l <"$T/bios"))) --level block --bios --target "$T/img" --loop 3

# One request (--from and --to its issue): its recorded span is its issue to
# its completion (st-format cat), its IOPS one over that, not 0 for 0 s.
# The first request issued, completed and never requeued (a request's
# address is used again after it completes: events in time order).
read -r ISSUE DONE < <(for t in block_rq_issue block_rq_requeue block_rq_complete; do
	rec_rows "$F" "$t" ts rq | sed "s/\$/ $t/"; done | sort -n |
	awk '$3 == "block_rq_issue" && !($2 in at) { at[$2] = $1; next }
		$3 == "block_rq_requeue" { delete at[$2]; next }
		$3 == "block_rq_complete" && ($2 in at) { print at[$2], $1; exit }')
planned replay_options_one "1" --level block --target "$T/img" --from "@$ISSUE" --to "@$ISSUE"
got=$(rp_json "$T/r.json" '.recorded | "\(.span_s * 1e9 | round) \(.iops * .span_s * 1e6 | round)"')
[ "$got" = "$((DONE - ISSUE)) 1000000" ] && pass replay_options_one_rate ||
	fail replay_options_one_rate "recorded span ns, IOPS x span x 1e6: $got, want $((DONE - ISSUE)) 1000000"

# File level: every data syscall planned or counted as not replayable.
calls=$(($(rec_count "$F" sys_enter_pread64) + $(rec_count "$F" sys_enter_pwrite64) + $(rec_count "$F" sys_enter_fsync)))
st-replay "$F" --timing afap --allow-write --target "$T/dir" --report "$T/f.json" >"$T/out" 2>&1
got=$(rp_json "$T/f.json" '[.level, .planned + .not_replayable, .failed] | join(" ")')
[ "$got" = "file $calls 0" ] && pass replay_options_file_level || fail replay_options_file_level "level calls failed: $got, want file $calls 0"

# Threads by default: one per recorded thread (file level) or CPU (block level),
# at most the CPUs online; --threads asks for more.
min() { echo $(($1 < $2 ? $1 : $2)); }
tids=$(for t in sys_enter_pread64 sys_enter_pwrite64 sys_enter_fsync; do rec_rows "$F" "$t" tid; done | sort -u | wc -l)
cpus=$(rec_rows "$F" block_rq_issue cpu | sort -u | wc -l)
st-replay "$F" --timing afap --allow-write --wrap --level block --target "$T/img" --report "$T/b.json" >/dev/null 2>&1
st-replay "$F" --timing afap --allow-write --target "$T/dir" --threads 3 --report "$T/f3.json" >/dev/null 2>&1
got="$(rp_json "$T/f.json" .threads) $(rp_json "$T/b.json" .threads) $(rp_json "$T/f3.json" .threads)"
want="$(min "$tids" "$(nproc)") $(min "$cpus" "$(nproc)") $(min "$tids" 3)"
[ "$got" = "$want" ] && pass replay_options_threads ||
	fail replay_options_threads "threads file, block, file --threads 3: $got, want $want ($tids recorded threads, $cpus CPUs, $(nproc) online)"

# FILE "-": the trace on standard input (through a pipe, so it is spooled).
cat "$F" | st-replay - --level block --bios --target "$T/img" --allow-write --wrap --timing afap \
	--report "$T/stdin.json" >/dev/null 2>&1
got=$(rp_json "$T/stdin.json" .completed)
[ "$got" = "$(wc -l <"$T/bios")" ] && pass replay_options_stdin || fail replay_options_stdin "completed $got of $(wc -l <"$T/bios")"
