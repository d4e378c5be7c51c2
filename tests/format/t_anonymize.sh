#!/usr/bin/env bash
# st-format anonymize on a real recording (-e all) of a command with a
# planted name (secretcmd-q7, a copy of dd) writing a file with planted
# path components on ext4, recorded under a planted host name (a private
# UTS namespace):
#   - no original command name, path, host name or command-line word
#     remains anywhere in the copy: every chunk is found and decompressed
#     by walking the bytes as spec/sttrace-format.md describes them (python3
#     and the zstd tool, not libsttrace), and searched with the raw file;
#   - the copy verifies, and st-analyze --by comm and --by file give the
#     same rows as the original but for the group names;
#   - one --salt gives the same tokens twice; no salt, different ones;
#   - --keep comm keeps command names and still hides the host.
# Then generic tracepoints recorded by name (xfs:xfs_create with its file
# names, filemap:mm_filemap_add_to_page_cache, sock:inet_sock_set_state with
# kernel and IP addresses) with the block preset, on XFS and a TCP connection
# to a planted loopback address:
#   - no record holds a byte that no field of its schema covers (the probe
#     zeroes padding and tails), read by tests/format/uncovered.py;
#   - anonymized: no file name, no planted IP address, no kernel address
#     (rq, bios, bio, skaddr) of the original is anywhere in the copy, and one
#     original address is one token (the partition of events by skaddr and by
#     rq is the same);
#   - st-analyze prints the same I/O count and stages for the copy;
#   - a file of an older recorder (tests/format/hostile/replay-hugeoff.sttrace,
#     tails holding earlier records' bytes) has no uncovered byte left once
#     anonymized.
# Strings shorter than 6 bytes are not searched for: in compressed and
# binary data a given 4-byte string turns up by chance (about once per
# 4 GiB per string, times hundreds of strings), a 6-byte one does not.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"

TESTS="anonymize.no_leak anonymize.analyzes anonymize.salt anonymize.keep anonymize.old_file_zeroed
anonymize.generic_zeroed anonymize.generic_no_leak anonymize.addresses_consistent anonymize.generic_analyzes"
why=$(bpf_unavailable)
command -v zstd >/dev/null && command -v python3 >/dev/null || why=${why:-"zstd or python3 missing"}
if [ -n "$why" ]; then
	for t in $TESTS; do skip "$t" "$why"; done
	exit 0
fi

st_tmpdir dir
st_loopdev dev 64
rec_ext4 anonymize.record "$dev" "$dir/mnt"
mkdir -p "$dir/mnt/secret-dir-q7"
cp "$(command -v dd)" "$dir/secretcmd-q7"
unshare --uts sh -c 'hostname sttrace-secret-host-q7 && exec "$@"' sh \
	st-record -o "$dir/orig.sttrace" -e all -- "$dir/secretcmd-q7" if=/dev/zero \
	of="$dir/mnt/secret-dir-q7/secret-file-q7" bs=4k count=300 oflag=direct conv=fsync \
	>"$dir/record.log" 2>&1 ||
	{ fail anonymize.record "st-record failed: $(tail -1 "$dir/record.log")"; exit 1; }
st-format anonymize "$dir/orig.sttrace" -o "$dir/anon.sttrace" --salt pepper ||
	{ fail anonymize.no_leak "anonymize failed"; exit 1; }

# The strings to hide: planted ones and every value of the original's
# identifying metadata and command-line words, 6 bytes or longer, but for
# "st-record": the recorder's name is also in the (kept) tool key.
{
	printf '%s\n' secretcmd-q7 secret-dir-q7 secret-file-q7 sttrace-secret-host-q7
	st-format info "$dir/orig.sttrace" | awk '
		/^  (host\.name|pid\.|fd\.|inode\.)/ { sub(/^[^=]*= /, ""); print }
		/^  command_line = / { sub(/^[^=]*= /, ""); n = split($0, w, " "); for (i = 1; i <= n; i++) print w[i] }'
} | awk 'length($0) >= 6 && $0 != "st-record"' | sort -u >"$dir/secrets"

# Every chunk payload, decompressed, and the file itself, searched for each secret.
python3 - "$dir/anon.sttrace" "$dir/secrets" >"$dir/leaks" <<'EOF' || echo "walk failed" >>"$dir/leaks"
import struct, subprocess, sys
data = open(sys.argv[1], "rb").read()
secrets = [s.rstrip("\n").encode() for s in open(sys.argv[2]) if s.strip()]
assert data[:8] == b"\x89STT\r\n\x1a\n"
plain, off, chunks = [data], 32, 0
while off + 64 <= len(data) and data[off:off + 4] == b"STCK":
    kind, seq, flags, psize, rsize = struct.unpack_from("<IIIII", data, off + 4)
    payload = data[off + 64:off + 64 + psize]
    if flags & 1:
        payload = subprocess.run(["zstd", "-dc"], input=payload, capture_output=True, check=True).stdout
    assert len(payload) == rsize, "chunk %d: %d bytes, header says %d" % (seq, len(payload), rsize)
    plain.append(payload)
    off += 64 + psize
    chunks += 1
