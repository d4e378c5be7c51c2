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
