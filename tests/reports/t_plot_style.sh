#!/usr/bin/env bash
# --gnuplot's plots read at a glance (a synthetic trace of reads and writes
# on several devices):
#   - names are printed as they are: no enhanced text (svc_runq would lose
#     its underscore to a subscript);
#   - the CDF: a panel per group, reads and writes apart, 1 - p on a log
#     axis; within a panel every curve its own colour and dash, and a curve
#     only for a stage with a value above 0;
#   - the latency heat map: its y range the buckets that hold I/Os, its
#     colour on a log scale;
#   - short titles (no "interval 1.000000 s");
#   - each plot opened in headless Chromium as users see it, the PNG in a
#     window of its own size, the SVG in one of its viewBox's size; the
#     screenshots kept in build/tests/screenshots (plot-NAME.png.png,
#     plot-NAME.svg.png): each that size, not one colour, the curves in
#     colour (axes, grid and text are grey): every colour the CDF's script
#     gives a curve drawn in both, the heat maps' plot areas (their middle,
#     left of the colour bar) a tenth or more coloured cells.
. "$(dirname "$0")/../lib.sh"

st_tmpdir T
st-format synth -o "$T/a.st" --ios 20000 --devices 2 --seed 5 >/dev/null || { fail plot_style.synth "synth failed"; exit 1; }
st-analyze "$T/a.st" --gnuplot "$T/plots" >"$T/out" 2>&1 || { fail plot_style.run "$(tail -1 "$T/out")"; exit 1; }
P=$T/plots

