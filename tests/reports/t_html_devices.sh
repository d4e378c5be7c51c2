#!/usr/bin/env bash
# st-analyze --html: a position map per device. One recording of dd writing
# to two loop devices at known places (dd's seek and count, 1 MiB blocks,
# direct I/O) gives two maps, each named for its device, each with its own
# axis: from sector 0 to the highest sector dd wrote on that device, and
# the cells drawn (read back from their rectangles' heights through the
# map's axis, to 0.1 px) where dd's writes began: from its first sector to
# its last 1 MiB block's, each cell within one row (1/32 of the axis or
# less) of that.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"
rec_require_bpf reports_html_devices

st_tmpdir T
st_loopdev A 64
st_loopdev B 512
# A: MiB 8 to 12; B: MiB 300 to 316
check reports_html_devices_record st-record -o "$T/run.sttrace" --events block -- sh -c "
	dd if=/dev/zero of=$A bs=1M seek=8 count=4 oflag=direct status=none &&
	dd if=/dev/zero of=$B bs=1M seek=300 count=16 oflag=direct status=none"
st-analyze "$T/run.sttrace" --html "$T/report.html" >"$T/html.log" 2>&1 ||
	{ fail reports_html_devices "st-analyze --html failed: $(tail -1 "$T/html.log")"; exit 1; }

bad=$(python3 - "$T/report.html" "$(basename "$A")" $((8 * 2048)) $((12 * 2048)) \
	"$(basename "$B")" $((300 * 2048)) $((316 * 2048)) <<'PY'
import re, sys
page = open(sys.argv[1]).read()
want = {sys.argv[2]: (int(sys.argv[3]), int(sys.argv[4])), sys.argv[5]: (int(sys.argv[6]), int(sys.argv[7]))}
maps = {}
for svg in re.findall(r'<svg id="heat-position-\d+".*?</svg>', page, re.S):
    title = re.search(r"<title>(.*?)</title>", svg).group(1)
    g = re.search(r'<g class="cells" data-dev="([^"]*)" data-sectors="(\d+)" data-y0="([\d.]+)" data-y1="([\d.]+)">(.*?)</g>', svg, re.S)
    if not g:
        continue
    dev, sectors, y0, y1 = g.group(1), int(g.group(2)), float(g.group(3)), float(g.group(4))
    cells = [(float(y), float(h)) for y, h in re.findall(r'<rect [^>]*y="([\d.]+)" [^>]*height="([\d.]+)"', g.group(5))]
    maps[dev] = (title, sectors, y0, y1, cells)
bad = []
for dev, (lo, hi) in want.items():
    if dev not in maps:
        bad.append("%s: no position map of its own (maps: %s)" % (dev, sorted(maps) or "none"))
        continue
    title, sectors, y0, y1, cells = maps[dev]
    if dev not in title:
        bad.append("%s: map titled %r" % (dev, title))
    if sectors != hi:
        bad.append("%s: axis to sector %d, dd wrote up to %d" % (dev, sectors, hi))
    px = (y0 - y1) / sectors  # pixels a sector
    row, tol, last = sectors / 32, 0.1 / px, hi - 2048
    got = [((y0 - y - h + 0.3) / px, (y0 - y) / px) for y, h in cells]
    out = [(round(a), round(b)) for a, b in got if a < lo - row - tol or b > last + row + tol]
    if not cells:
        bad.append("%s: no cells drawn" % dev)
    elif out:
        bad.append("%s: cells at sectors %s, dd's writes began at %d-%d" % (dev, out[:3], lo, last))
    elif min(a for a, b in got) > lo + tol or max(b for a, b in got) < last - tol:
        bad.append("%s: cells span %d-%d, dd's writes began at %d-%d" % (dev, min(a for a, b in got), max(b for a, b in got), lo, last))
print("; ".join(bad))
PY
) || bad="the check itself failed: $bad"
[ -z "$bad" ] && pass reports_html_devices || fail reports_html_devices "$bad"
