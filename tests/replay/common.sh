# Shared by the st-replay tests: source it after ../lib.sh (and ../record/common.sh
# for rp_requests).

# rp_require NAME: one SKIP and exit when st-replay was not built (no liburing or json-c).
rp_require() {
	if [ ! -x "$ST_BUILD/st-replay" ]; then
		skip "$1" "st-replay not built (no liburing or json-c)"
		exit 0
	fi
}

# rp_requests FILE DEV: "R|W|F|D offset bytes" of every request issued on DEV
# (major:minor) in FILE, sorted: the multiset a replay must reproduce.
rp_requests() {
	rec_issued "$1" dev sector bytes opf nr_sector |
		awk "$AWK_HEX"' $1 == "'"$2"'" { op = hex($4) % 256
			if (op == 0) print "R", $2 * 512, $3
			else if (op == 1) print "W", $2 * 512, $3
			else if (op == 2) print "F", 0, 0
			else print "D", $2 * 512, $5 * 512 }' | sort
}

# rp_json FILE EXPR: a value of st-replay's --report JSON.
rp_json() {
	jq -r "$2" "$1"
}

# rp_loop_on VAR FILE: a loop device over FILE (an image or a device), its
# path in $VAR, detached at exit unless detached before (its number may be
# another user's by then: detached only while over the same file).
rp_loop_on() {
	local _dev _back
	_dev=$(losetup --find --show "$2") || { fail rp_loop_on "losetup $2 failed"; exit 1; }
	_back=$(losetup -nO BACK-FILE "$_dev")
	at_exit "[ \"\$(losetup -nO BACK-FILE '$_dev')\" = '$_back' ] && losetup -d '$_dev'"
	printf -v "$1" '%s' "$_dev"
}

# rp_blktrace TRACE R|W BYTES SECTOR...: a trace of one read or write of
# BYTES at each SECTOR of loop0 in turn, each issued (D) and completed (C)
# 8 us later, from struct blk_io_trace (linux/blktrace_api.h) made into
# blktrace's binary file and imported.
rp_blktrace() {
	local trace=$1
	shift
	python3 - "$trace.blktrace.0" "$@" <<'EOF'
import struct, sys
path, op, nbytes, sectors = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
MAGIC = 0x65617400 | 0x07
TC_OP, TC_ISSUE, TC_COMPLETE, TC_FS = 1 if op == "R" else 2, 64, 128, 256
ISSUE, COMPLETE = 7, 8
def rec(seq, time, sector, action):
    return struct.pack("<IIQQIIIIIHH", MAGIC, seq, time, int(sector), nbytes, action, 100, 7 << 20, 0, 0, 0)
with open(path, "wb") as f:
    for i, sector in enumerate(sectors):
        t = 1000 + 10000 * i
        f.write(rec(2 * i + 1, t, sector, ISSUE | (TC_OP | TC_ISSUE | TC_FS) << 16) +
                rec(2 * i + 2, t + 8000, sector, COMPLETE | (TC_OP | TC_COMPLETE | TC_FS) << 16))
EOF
	st-format import-blktrace "$trace.blktrace.0" -o "$trace" >/dev/null
}
