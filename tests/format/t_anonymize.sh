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
# Strings shorter than 6 bytes are not searched for: in compressed and
# binary data a given 4-byte string turns up by chance (about once per
# 4 GiB per string, times hundreds of strings), a 6-byte one does not.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"

TESTS="anonymize.no_leak anonymize.analyzes anonymize.salt anonymize.keep"
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
