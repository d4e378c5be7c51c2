#!/usr/bin/env bash
# st-analyze --html: one page opened in headless Chromium. A recording of the
# demo's workload (scripts/demo.sh: fio random reads and writes, psync, two
# jobs, on a loop device; 3 s here) is written as a page, then
#   - every table of the page, as Chromium's DOM holds it (--dump-dom), has
#     the rows the report's own --csv prints (summary, sizes, seeks,
#     histograms, depth, top lists, the tail list: there the columns with
#     data, each the CSV's column of its name, the others empty or 0 in
#     every row of the CSV);
#   - the page leads with pictures: in a 1400 x 900 window (screenshot
#     kept) the latency heat map and the summary at a glance lie within the
#     first screen, before the position map, the rates and the tail CDF;
#     the glance's cells are the summary CSV's of stage total; the tail
#     list, unfolded, is at most 1400 px wide; the other reports are folded
#     (<details>);
#   - the same with JavaScript off (scripts make no table): the page with its
#     policy's script-src set to 'none' (headless Chromium's --dump-dom gives
#     nothing at all with --blink-settings=scriptEnabled=false);
#   - the page asks for nothing over the network: it has no URL to load
#     (no src, no href but its own #anchors), and its Content-Security-Policy
#     forbids every fetch: the page with an image, a style sheet and a
#     script's fetch() of a local HTTP server added makes no request to it,
#     while the same additions without the policy do (so the probe works).
#     (Chromium's own network log is no witness: the browser asks Google for
#     updates and accounts whatever page it loads.)
#   - an anonymized trace's page holds its tokens, not the host, command or
#     file names of the original;
#   - it is under 2 MB;
#   - its screenshots, kept in build/tests/screenshots (html-1400x900.png,
#     the first screen, and html-1200x2400.png), show it: 1400 x 900 px,
#     not one colour, and in the plot area of the latency heat map and of
#     the position map (their boxes in the layout above, the middle of each)
#     cells of many colours (a map without cells is grey and white).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"
rec_require_bpf reports_html
CHROMIUM=$(command -v chromium || command -v chromium-browser) ||
	{ skip reports_html "chromium not installed (scripts/install-deps.sh)"; exit 0; }

st_tmpdir T
st_screenshots SHOTS
st_loopdev L 256
check reports_html_record st-record -o "$T/run.sttrace" --events all -d "$L" -- \
	fio --name=demo --filename="$L" --direct=1 --rw=randrw --rwmixread=70 --bs=4k --size=200M \
	--time_based --runtime=3 --numjobs=2 --ioengine=psync --group_reporting --output="$T/fio.txt"

st-analyze "$T/run.sttrace" --html "$T/report.html" >"$T/html.log" 2>&1 ||
	{ fail reports_html_write "st-analyze --html failed: $(tail -1 "$T/html.log")"; exit 1; }
size=$(stat -c %s "$T/report.html")
[ "$size" -lt 2000000 ] && pass reports_html_size || fail reports_html_size "$size bytes"

# the reports' own CSV, one file per table id of the page
st-analyze "$T/run.sttrace" --csv >"$T/summary-table.csv" 2>/dev/null
st-analyze "$T/run.sttrace" --sizes --csv >"$T/sizes-table.csv" 2>/dev/null
st-analyze "$T/run.sttrace" --seek --csv >"$T/seek-table.csv" 2>/dev/null
st-analyze "$T/run.sttrace" --hist --csv >"$T/hist-table.csv" 2>/dev/null
st-analyze "$T/run.sttrace" --depth --csv >"$T/depth-table.csv" 2>/dev/null
for by in comm pid file cgroup; do
	st-analyze "$T/run.sttrace" --top-by "$by" --csv >"$T/top-$by-table.csv" 2>/dev/null
done
st-analyze "$T/run.sttrace" --quantile 99 --csv >"$T/tail-table.csv" 2>/dev/null

chrome() { timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu "$@" 2>>"$T/chromium.err"; }
chrome --dump-dom "file://$T/report.html" >"$T/dom.html"
sed "s/script-src 'unsafe-inline'/script-src 'none'/" "$T/report.html" >"$T/noscript.html"
chrome --dump-dom "file://$T/noscript.html" >"$T/dom-noscript.html"
st_shot "$T/chromium.err" "$SHOTS/html-1200x2400.png" 1200 2400 "file://$T/report.html"