assert chunks >= 4, "only %d chunks found" % chunks
blob = b"\0".join(plain)
for s in secrets:
    if s in blob:
        print(s.decode())
EOF
nsecrets=$(wc -l <"$dir/secrets")
if [ ! -s "$dir/leaks" ] && [ "$nsecrets" -ge 4 ]; then
	pass anonymize.no_leak
else
	fail anonymize.no_leak "$(head -3 "$dir/leaks" | tr '\n' ' ')($nsecrets strings searched)"
fi

rows() { st-analyze --by "$2" --csv "$1" 2>/dev/null | awk -F, '{ $1 = ""; print }' | sort; }
if st-format verify "$dir/anon.sttrace" >/dev/null &&
	cmp -s <(rows "$dir/orig.sttrace" comm) <(rows "$dir/anon.sttrace" comm) &&
	cmp -s <(rows "$dir/orig.sttrace" file) <(rows "$dir/anon.sttrace" file) &&
	[ "$(rows "$dir/orig.sttrace" file | wc -l)" -gt 1 ]; then
	pass anonymize.analyzes
else
	fail anonymize.analyzes "verify failed or --by comm/file rows differ"
fi

st-format anonymize "$dir/orig.sttrace" -o "$dir/anon2.sttrace" --salt pepper
st-format anonymize "$dir/orig.sttrace" -o "$dir/rand1.sttrace"
st-format anonymize "$dir/orig.sttrace" -o "$dir/rand2.sttrace"
host() { st-format info "$1" | awk '/^  host\.name = / { print $3 }'; }
if cmp -s <(st-format info "$dir/anon.sttrace" | sed 1d) <(st-format info "$dir/anon2.sttrace" | sed 1d) &&
	cmp -s <(st-format cat "$dir/anon.sttrace") <(st-format cat "$dir/anon2.sttrace") &&
	[ -n "$(host "$dir/rand1.sttrace")" ] && [ "$(host "$dir/rand1.sttrace")" != "$(host "$dir/rand2.sttrace")" ] &&
	[ "$(host "$dir/rand1.sttrace")" != "$(host "$dir/anon.sttrace")" ]; then
	pass anonymize.salt
else
	fail anonymize.salt "same salt: different tokens, or no salt: equal tokens"
fi

st-format anonymize "$dir/orig.sttrace" -o "$dir/keep.sttrace" --keep comm
if st-format info "$dir/keep.sttrace" | grep -q '= secretcmd-q7$' &&
	! st-format info "$dir/keep.sttrace" | grep -q 'sttrace-secret-host-q7\|secret-file-q7'; then
	pass anonymize.keep
else
	fail anonymize.keep "--keep comm lost the command name or kept the host or a path"
fi

# --- uncovered bytes and addresses
uncovered() { python3 "$(dirname "$0")/uncovered.py" "$1" | awk '$3 > 0 { printf "%s: %d of %d; ", $1, $3, $2 }'; }
old_file=$(dirname "$0")/hostile/replay-hugeoff.sttrace
st-format anonymize "$old_file" -o "$dir/old.sttrace" --salt pepper
before=$(uncovered "$old_file")
after=$(uncovered "$dir/old.sttrace")
if [ -n "$before" ] && [ -z "$after" ]; then
	pass anonymize.old_file_zeroed
else
	fail anonymize.old_file_zeroed "uncovered non-zero bytes before: '$before', after: '$after'"
fi

st_loopdev xdev 320
mkfs.xfs -q "$xdev" || { fail anonymize.generic_zeroed "mkfs.xfs failed"; exit 1; }
mkdir -p "$dir/xfs"
mount "$xdev" "$dir/xfs" || { fail anonymize.generic_zeroed "mount failed"; exit 1; }
at_exit "umount '$dir/xfs'"
# 127.83.117.201: a loopback address no other field holds by chance
cat >"$dir/work.py" <<'EOF'
import os, socket, sys
srv = socket.socket()
srv.bind(("127.83.117.201", 0))
srv.listen(4)
for i in range(3):
    c = socket.create_connection(srv.getsockname())
    a, _ = srv.accept()
    c.close()
    a.close()
for i in range(40):
    with open("%s/secret-name-q7-%d" % (sys.argv[1], i), "wb") as f:
        f.write(b"x" * 65536)
        os.fsync(f.fileno())
