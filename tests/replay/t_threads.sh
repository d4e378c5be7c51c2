#!/usr/bin/env bash
# --threads at block level: two fio jobs, one pinned to each CPU, recorded on
# loop device A; replayed onto loop device B (afap, --qd 8: the device's 128
# requests never run out, so no bio is refused under REQ_NOWAIT and queued
# again by an io-wq worker). Recording the replay shows as many submitting
# threads (the task that queued each bio) as asked, each submitting exactly
# the requests (op, offset, size) of one recorded CPU in their recorded
# order, and the whole multiset is still fio's own iolog. With one thread,
# that thread submits every request in recorded order. The default is one
# thread per recorded CPU.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"
. "$(dirname "$0")/common.sh"
rp_require replay_threads
rec_require_bpf replay_threads
if [ "$(nproc)" -lt 2 ]; then
	skip replay_threads "one CPU: the recording cannot spread over two"
	exit 0
fi

st_tmpdir T
st_loopdev A 64
st_loopdev B 64
st_nomerges "$A" "$B"

# One iolog per job: two jobs appending to one file can lose lines.
check replay_threads_record st-record -o "$T/run.sttrace" -e block -d "$A" -- \
	fio --filename="$A" --direct=1 --ioengine=io_uring --iodepth=4 --rw=randrw --bs=4k \
	--number_ios=400 --size=48M --randrepeat=1 --output="$T/fio.out" \
	--name=j0 --cpus_allowed=0 --write_iolog="$T/iolog0" --name=j1 --cpus_allowed=1 --write_iolog="$T/iolog1"
cat "$T/iolog0" "$T/iolog1" | awk '$3 == "read" || $3 == "write" { print ($3 == "read" ? "R" : "W"), $4, $5 }' | sort >"$T/fio"

# groups: one line per group of "GROUP R|W offset bytes" lines on stdin: the
# checksum of the group's lines in their order.
groups() {
	rm -rf "$T/g" && mkdir "$T/g"
	awk -v d="$T/g" '{ print $2, $3, $4 > (d "/" $1) }'
	for f in "$T/g"/*; do md5sum <"$f" | cut -d' ' -f1; done | sort
}
# by_cpu FILE DEV [one]: the requests issued on DEV in their order, grouped by
# the CPU they were issued on (the recording's, which --threads splits by),
# or all in one group.
by_cpu() {
	rec_issued "$1" cpu dev opf sector bytes |
		awk "$AWK_HEX"' $2 == "'"$2"'" { print ("'"${3:-}"'" == "one" ? "one" : $1), (hex($3) % 256 ? "W" : "R"), $4 * 512, $5 }' | groups
}
# by_submitter FILE DEV: the bios queued on DEV in their order, grouped by the
# task that queued them: the replay thread that submitted them. (A request's
# issue can run in another task: whichever runs the device's queue.)
by_submitter() {
	rec_rows "$1" block_bio_queue tid dev opf sector nr_sector |
		awk "$AWK_HEX"' $2 == "'"$2"'" { print $1, (hex($3) % 256 ? "W" : "R"), $4 * 512, $5 * 512 }' | groups
}
# all FILE DEV: every request on DEV, "R|W offset bytes", sorted.
all() {
	rec_issued "$1" dev opf sector bytes |
		awk "$AWK_HEX"' $1 == "'"$2"'" { print (hex($2) % 256 ? "W" : "R"), $3 * 512, $4 }' | sort
}

a=$(rec_devno "$A") b=$(rec_devno "$B")
by_cpu "$T/run.sttrace" "$a" >"$T/cpus"
by_cpu "$T/run.sttrace" "$a" one >"$T/one"
if [ "$(wc -l <"$T/fio")" -eq 800 ] && [ "$(wc -l <"$T/cpus")" -eq 2 ] && all "$T/run.sttrace" "$a" | cmp -s - "$T/fio"; then
	pass replay_threads_recorded_two_cpus
else
	fail replay_threads_recorded_two_cpus "fio logged $(wc -l <"$T/fio") I/Os, the recording has $(wc -l <"$T/cpus") CPUs"
fi

# replay NAME ARGS...: record st-replay ARGS onto B; then the per-thread groups
# equal the per-CPU groups of the recording, and the multiset is fio's.
replay() {
	local name=$1 want=$2
	shift 2
	st-record -o "$T/$name.sttrace" -e block -d "$B" -- st-replay "$T/run.sttrace" --target "$B" \
		--allow-write --timing afap --qd 8 --report "$T/$name.json" "$@" >/dev/null 2>"$T/err" ||
		{ fail "$name" "replay failed: $(tail -2 "$T/err")"; return; }
	by_submitter "$T/$name.sttrace" "$b" >"$T/$name.tids"
	if [ "$want" = cpus ] && cmp -s "$T/cpus" "$T/$name.tids" && all "$T/$name.sttrace" "$b" | cmp -s - "$T/fio"; then
		pass "$name"
	elif [ "$want" = 1 ] && cmp -s "$T/one" "$T/$name.tids" && all "$T/$name.sttrace" "$b" | cmp -s - "$T/fio"; then
		pass "$name"
	else
		fail "$name" "$(wc -l <"$T/$name.tids") submitting threads (want $want), $(all "$T/$name.sttrace" "$b" | wc -l) requests (fio: 800)"
	fi
}
replay replay_threads_2 cpus --threads 2
replay replay_threads_1 1 --threads 1
replay replay_threads_default cpus
got=$(rp_json "$T/replay_threads_default.json" '[.threads, .completed] | join(" ")')
[ "$got" = "2 800" ] && pass replay_threads_report || fail replay_threads_report "threads completed: $got, want 2 800"
