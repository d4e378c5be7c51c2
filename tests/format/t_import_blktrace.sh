#!/usr/bin/env bash
# st-format import-blktrace on blktrace files built here byte by byte from
# struct blk_io_trace as linux/blktrace_api.h defines it (python3 struct;
# nothing from sttrace), two CPUs, little- and big-endian:
#   CPU 0: PROCESS notify (pid 100 "writer"); a write queued at sector 0
#          (Q 1000 ns), its request (G 1500), a second write back-merged
#          into it at sector 8 (Q 2000, M 2100), the request of 16 sectors
#          inserted (I 3000) and issued (D 4000); a read at sector 100
#          (Q 5000, G 5200, D 6000)
#   CPU 1: the read completes (C 9000), the write request completes (C 10000)
# Known stages: writes Q2C 9 and 8 us (avg 8.5), D2C 6 us each; the read
# Q2C 4 us, D2C 3 us; the process name "writer" for pid 100.
# A request merged into another (make_trace ... rqmerge): writes at sectors 0
# and 8, each its own request (Q G I), the second merged into the first (M
# with the FS category, as the kernel's blktrace writes block_rq_merge),
# which is issued with both (D 3000) and completes (C 5000): two writes,
# Q2C 4 and 3 us, one merge, none incomplete.
# Truncated and garbage files give one line naming the file, exit 1.
. "$(dirname "$0")/../lib.sh"

st_tmpdir dir
make_trace() { # make_trace ENDIAN('<' or '>') PREFIX [rqmerge]
	python3 - "$1" "$2" "${3:-}" <<'EOF'
import struct, sys
end, prefix, case = sys.argv[1], sys.argv[2], sys.argv[3]
MAGIC = 0x65617400 | 0x07
TC_READ, TC_WRITE, TC_QUEUE, TC_ISSUE, TC_COMPLETE, TC_FS, TC_NOTIFY = 1, 2, 16, 64, 128, 256, 1024
QUEUE, BACKMERGE, GETRQ, ISSUE, COMPLETE, INSERT = 1, 2, 4, 7, 8, 12
DEV = 8 << 20 | 16
def act(a, *cats):
    c = 0
    for x in cats: c |= x
    return a | c << 16
seq = {0: 0, 1: 0}
def rec(cpu, time, sector, nbytes, action, pid, pdu=b"", notify=False):
    if not notify:
        seq[cpu] += 1
    return struct.pack(end + "IIQQIIIIIHH", MAGIC, 0 if notify else seq[cpu], time, sector,
                       nbytes, action, pid, DEV, cpu, 0, len(pdu)) + pdu
W, R = TC_WRITE, TC_READ
cpu0 = [
    rec(0, 1000, 0, 0, TC_NOTIFY << 16, 100, b"writer".ljust(16, b"\0"), notify=True),
    rec(0, 1000, 0, 4096, act(QUEUE, W, TC_QUEUE), 100),
    rec(0, 1500, 0, 4096, act(GETRQ, W, TC_QUEUE), 100),
    rec(0, 2000, 8, 4096, act(QUEUE, W, TC_QUEUE), 100),
    rec(0, 2100, 8, 4096, act(BACKMERGE, W, TC_QUEUE), 100),
    rec(0, 3000, 0, 8192, act(INSERT, W, TC_QUEUE, TC_FS), 100),
    rec(0, 4000, 0, 8192, act(ISSUE, W, TC_ISSUE, TC_FS), 100),
    rec(0, 5000, 100, 4096, act(QUEUE, R, TC_QUEUE), 100),
    rec(0, 5200, 100, 4096, act(GETRQ, R, TC_QUEUE), 100),
    rec(0, 6000, 100, 4096, act(ISSUE, R, TC_ISSUE, TC_FS), 100),
]
cpu1 = [
    rec(1, 9000, 100, 4096, act(COMPLETE, R, TC_COMPLETE, TC_FS), 0),
    rec(1, 10000, 0, 8192, act(COMPLETE, W, TC_COMPLETE, TC_FS), 0),
]
if case == "rqmerge":
    cpu0 = [
        rec(0, 1000, 0, 4096, act(QUEUE, W, TC_QUEUE), 100),
        rec(0, 1100, 0, 4096, act(GETRQ, W, TC_QUEUE), 100),
        rec(0, 1200, 0, 4096, act(INSERT, W, TC_QUEUE, TC_FS), 100),
        rec(0, 2000, 8, 4096, act(QUEUE, W, TC_QUEUE), 100),
        rec(0, 2100, 8, 4096, act(GETRQ, W, TC_QUEUE), 100),
        rec(0, 2200, 8, 4096, act(INSERT, W, TC_QUEUE, TC_FS), 100),
        rec(0, 2300, 8, 4096, act(BACKMERGE, W, TC_QUEUE, TC_FS), 100),
        rec(0, 3000, 0, 8192, act(ISSUE, W, TC_ISSUE, TC_FS), 100),
    ]
    cpu1 = [rec(1, 5000, 0, 8192, act(COMPLETE, W, TC_COMPLETE, TC_FS), 0)]
for cpu, recs in ((0, cpu0), (1, cpu1)):
    with open("%s.blktrace.%d" % (prefix, cpu), "wb") as f:
        f.write(b"".join(recs))
EOF
}

