#!/usr/bin/env python3
"""What a screenshot shows, read with Python's own zlib (no image library).

  png.py FILE [--crop X,Y,W,H] [--colour '#rrggbb' ...]

prints one JSON object: the PNG's width and height, and over the crop (the
whole image by default) the number of distinct colours, the share of the
commonest one (a blank picture is one colour), the pixels far from grey
(curves and heat cells; axes, grids and text are grey) and, per --colour,
the pixels within 12 of it in each channel. Reads 8-bit grey, RGB and RGBA
PNGs without interlacing (what Chromium and gnuplot's pngcairo write);
anything else is an error naming the file.
"""
import argparse
import collections
import json
import struct
import sys
import zlib


def decode(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, w = 8, [], None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or colour not in (0, 2, 6) or interlace:
                raise ValueError("depth %d, colour type %d, interlace %d: not read here" % (depth, colour, interlace))
            ch = {0: 1, 2: 3, 6: 4}[colour]
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + n
    if w is None:
        raise ValueError("no IHDR")
    raw, stride, rows, prev = zlib.decompress(b"".join(idat)), w * ch, [], bytearray(w * ch)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(ch, stride):
                line[i] = (line[i] + line[i - ch]) & 255
        elif f == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif f == 3:
            for i in range(stride):
                line[i] = (line[i] + ((line[i - ch] if i >= ch else 0) + prev[i]) // 2) & 255
        elif f == 4:
            for i in range(stride):
                a, b = line[i - ch] if i >= ch else 0, prev[i]
                c = prev[i - ch] if i >= ch else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return w, h, ch, rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--crop")
    ap.add_argument("--colour", action="append", default=[])
    a = ap.parse_args()
    try:
        w, h, ch, rows = decode(a.file)
    except (OSError, ValueError, zlib.error, struct.error, IndexError) as e:
        sys.exit("png.py: %s: %s" % (a.file, e))
    x0, y0, cw, chh = [int(v) for v in a.crop.split(",")] if a.crop else (0, 0, w, h)
    x0, y0 = max(0, x0), max(0, y0)
    x1, y1 = min(w, x0 + cw), min(h, y0 + chh)
    count = collections.Counter()
    for y in range(y0, y1):
        line = rows[y]
        count.update(bytes(line[x * ch:x * ch + 3]) if ch >= 3 else bytes([line[x]] * 3) for x in range(x0, x1))
    total = max(1, sum(count.values()))
    want = {c: tuple(int(c[k:k + 2], 16) for k in (1, 3, 5)) for c in a.colour}
    near = {c: 0 for c in want}
    vivid = 0
    for px, n in count.items():
        if max(px) - min(px) > 60:
            vivid += n
        for c, rgb in want.items():
            if all(abs(px[k] - rgb[k]) <= 12 for k in range(3)):
                near[c] += n
    print(json.dumps({"width": w, "height": h, "pixels": total, "colours": len(count),
                      "top_share": round(count.most_common(1)[0][1] / total, 4) if count else 1,
                      "vivid": vivid, "near": near}))


main()