EOF
st-record -o "$dir/gen.sttrace" -e block,xfs:xfs_create,filemap:mm_filemap_add_to_page_cache,sock:inet_sock_set_state \
	-- python3 "$dir/work.py" "$dir/xfs" >"$dir/gen.log" 2>&1 ||
	{ fail anonymize.generic_zeroed "st-record failed: $(tail -1 "$dir/gen.log")"; exit 1; }
counts=$(st-format info "$dir/gen.sttrace" | awk '$1 ~ /^(xfs:xfs_create|sock:inet_sock_set_state)$/ { printf "%s=%s ", $1, $2 }')
left=$(uncovered "$dir/gen.sttrace")
if [ -z "$left" ] && [ "$(wc -w <<<"$counts")" = 2 ]; then
	pass anonymize.generic_zeroed
else
	fail anonymize.generic_zeroed "records with uncovered non-zero bytes: '$left' (recorded: $counts)"
fi

st-format anonymize "$dir/gen.sttrace" -o "$dir/gen-anon.sttrace" --salt pepper ||
	{ fail anonymize.generic_no_leak "anonymize failed"; exit 1; }
# Each address of the original: the rq, bio and bios of the block events,
# skaddr, as 8 little-endian bytes; and the planted IPv4 address.
st-format cat --json "$dir/gen.sttrace" >"$dir/gen.jsonl"
st-format cat --json "$dir/gen-anon.sttrace" >"$dir/gen-anon.jsonl"
python3 - "$dir/gen.jsonl" "$dir/gen-anon.sttrace" >"$dir/gen-leaks" <<'EOF' || echo "walk failed" >>"$dir/gen-leaks"
import json, struct, subprocess, sys
addrs = set()
for line in open(sys.argv[1]):
    e = json.loads(line)
    for k in ("rq", "bio", "skaddr"):
        if isinstance(e.get(k), str) and int(e[k], 16):
            addrs.add(int(e[k], 16))
    for b in e.get("bios") or []:
        if int(b, 16):
            addrs.add(int(b, 16))
data = open(sys.argv[2], "rb").read()
plain, off = [data], 32
while off + 64 <= len(data) and data[off:off + 4] == b"STCK":
    kind, seq, flags, psize, rsize = struct.unpack_from("<IIIII", data, off + 4)
    payload = data[off + 64:off + 64 + psize]
    if flags & 1:
        payload = subprocess.run(["zstd", "-dc"], input=payload, capture_output=True, check=True).stdout
    plain.append(payload)
    off += 64 + psize
blob = b"\0".join(plain)
secrets = [struct.pack("<Q", a) for a in addrs] + [bytes([127, 83, 117, 201]), b"secret-name-q7"]
assert len(addrs) > 10, len(addrs)
for s in secrets:
    if s in blob:
        print(s.hex())
EOF
if [ ! -s "$dir/gen-leaks" ] && ! grep -q "127, 83, 117, 201\|secret-name" "$dir/gen-anon.jsonl"; then
	pass anonymize.generic_no_leak
else
	fail anonymize.generic_no_leak "found in the copy: $(head -3 "$dir/gen-leaks" | tr '\n' ' ')"
fi

# One value, one token: the events grouped by each address field (and by the
# IPv4 addresses) fall into the same groups before and after.
if python3 - "$dir/gen.jsonl" "$dir/gen-anon.jsonl" <<'EOF'
import json, sys
COLS = ("rq", "bios", "skaddr", "saddr", "daddr", "saddr_v6", "bio")
def keys(path):
    return [tuple(str(e.get(k)) for k in COLS) for e in map(json.loads, open(path))]
a, b = keys(sys.argv[1]), keys(sys.argv[2])
assert len(a) == len(b)
for col, name in enumerate(COLS):
    fwd, back = {}, {}
    for x, y in zip(a, b):
        assert fwd.setdefault(x[col], y[col]) == y[col], ("one value, two tokens", name, x[col])
        assert back.setdefault(y[col], x[col]) == x[col], ("two values, one token", name, y[col])
    # every column but bio (not in the block preset) has several values to tell apart
    assert name == "bio" or len(set(fwd) - {"None"}) > 1, ("too few values", name, len(fwd))
EOF
then
	pass anonymize.addresses_consistent
else
	fail anonymize.addresses_consistent "see the assertion above"
fi

if cmp -s <(st-analyze --csv "$dir/gen.sttrace" 2>/dev/null) <(st-analyze --csv "$dir/gen-anon.sttrace" 2>/dev/null) &&
	cmp -s <(st-analyze --csv --by op --stage Q2C "$dir/gen.sttrace" 2>/dev/null) \
		<(st-analyze --csv --by op --stage Q2C "$dir/gen-anon.sttrace" 2>/dev/null) &&
	[ "$(st-analyze --csv "$dir/gen.sttrace" 2>/dev/null | wc -l)" -gt 1 ]; then
	pass anonymize.generic_analyzes
else
	fail anonymize.generic_analyzes "st-analyze differs on the copy"
fi