# st-analyze --csv: "OP STAGE n min avg max" for Q2C and D2C
stages() {
	st-analyze --csv "$1" 2>/dev/null | awk -F, '$7 == "Q2C" || $7 == "D2C" {
		split($1, g, " "); gsub(/"/, "", g[2]); print g[2], $7, $8, $9, $10, $16 }'
}
want="read Q2C 1 4.000 4.000 4.000
read D2C 1 3.000 3.000 3.000
write Q2C 2 8.000 8.500 9.000
write D2C 2 6.000 6.000 6.000"

for e in little big; do
	endian='<'
	[ $e = big ] && endian='>'
	mkdir -p "$dir/$e"
	make_trace "$endian" "$dir/$e/sdb" || { fail "import.blktrace.$e" "python3 failed"; continue; }
	if ! st-format import-blktrace "$dir/$e/sdb.blktrace.0" "$dir/$e/sdb.blktrace.1" \
		-o "$dir/$e.sttrace" 2>"$dir/$e.err"; then
		fail "import.blktrace.$e" "import failed: $(cat "$dir/$e.err")"
		continue
	fi
	got=$(stages "$dir/$e.sttrace" | sort)
	if [ "$got" = "$(sort <<<"$want")" ] && st-format verify "$dir/$e.sttrace" >/dev/null &&
		st-format info "$dir/$e.sttrace" | grep -q '^  pid.100 = writer$' &&
		st-format info "$dir/$e.sttrace" | grep -q '^  dev.8:16 = name=sdb;'; then
		pass "import.blktrace.$e"
	else
		fail "import.blktrace.$e" "stages: $(tr '\n' ';' <<<"$got") want $(tr '\n' ';' <<<"$want")"
	fi
done

mkdir -p "$dir/rqmerge"
make_trace '<' "$dir/rqmerge/sdb" rqmerge &&
	st-format import-blktrace "$dir/rqmerge/sdb.blktrace.0" "$dir/rqmerge/sdb.blktrace.1" \
		-o "$dir/rqmerge.sttrace" 2>"$dir/rqmerge.err" ||
	fail import.blktrace.rq_merge "import failed: $(cat "$dir/rqmerge.err")"
got="$(stages "$dir/rqmerge.sttrace" | grep Q2C) $(st-analyze "$dir/rqmerge.sttrace" 2>/dev/null |
	grep -o 'merged [0-9]*, .*, incomplete [0-9]*$' | sed 's/, split.*errors [0-9]*//')"
want="write Q2C 2 3.000 3.500 4.000 merged 1, incomplete 0"
[ "$got" = "$want" ] && pass import.blktrace.rq_merge ||
	fail import.blktrace.rq_merge "got '$got', want '$want'"

# Bad input: one line naming the file, exit 1, no output file left.
one_line_error() { # NAME BAD_FILE FILE...: the error names BAD_FILE
	local name=$1 bad=$2 rc
	shift 2
	st-format import-blktrace "$@" -o "$dir/bad.sttrace" >/dev/null 2>"$dir/bad.err"
	rc=$?
	if [ $rc = 1 ] && [ "$(wc -l <"$dir/bad.err")" = 1 ] && grep -qF "$bad" "$dir/bad.err" &&
		[ ! -e "$dir/bad.sttrace" ]; then
		pass "$name"
	else
		fail "$name" "exit $rc, stderr: $(head -3 "$dir/bad.err")"
	fi
}
head -c 100 "$dir/little/sdb.blktrace.0" >"$dir/cut.blktrace.0"
one_line_error import.blktrace.truncated "$dir/cut.blktrace.0" "$dir/cut.blktrace.0"
size=$(stat -c %s "$dir/little/sdb.blktrace.0")
head -c $((size - 5)) "$dir/little/sdb.blktrace.0" >"$dir/cutpdu.blktrace.0"
one_line_error import.blktrace.truncated_tail "$dir/cutpdu.blktrace.0" \
	"$dir/little/sdb.blktrace.1" "$dir/cutpdu.blktrace.0"
yes "this is not a blktrace file" | head -c 4096 >"$dir/garbage.blktrace.0"
one_line_error import.blktrace.garbage "$dir/garbage.blktrace.0" "$dir/garbage.blktrace.0"
one_line_error import.blktrace.missing "$dir/none.blktrace.0" "$dir/none.blktrace.0"
