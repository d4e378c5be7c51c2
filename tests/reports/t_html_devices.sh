#!/usr/bin/env bash
# st-analyze --html: a position map per device. One recording of dd writing
# to two loop devices at known places (dd's seek and count, 1 MiB blocks,
# direct I/O) gives two maps, each named for its device, each with its own
# axis: from sector 0 to the highest sector dd wrote on that device, and
# the cells drawn (read back from their rectangles' heights through the
# map's axis, to 0.1 px) where dd's writes began: from its first sector to
# its last 1 MiB block's, each cell within one row (1/32 of the axis or
# less) of that.
# --gnuplot DIR on the same recording: heatmap_position has a panel per
# device, titled with its name, its y range 0 to the MiB dd wrote up to on
# it (heatmap_position.gp), its cells (in the .dat's block the panel plots,
# y the middle of a row in MiB) where dd's writes began as above; the PNG,
# opened in headless Chromium (the screenshot kept in
# build/tests/screenshots), has cells in colour in each panel's plot area.
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

st-analyze "$T/run.sttrace" --gnuplot "$T/plots" >"$T/plot.log" 2>&1 ||
	{ fail reports_html_devices_gnuplot "st-analyze --gnuplot failed: $(tail -1 "$T/plot.log")"; exit 1; }
# A panel a device: the command's own page-ins (sh and dd read from the
# root disk when evicted) may add a device beside A and B.
ndev=$(st-analyze --csv "$T/run.sttrace" 2>/dev/null |
	awk -F, 'NR > 1 { split($1, g, " "); if (!(g[1] in seen)) { seen[g[1]]; n++ } } END { print n + 0 }')
# on success the devices in the order of their panels, top first
if order=$(python3 - "$T/plots" "$ndev" "$(basename "$A")" 8 12 "$(basename "$B")" 300 316 2>&1 <<'PY'
import re, sys
d, ndev = sys.argv[1], int(sys.argv[2])
want = {sys.argv[3]: (int(sys.argv[4]), int(sys.argv[5])), sys.argv[6]: (int(sys.argv[7]), int(sys.argv[8]))}
gp = open(d + "/heatmap_position.gp").read()
blocks = open(d + "/heatmap_position.dat").read().strip("\n").split("\n\n\n")
found = re.findall(r"set title 'Position heatmap, '\.'([^']*)'\n  set yrange \[([\d.e+-]+):([\d.e+-]+)\]\n"
                   r"  plot 'heatmap_position\.dat' index (\d+) ", gp)
bad = []
if "set multiplot layout %d,1\n" % ndev not in gp:
    bad.append("no layout of %d panels, one for each device of the trace" % ndev)
panels = {dev: (float(y0), float(y1), int(k)) for dev, y0, y1, k in found}
for dev, (lo, top) in want.items():
    if dev not in panels:
        bad.append("%s: no panel of its own (panels: %s)" % (dev, sorted(panels) or "none"))
        continue
    y0, y1, k = panels[dev]
    if y0 != 0 or abs(y1 - top) > 1e-6:
        bad.append("%s: y range %g-%g MiB, dd wrote up to %d" % (dev, y0, y1, top))
    if k >= len(blocks) or not blocks[k].startswith("# %s:" % dev):
        bad.append("%s: index %d of the .dat is not its block" % (dev, k))
        continue
    rows = [[float(v) for v in l.split()] for l in blocks[k].split("\n")[1:] if l.strip()]
    ys = sorted(set(r[1] for r in rows))
    pitch = ys[1] - ys[0] if len(ys) > 1 else top
    cells = [(y - pitch / 2, y + pitch / 2) for t, y, n in rows if n > 0]
    row, last = top / 32, top - 1
    out = [(a, b) for a, b in cells if a < lo - row - 1e-6 or b > last + row + 1e-6]
    if not cells:
        bad.append("%s: no cells" % dev)
    elif out:
        bad.append("%s: cells at MiB %s, dd's writes began at %d-%d" % (dev, out[:3], lo, last))
    elif min(a for a, b in cells) > lo + 1e-6 or max(b for a, b in cells) < last - 1e-6:
        bad.append("%s: cells span MiB %g-%g, dd's writes began at %d-%d"
                   % (dev, min(a for a, b in cells), max(b for a, b in cells), lo, last))
if bad:
    sys.exit("; ".join(bad))
print(" ".join(sorted(panels, key=lambda dev: panels[dev][2])))
PY
); then
	pass reports_html_devices_gnuplot
else
	fail reports_html_devices_gnuplot "$(tail -1 <<<"$order")"
	exit 1
fi

CHROMIUM=$(command -v chromium || command -v chromium-browser)
if ! command -v gnuplot >/dev/null || [ -z "$CHROMIUM" ]; then
	skip reports_html_devices_gnuplot_png "gnuplot or chromium not installed"
	exit 0
fi
st_screenshots SHOTS
shot=$SHOTS/plot-heatmap_position-devices.png
rm -f "$shot"
read -r w h <<<"$(file "$T/plots/heatmap_position.png" | sed -n 's/.*PNG image data, \([0-9]*\) x \([0-9]*\),.*/\1 \2/p')"
[ -n "$w" ] && st_shot "$T/chromium.err" "$shot" "$w" "$h" "file://$T/plots/heatmap_position.png"
# each panel, a band of the image's height, top first: its plot area's middle, left of the colour bar
bad="" k=0
read -ra devs <<<"$order"
for dev in "${devs[@]}"; do
	ph=$((h / ${#devs[@]}))
	# dd's devices; another's few page-ins may colour a few cells only
	[ "$dev" = "$(basename "$A")" ] || [ "$dev" = "$(basename "$B")" ] || { k=$((k + 1)); continue; }
	stats=$(python3 "$(dirname "$0")/../png.py" "$shot" --crop "$((w / 10)),$((k * ph + ph / 10)),$((w * 7 / 10)),$((ph * 3 / 4))" 2>&1)
	bad+=$(python3 -c '
import json, sys
try:
    s = json.loads(sys.argv[2])
except ValueError:
    sys.exit(print("%s: %s; " % (sys.argv[1], sys.argv[2])))
if s["vivid"] < 20:
    print("%s: blank panel, %d of %d px in colour; " % (sys.argv[1], s["vivid"], s["pixels"]))' "$dev" "$stats")
	k=$((k + 1))
done
[ -z "$bad" ] && pass "reports_html_devices_gnuplot_png: $shot" || fail reports_html_devices_gnuplot_png "$bad"
