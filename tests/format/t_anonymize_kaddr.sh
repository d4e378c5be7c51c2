#!/usr/bin/env bash
# st-format anonymize hides kernel text addresses in fields declared as
# numbers: ext4:ext4_mark_inode_dirty's `unsigned long ip` (the caller,
# ext4_dirty_inode+0x57, which gives away the kernel's KASLR base; issue 45)
# recorded on ext4 over a loop device. The original's ip values are checked
# against /proc/kallsyms (each falls inside a kernel text symbol), then:
# in the anonymized copy no field of any event holds one of them, or any
# value in the kernel's half of the address space (0xff00000000000000 up to
# the top page, whose -4095..-1 are error numbers); each original ip is one
# token (as many distinct ip values as before).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"

TESTS="anonymize.kaddr.recorded anonymize.kaddr.hidden anonymize.kaddr.consistent"
why=$(bpf_unavailable)
[ -r /proc/kallsyms ] && [ "$(awk 'NR == 1 { print $1 }' /proc/kallsyms)" != 0000000000000000 ] ||
	why=${why:-"/proc/kallsyms hides addresses"}
if [ -n "$why" ]; then
	for t in $TESTS; do skip "$t" "$why"; done
	exit 0
fi
st_tmpdir dir
st_loopdev dev 64
rec_ext4 anonymize.kaddr.recorded "$dev" "$dir/mnt"
st-record -o "$dir/orig.sttrace" -e 'ext4:ext4_mark_inode_dirty' -- \
	dd if=/dev/zero of="$dir/mnt/f" bs=4k count=200 conv=fsync >"$dir/record.log" 2>&1 ||
	{ fail anonymize.kaddr.recorded "st-record failed: $(tail -1 "$dir/record.log")"; exit 1; }
st-format anonymize "$dir/orig.sttrace" -o "$dir/anon.sttrace" >/dev/null ||
	{ fail anonymize.kaddr.hidden "anonymize failed"; exit 1; }

# the ip column of the tracepoint's rows, and every number of every row
ips() { st-format cat --csv -t ext4:ext4_mark_inode_dirty "$1" |
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "ip") c = i; next } c { print $c }'; }
ips "$dir/orig.sttrace" | sort -u >"$dir/orig.ips"
ips "$dir/anon.sttrace" | sort -u >"$dir/anon.ips"
# kernel text symbols, sorted by address; an ip inside one of them is a text address
python3 - "$dir/orig.ips" <<'PY' >"$dir/check" 2>&1
import bisect, sys
syms = sorted((int(a, 16), n) for a, t, n, *_ in (l.split() for l in open('/proc/kallsyms')) if t in 'tT')
addrs = [a for a, _ in syms]
ips = [int(x, 0) for x in open(sys.argv[1]) if x.strip()]
inside = [ip for ip in ips if 0 < bisect.bisect_right(addrs, ip) < len(addrs)]
print(len(ips), len(inside), syms[bisect.bisect_right(addrs, ips[0]) - 1][1] if ips else '')
PY
read -r n inside sym <"$dir/check"
[ "${n:-0}" -gt 0 ] && [ "$n" = "$inside" ] && pass anonymize.kaddr.recorded ||
	fail anonymize.kaddr.recorded "$(cat "$dir/check"): ${n:-0} distinct ip values, ${inside:-0} in kernel text"
st-format cat --csv "$dir/anon.sttrace" | python3 -c '
import csv, sys
orig = {int(x, 0) for x in open(sys.argv[1]) if x.strip()}
bad = 0
for row in csv.reader(sys.stdin):
    for v in row:
        try:
            x = int(v, 0)
        except ValueError:
            continue
        x &= (1 << 64) - 1
        if x in orig or 0xff00000000000000 <= x <= (1 << 64) - 4097:
            bad += 1
print(bad)' "$dir/orig.ips" >"$dir/bad"
[ "$(cat "$dir/bad")" = 0 ] && pass anonymize.kaddr.hidden ||
	fail anonymize.kaddr.hidden "$(cat "$dir/bad") values in the copy are original ip values or in the kernel's half (the first: $sym)"
[ "$(wc -l <"$dir/anon.ips")" = "$(wc -l <"$dir/orig.ips")" ] && pass anonymize.kaddr.consistent ||
	fail anonymize.kaddr.consistent "$(wc -l <"$dir/orig.ips") distinct ip values became $(wc -l <"$dir/anon.ips")"
