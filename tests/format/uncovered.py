#!/usr/bin/env python3
# uncovered.py FILE: per event type of an .sttrace file, its records and how
# many hold a non-zero byte that no field of the type's schema covers, read
# as spec/sttrace-format.md describes the bytes (sections 4, 5.2, 5.3), with
# the zstd tool, not libsttrace: "NAME RECORDS NONZERO" per line.
import struct, subprocess, sys

data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89STT\r\n\x1a\n", "not an sttrace file"
types, events, off = {}, [], 32
while off + 64 <= len(data) and data[off:off + 4] == b"STCK":
    kind, seq, flags, psize, rsize = struct.unpack_from("<IIIII", data, off + 4)
    payload = data[off + 64:off + 64 + psize]
    if flags & 1:
        payload = subprocess.run(["zstd", "-dc"], input=payload, capture_output=True, check=True).stdout
    off += 64 + psize
    if kind == 3:
        events.append(payload)
    if kind != 2:
        continue
    ntypes, p = struct.unpack_from("<I", payload, 0)[0], 8
    for _ in range(ntypes):
        tid, size, nfields, name_len = struct.unpack_from("<HHHH", payload, p)
        name = payload[p + 8:p + 8 + name_len].decode()
        p += 8 + name_len
        covered = bytearray(size)
        for _ in range(nfields):
            foff, fsize, _elem, _disp, fname_len, doc_len = struct.unpack_from("<HHBBHH", payload, p)
            p += 10 + fname_len + doc_len
            covered[foff:foff + fsize] = b"\1" * fsize
        types[tid] = (name, size, covered)
counts = {}
for payload in events:
    p = 0
    while p + 24 <= len(payload):
        tid, size = struct.unpack_from("<HH", payload, p)
        name, tsize, covered = types[tid]
        rec = payload[p:p + size]
        bad = any(b and (i >= tsize or not covered[i]) for i, b in enumerate(rec))
        n = counts.setdefault(name, [0, 0])
        n[0] += 1
        n[1] += bad
        p += size
for name, (n, bad) in sorted(counts.items()):
    print(name, n, bad)
