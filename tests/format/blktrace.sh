# Shared by the blktrace tests: source it after ../lib.sh and
# ../record/common.sh (AWK_HEX).

# The block events of a trace, one a line, in the fields blktrace keeps
# (a split's remaining sector too). blktrace has one FLUSH bit for a flush
# operation and a preflush flag, so a flush's preflush flag is dropped, and
# opf is kept up to ST_F_RAHEAD, the flags the blktrace categories hold.
# Sorted: events of one nanosecond on two CPUs may come in either order.
BLOCK_TYPES=block_bio_queue,block_bio_backmerge,block_bio_frontmerge,block_split,block_getrq,\
block_rq_insert,block_rq_issue,block_rq_requeue,block_rq_complete,block_bio_complete,block_rq_merge
block_events() {
	st-format cat --csv -t "$BLOCK_TYPES" "$1" | awk -F, "$AWK_HEX"'
		NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		{
			opf = hex($c["opf"]) % 8192
			if (opf % 256 == 2 && int(opf / 2048) % 2 == 1) opf -= 2048
			print $c["type"], $c["ts"], $c["cpu"], $c["tid"], $c["sector"], $c["dev"],
				$c["nr_sector"], opf, $c["error"], ("new_sector" in c ? $c["new_sector"] : "")
		}' | sort
}

# bt_export TRACE PREFIX: `convert --to blktrace` of TRACE into PREFIX.blktrace.*
# (PREFIX named after the trace's device, as blkparse names its statistics
# after its input), then blkparse's text of them in PREFIX.full.txt (its
# "Input file" chatter left out) and its event lines alone in
# PREFIX.events.txt. Fails, saying why, when convert fails, blkparse
# complains or skips events.
bt_export() {
	local trace=$1 bt=$2
	st-format convert "$trace" --to blktrace -o "$bt" 2>"$bt.err" ||
		{ echo "convert $trace: $(cat "$bt.err")"; return 1; }
	LC_ALL=C blkparse -i "$bt" 2>"$bt.err" | grep -v '^Input file' >"$bt.full.txt"
	sed '/^CPU[0-9]* (/,$d' "$bt.full.txt" >"$bt.events.txt"
	if grep -v '^Input file .* added$' "$bt.err" | grep -q . ||
		! grep -q '^Skips: 0 forward' "$bt.full.txt"; then
		echo "blkparse on $bt: $(head -3 "$bt.err") $(grep '^Skips' "$bt.full.txt")"
		return 1
	fi
}

# bt_actions PREFIX ACTION: how many ACTION (Q, D, C, ...) lines blkparse printed.
bt_actions() {
	awk -v a="$2" '$6 == a' "$1.events.txt" | wc -l
}

# bt_same_text TRACE PREFIX: `convert --to blkparse` prints exactly
# blkparse's text of the exported files, statistics included.
bt_same_text() {
	st-format convert "$1" --to blkparse -o "$2.ours.txt" &&
		cmp -s "$2.ours.txt" "$2.full.txt" ||
		{ diff "$2.full.txt" "$2.ours.txt" | head -5; return 1; }
}

# bt_btt_agrees TRACE PREFIX: btt's Q2C and D2C counts and averages on the
# exported files equal st-analyze's on TRACE. Tolerance, derived: both
# average the same nanosecond timestamps over the same I/Os; btt prints
# seconds to 9 decimals, st-analyze microseconds to 3, each rounded once:
# the two averages may differ by 1 ns, the counts not at all. Only for
# traces with one bio per request: btt's D2C is per request, st-analyze's
# per I/O.
bt_btt_agrees() {
	local trace=$1 bt=$2 dir stage bn bavg an aavg ok=0
	dir=$(dirname "$bt")
	# btt reads blkparse's merged binary dump, and writes its .dat files
	# where it runs; its "ALL" table has NAME MIN AVG MAX N, in seconds.
	blkparse -q -i "$bt" -d "$bt.bin" -O >/dev/null 2>&1
	(cd "$dir" && btt -i "$bt.bin" >"$bt.btt.txt" 2>&1)
	st-analyze --by dev --csv "$trace" >"$bt.analyze.csv" 2>/dev/null
	for stage in Q2C D2C; do
		read -r bn bavg < <(awk -v s="$stage" '$1 == s { print $5, $3 * 1e6; exit }' "$bt.btt.txt")
		read -r an aavg < <(awk -F, -v s="$stage" '$7 == s { print $8, $10; exit }' "$bt.analyze.csv")
		echo "$stage: btt n=$bn avg=${bavg}us, st-analyze n=$an avg=${aavg}us"
		if [ -z "$bn" ] || [ "$bn" != "$an" ] ||
			! awk -v a="$aavg" -v b="$bavg" 'BEGIN { d = a - b; exit !(d <= 0.0011 && d >= -0.0011) }'; then
			ok=1
		fi
	done
	return $ok
}

# bt_result NAME OK WHY: pass NAME when OK is 1, else fail it saying WHY.
bt_result() {
	if [ "$2" = 1 ]; then pass "$1"; else fail "$1" "$3"; fi
}

# bt_setup TESTS RECORD: where BPF, the blktrace tools or fio are missing,
# every test of TESTS is skipped and the script exits; else a scratch
# directory $dir, a raw loop device $raw, and $fsdev with ext4 on $dir/mnt
# (RECORD names the failure when that cannot be made).
bt_setup() {
	local why t
	why=$(bpf_unavailable)
	command -v blkparse >/dev/null && command -v btt >/dev/null && command -v iowatcher >/dev/null ||
		why=${why:-"blktrace tools not installed"}
	command -v fio >/dev/null || why=${why:-"fio not installed"}
	if [ -n "$why" ]; then
		for t in $1; do skip "$t" "$why"; done
		exit 0
	fi
	st_tmpdir dir
	st_loopdev raw 64
	st_loopdev fsdev 128
	rec_ext4 "$2" "$fsdev" "$dir/mnt"
}