# tables of a DOM against the CSV files: python's own HTML and CSV parsers
compare_tables() {
	python3 - "$1" "$T" <<'PY'
import csv, html.parser, os, sys
class Tables(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(); self.tables = {}; self.cur = None; self.row = None; self.cell = None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table" and a.get("id", "").endswith("-table") and a["id"] != "identity-table":
            self.cur = self.tables.setdefault(a["id"], [])
        elif tag == "tr" and self.cur is not None: self.row = []
        elif tag in ("td", "th") and self.row is not None: self.cell = ""
    def handle_endtag(self, tag):
        if tag == "table": self.cur = None
        elif tag == "tr" and self.row is not None: self.cur.append(self.row); self.row = None
        elif tag in ("td", "th") and self.cell is not None: self.row.append(self.cell); self.cell = None
    def handle_data(self, d):
        if self.cell is not None: self.cell += d
p = Tables(); p.feed(open(sys.argv[1]).read())
bad = []
want = sorted(f[:-4] for f in os.listdir(sys.argv[2]) if f.endswith("-table.csv"))
for t in want:
    rows = [r for r in csv.reader(open(os.path.join(sys.argv[2], t + ".csv")))]
    got = p.tables.get(t)
    if got and got[0] != rows[0] and set(got[0]) <= set(rows[0]):
        # a compact table: its columns, each the CSV's of that name; the rest empty or 0 throughout
        keep = [rows[0].index(h) for h in got[0]]
        for k, h in enumerate(rows[0]):
            if h not in got[0] and any(r[k] not in ("", "0", "0.000") for r in rows[1:] if len(r) > k):
                bad.append("%s: column %s left out, but it has data" % (t, h))
        rows = [[r[k] for k in keep] for r in rows]
    if got is None: bad.append(t + ": not in the page")
    elif got != rows: bad.append("%s: %d rows in the page, %d in --csv%s" % (t, len(got), len(rows),
        next((": first difference %r / %r" % (g, w) for g, w in zip(got, rows) if g != w), "")))
    elif len(rows) < 2: bad.append(t + ": empty")
print("; ".join(bad))
PY
}
bad=$(compare_tables "$T/dom.html")
[ -z "$bad" ] && pass reports_html_tables || fail reports_html_tables "$bad"
bad=$(compare_tables "$T/dom-noscript.html")
[ -z "$bad" ] && pass reports_html_noscript || fail reports_html_noscript "$bad"

# a local server that logs every request; the page with loads of it added
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server "$PORT" --bind 127.0.0.1 --directory "$T" >"$T/http.log" 2>&1 &
HTTP_PID=$!
at_exit "kill $HTTP_PID"
for i in $(seq 50); do python3 -c "import socket; socket.create_connection(('127.0.0.1', $PORT), 1)" 2>/dev/null && break; sleep 0.1; done
probe="<img src=\"http://127.0.0.1:$PORT/probe-img.png\"><link rel=\"stylesheet\" href=\"http://127.0.0.1:$PORT/probe-css.css\"><script>fetch('http://127.0.0.1:$PORT/probe-fetch')</script>"
sed "s#<body>#<body>$probe#" "$T/report.html" >"$T/probe.html"
sed -e "s#<body>#<body>$probe#" -e '/Content-Security-Policy/d' "$T/report.html" >"$T/probe-nocsp.html"
chrome --dump-dom "file://$T/probe.html" >/dev/null
with_csp=$(grep -c "GET /probe" "$T/http.log")
chrome --dump-dom "file://$T/probe-nocsp.html" >/dev/null
without_csp=$(( $(grep -c "GET /probe" "$T/http.log") - with_csp ))
links=$(grep -o -E '(src|href)="[^#"][^"]*"' "$T/report.html" | sort -u | tr '\n' ' ')
if [ "$with_csp" -eq 0 ] && [ "$without_csp" -gt 0 ] && [ -z "$links" ]; then
	pass reports_html_offline
else
	fail reports_html_offline "requests with the page's policy: $with_csp, without it: $without_csp; links: ${links:-none}"
fi

# an anonymized trace's page names its tokens: not the host, the commands, the
# paths (device names are kept by st-format anonymize, as in every report)
st-format anonymize "$T/run.sttrace" -o "$T/anon.sttrace" >/dev/null 2>&1 &&
	st-analyze "$T/anon.sttrace" --html "$T/anon.html" >/dev/null 2>&1 ||
	fail reports_html_anonymized "anonymize or --html failed"
host=$(hostname)
leaks=$(grep -o -F -e "$host" -e ">fio<" -e "$L" "$T/anon.html" | sort -u | tr '\n' ' ')
if [ -s "$T/anon.html" ] && [ -z "$leaks" ] && grep -q "<th>host</th><td>[^<]" "$T/anon.html" &&
	grep -q ">c[0-9a-f]\{12\}<" "$T/anon.html"; then
	pass reports_html_anonymized
else
	fail reports_html_anonymized "names of the original in the page: ${leaks:-none}"
fi
# the first screen: where the pictures and the summary are, as Chromium lays
# the page out in a 1400 x 900 window (a script added to a copy writes the
# boxes into the DOM; the tail list measured unfolded)
st_shot "$T/chromium.err" "$SHOTS/html-1400x900.png" 1400 900 "file://$T/report.html"
layout='<script>window.addEventListener("load",function(){var o={};["heat-latency","glance","heat-position-0","rates","tail-cdf"].forEach(function(id){var e=document.getElementById(id);if(e){var r=e.getBoundingClientRect();o[id]=[r.left,r.top,r.right,r.bottom];}});document.querySelectorAll("details").forEach(function(d){d.open=true;});var t=document.getElementById("tail-table");if(t){o["tail-table"]=[0,0,t.getBoundingClientRect().width,0];}var p=document.createElement("pre");p.id="layout";p.textContent=JSON.stringify(o);document.body.appendChild(p);});</script>'
sed "s#</body>#$layout</body>#" "$T/report.html" >"$T/layout.html"
chrome --dump-dom --window-size=1400,900 "file://$T/layout.html" >"$T/layout-dom.html"
bad=$(python3 - "$T/layout-dom.html" "$T/report.html" "$T/summary-table.csv" <<'PY'
import csv, json, re, sys, html
dom = open(sys.argv[1]).read()
m = re.search(r'<pre id="layout">(.*?)</pre>', dom)
box = json.loads(html.unescape(m.group(1))) if m else {}
bad = []
for id in ("heat-latency", "glance"):
    b = box.get(id)
    if not b or b[2] > 1400 or b[3] > 900:
        bad.append("%s not within the first 1400 x 900 px: %s" % (id, b))
for id in ("heat-position-0", "rates", "tail-cdf"):
    if id not in box: bad.append(id + ": no such picture")
    elif "heat-latency" in box and box["heat-latency"][1] > box[id][1]:
        bad.append(id + " above the latency heat map")
t = box.get("tail-table")
if not t or t[2] > 1400: bad.append("tail list %s px wide" % (t and t[2]))
page = open(sys.argv[2]).read()
# the order of the page: the heat map, then the glance; tables come folded
if not (0 <= page.find('id="heat-latency"') < page.find('id="glance"') < page.find("<details")):
    bad.append("the page does not open with the heat map and the summary")
for id in ("summary-table", "sizes-table", "seek-table", "hist-table", "depth-table", "tail-table"):
    pos = page.find('id="%s"' % id)
    if pos < 0 or page.rfind("<details", 0, pos) < page.rfind("</details>", 0, pos):
        bad.append(id + " not folded")
# the glance: the summary CSV's rows of stage total, its columns by name
rows = list(csv.reader(open(sys.argv[3])))
cols = ["group", "ios", "iops", "mb_s", "busy_s", "p50_us", "p99_us", "p99_9_us", "max_us"]
idx = {h: i for i, h in enumerate(rows[0])}
want = [[r[idx[c]] for c in cols] for r in rows[1:] if r[idx["stage"]] == "total"] if set(cols) <= set(idx) else []
g = re.search(r'<table id="glance".*?<tbody>(.*?)</tbody>', dom, re.S)
got = [[html.unescape(c) for c in re.findall(r"<td>(.*?)</td>", tr)] for tr in re.findall(r"<tr>(.*?)</tr>", g.group(1))] if g else []
if not want or got != want: bad.append("glance %r, summary CSV %r" % (got[:2], want[:2]))
print("; ".join(bad))
PY
) || bad="the check itself failed: $bad"
[ -z "$bad" ] && pass reports_html_first_screen || fail reports_html_first_screen "$bad"

# the screenshots: the first screen's pixels, and within it the middle of
# each heat map's plot area (its box as laid out above, 15-80 % across,
# 15-85 % down: no colour bar, no axis); the tall one a PNG at least
bad=$(python3 - "$T/layout-dom.html" "$SHOTS/html-1400x900.png" "$(dirname "$0")/../png.py" <<'PY'
import html, json, re, subprocess, sys
dom = open(sys.argv[1]).read()
m = re.search(r'<pre id="layout">(.*?)</pre>', dom)
box = json.loads(html.unescape(m.group(1))) if m else {}
def stats(*crop):
    r = subprocess.run([sys.executable, sys.argv[3], sys.argv[2]] + (["--crop", ",".join(str(int(v)) for v in crop)] if crop else []),
                       capture_output=True, text=True)
    return json.loads(r.stdout) if r.returncode == 0 else {"error": r.stderr.strip()}
bad = []
s = stats()
if s.get("width") != 1400 or s.get("height") != 900 or s.get("top_share", 1) > 0.9 or s.get("colours", 0) < 100:
    bad.append("first screen %s" % s)
for id in ("heat-latency", "heat-position-0"):
    b = box.get(id)
    if not b:
        bad.append(id + ": not laid out"); continue
    l, t, r, bt = b
    c = stats(l + 0.15 * (r - l), t + 0.15 * (bt - t), 0.65 * (r - l), 0.7 * (bt - t))
    if c.get("colours", 0) < 20 or c.get("vivid", 0) < 0.2 * c.get("pixels", 1):
        bad.append("%s's cells on the screen: %s" % (id, c))
print("; ".join(bad))
PY
) || bad="the check itself failed: $bad"
python3 "$(dirname "$0")/../png.py" "$SHOTS/html-1200x2400.png" | grep -q '"width": 1200, "height": 2400' || bad+=" html-1200x2400.png not a 1200 x 2400 PNG: $(tail -2 "$T/chromium.err")"
[ -z "$bad" ] && pass "reports_html_screens: $SHOTS/html-1400x900.png, html-1200x2400.png" ||
	fail reports_html_screens "$bad"
echo "page: $size bytes"