bad=$(grep -l -w "enhanced" "$P"/*.gp | tr '\n' ' ')
[ -z "$bad" ] && pass plot_style.noenhanced || fail plot_style.noenhanced "enhanced text in $bad"

# the CDF: panel titles, and per panel each curve's colour and dash
bad=$(awk '
	/set logscale xy/ { logy = 1 }
	/^  set title / { t = $0; gsub(/^  set title .|.$/, "", t); panels[++np] = t }
	/^  plot .*cdf.dat/ {
		n = split($0, c, ", \x27cdf.dat\x27")
		delete seen
		for (i = 1; i <= n; i++) {
			if (!match(c[i], /lc rgb \x27#[0-9a-f]+\x27 dt [0-9]+/)) { printf "no style: %s; ", c[i]; continue }
			s = substr(c[i], RSTART, RLENGTH)
			if (s in seen) printf "%s: two curves %s; ", panels[np], s
			seen[s] = 1
		}
	}
	END {
		if (!logy) printf "no log axes; "
		r = w = 0
		for (i = 1; i <= np; i++) { if (panels[i] ~ / read$/) r = 1; if (panels[i] ~ / write$/) w = 1 }
		if (!r || !w) printf "no read and write panels apart: %d panels; ", np
	}' "$P/cdf.gp")
[ -z "$bad" ] && pass plot_style.cdf_curves || fail plot_style.cdf_curves "$bad"
# every curve's data holds a latency above 0, and 1 - p falls below 1
bad=$(awk '/^# / { if (name != "" && !(max > 0 && min1p < 1)) printf "%s; ", name; name = $0; max = 0; min1p = 1; next }
	NF == 2 { max = $1 > max ? $1 : max; min1p = $2 < min1p ? $2 : min1p }
	END { if (name != "" && !(max > 0 && min1p < 1)) printf "%s; ", name }' "$P/cdf.dat")
[ -z "$bad" ] && pass plot_style.cdf_data || fail plot_style.cdf_data "curves without data: $bad"

# the heat map's y range: the octaves with I/Os (.dat rows "time y count", y = octave + 0.5)
read -r lo hi <<<"$(awk 'NF == 3 && $3 > 0 { k = $2 - 0.5; lo = (lo == "" || k < lo) ? k : lo; hi = k > hi ? k : hi } END { print lo, hi + 1 }' "$P/heatmap_latency.dat")"
range=$(sed -n 's/^  set yrange \[\([0-9.]*\):\([0-9.]*\)\]$/\1 \2/p' "$P/heatmap_latency.gp")
if [ "$range" = "$lo $hi" ] && grep -q "set logscale cb" "$P/heatmap_latency.gp"; then
	pass plot_style.heatmap_fitted
else
	fail plot_style.heatmap_fitted "y range '$range', the data's octaves $lo..$hi; log colour: $(grep -c 'logscale cb' "$P/heatmap_latency.gp")"
fi

bad=$(grep -h "title '" "$P"/*.gp | grep -E "[0-9]\.[0-9]{4,}|\(interval" | tr '\n' ' ')
[ -z "$bad" ] && pass plot_style.short_titles || fail plot_style.short_titles "$bad"

if command -v gnuplot >/dev/null; then
	bad=""
	for p in cdf heatmap_latency heatmap_position timeseries; do
		file "$P/$p.png" | grep -q "1100 x 700" || bad+="$p "
	done
	[ -z "$bad" ] && pass plot_style.png || fail plot_style.png "not 1100 x 700 PNG: $bad"
else
	skip plot_style.png "gnuplot not installed"
fi

CHROMIUM=$(command -v chromium || command -v chromium-browser)
if ! command -v gnuplot >/dev/null || [ -z "$CHROMIUM" ]; then
	skip plot_style.screens "gnuplot or chromium not installed"
	exit 0
fi
st_screenshots SHOTS
bad=""
curves=()
for c in $(grep -o "lc rgb '#[0-9a-f]*'" "$P/cdf.gp" | grep -o "#[0-9a-f]*" | sort -u); do curves+=(--colour "$c"); done
for p in cdf heatmap_latency heatmap_position timeseries; do
	read -r pw ph <<<"$(file "$P/$p.png" | sed -n 's/.*PNG image data, \([0-9]*\) x \([0-9]*\),.*/\1 \2/p')"
	read -r sw sh <<<"$(sed -n 's/^ *viewBox="0 0 \([0-9.]*\) \([0-9.]*\)".*/\1 \2/p' "$P/$p.svg")"
	for f in png svg; do
		if [ $f = png ]; then w=$pw h=$ph; else w=$sw h=$sh; fi
		shot=$SHOTS/plot-$p.$f.png
		rm -f "$shot"
		[ -n "$w" ] && st_shot "$T/chromium.err" "$shot" "$w" "$h" "file://$P/$p.$f"
		opts=()
		case $p in
		heatmap_*) opts=(--crop "$((w / 10)),$((h / 10)),$((w * 7 / 10)),$((h * 3 / 4))") ;;
		cdf) opts=("${curves[@]}") ;;
		esac
		stats=$(python3 "$(dirname "$0")/../png.py" "$shot" "${opts[@]}" 2>&1)
		bad+=$(python3 - "$p.$f" "$w" "$h" "$stats" <<'PY'
import json, sys
name, w, h = sys.argv[1], sys.argv[2], sys.argv[3]
try:
    s = json.loads(sys.argv[4])
except ValueError:
    print("%s: %s; " % (name, sys.argv[4])); sys.exit()
bad = []
if not w or (s["width"], s["height"]) != (int(float(w)), int(float(h))):
    bad.append("%sx%s px, the plot is %sx%s" % (s["width"], s["height"], w, h))
if s["top_share"] > 0.98 or s["colours"] < 8:
    bad.append("blank: %d colours, the commonest %.1f %%" % (s["colours"], 100 * s["top_share"]))
if name.startswith("heatmap_"):
    if s["vivid"] < 0.1 * s["pixels"]:
        bad.append("cells in colour on %d of %d px of the plot area" % (s["vivid"], s["pixels"]))
elif s["vivid"] < 1000:
    bad.append("%d px in colour: no curves" % s["vivid"])
missing = [c for c, n in s["near"].items() if n < 20]
if missing:
    bad.append("curves of colour %s not drawn" % " ".join(missing))
print("%s: %s; " % (name, ", ".join(bad)) if bad else "")
PY
)
	done
done
[ -z "$bad" ] && pass "plot_style.screens: $SHOTS/plot-*.png.png, plot-*.svg.png" || fail plot_style.screens "$bad"
