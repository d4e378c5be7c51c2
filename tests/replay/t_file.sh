#!/usr/bin/env bash
# File level: two fio jobs (two processes, one file each, O_DIRECT pread/
# pwrite) recorded on ext4 over loop device A, replayed into a directory on
# ext4 over loop device B. Recording the replay shows each file's direct I/O
# (iomap_dio_rw_begin: position, bytes) in exactly the order fio logged for
# its job, so each thread kept its order; the blocks holding the replay's
# write pattern are exactly the blocks fio wrote (the files start as zeros).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"
. "$(dirname "$0")/common.sh"
rp_require replay_file
rec_require_bpf replay_file

st_tmpdir T
st_loopdev A 128
st_loopdev B 128
rec_ext4 replay_file "$A" "$T/a"
rec_ext4 replay_file "$B" "$T/b"
mkdir "$T/b/target"

GLOBAL=(--direct=1 --ioengine=psync --bs=4k --size=8M --rw=randrw --number_ios=300 --randrepeat=1)
fio "${GLOBAL[@]}" --create_only=1 --name=j0 --filename="$T/a/f0" --name=j1 --filename="$T/a/f1" --output=/dev/null
check replay_file_record st-record -o "$T/run.sttrace" -e dio -- fio "${GLOBAL[@]}" \
	--name=j0 --filename="$T/a/f0" --write_iolog="$T/log0" \
	--name=j1 --filename="$T/a/f1" --write_iolog="$T/log1" --output="$T/fio.out"

# Without --allow-write nothing is created.
st-replay "$T/run.sttrace" --target "$T/b/target" --timing afap >/dev/null 2>"$T/err"
if [ $? -eq 1 ] && grep -q -- "--allow-write" "$T/err" && [ -z "$(ls "$T/b/target")" ]; then
	pass replay_file_refuses_writes
else
	fail replay_file_refuses_writes "$(cat "$T/err"; ls "$T/b/target" | head -3)"
fi

check replay_file_run st-record -o "$T/replay.sttrace" -e dio -- \
	st-replay "$T/run.sttrace" --target "$T/b/target" --allow-write --timing afap --report "$T/r.json"

for j in 0 1; do
	f=$(ls "$T/b/target/"*-f$j 2>/dev/null)
	if [ ! -f "$f" ]; then
		fail replay_file_order_$j "no replayed file for f$j in $(ls "$T/b/target" | tr '\n' ' ')"
		continue
	fi
	# fio's job, in its order: "R|W offset bytes" (iolog v3: ts file action offset len)
	awk '$3 == "read" || $3 == "write" { print ($3 == "read" ? "R" : "W"), $4, $5 }' "$T/log$j" >"$T/want$j"
	# The replay's, from the kernel: ki_flags IOCB_WRITE (1 << 18) tells the op. An
	# io_uring attempt with IOCB_NOWAIT (1 << 3) that could not go on without
	# blocking is tried again at once by an io-wq worker: the I/O is the retry.
	ino=$(stat -c %i "$f")
	rec_rows "$T/replay.sttrace" iomap_dio_rw_begin ino pos count flags |
		awk "$AWK_HEX"' $1 == '"$ino"' { f = hex($4); n++
			op[n] = int(f / 262144) % 2 ? "W" : "R"; pos[n] = $2; len[n] = $3; nowait[n] = int(f / 8) % 2 }
		END { for (k = 1; k <= n; k++)
			if (!(nowait[k] && k < n && !nowait[k + 1] && pos[k + 1] == pos[k] && len[k + 1] == len[k]))
				print op[k], pos[k], len[k] }' >"$T/got$j"
	if [ "$(wc -l <"$T/want$j")" -eq 300 ] && cmp -s "$T/want$j" "$T/got$j"; then
		pass replay_file_order_$j
	else
		fail replay_file_order_$j "fio logged $(wc -l <"$T/want$j"), replay did $(wc -l <"$T/got$j"); diff: $(diff "$T/want$j" "$T/got$j" | head -4 | tr '\n' ' ')"
	fi
	# The 4 KiB blocks the replay wrote (its pattern) against the blocks fio wrote.
	awk '$3 == "write" { print $4 }' "$T/log$j" | sort -n -u >"$T/wrote$j"
	od -An -v -tx1 -w4096 "$f" | awk '/[1-9a-f]/ { print (NR - 1) * 4096 }' >"$T/pattern$j"
	if cmp -s "$T/wrote$j" "$T/pattern$j"; then
		pass replay_file_writes_$j
	else
		fail replay_file_writes_$j "fio wrote $(wc -l <"$T/wrote$j") blocks, the file holds the pattern in $(wc -l <"$T/pattern$j")"
	fi
done

got=$(rp_json "$T/r.json" '[.level, .failed] | join(" ")')
[ "$got" = "file 0" ] && pass replay_file_report || fail replay_file_report "level failed: $got"
