#!/usr/bin/env bash
# --gnuplot DIR writes a .dat and .gp per plot, renders valid PNG and SVG,
# and the .gp scripts run again on their own.
. "$(dirname "$0")/../lib.sh"

st_tmpdir dir
st-format synth -o "$dir/a.sttrace" --ios 3000 --seed 3 >/dev/null || { fail analyze.gnuplot "synth failed"; exit 1; }
plots="cdf timeseries heatmap_latency heatmap_position"
st-analyze --gnuplot "$dir/plots" "$dir/a.sttrace" >"$dir/out" 2>&1 ||
	{ fail analyze.gnuplot.run "st-analyze failed: $(tail -1 "$dir/out")"; exit 1; }
missing=""
for p in $plots; do
	[ -s "$dir/plots/$p.dat" ] && [ -s "$dir/plots/$p.gp" ] || missing="$missing $p"
done
[ -z "$missing" ] && pass analyze.gnuplot.files || fail analyze.gnuplot.files "missing:$missing"

if ! command -v gnuplot >/dev/null; then
	skip analyze.gnuplot.png "gnuplot not installed"
	skip analyze.gnuplot.svg "gnuplot not installed"
	skip analyze.gnuplot.scripts "gnuplot not installed"
	exit 0
fi
bad=""
for p in $plots; do
	[ "$(head -c 8 "$dir/plots/$p.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || bad="$bad $p"
done
[ -z "$bad" ] && pass analyze.gnuplot.png || fail analyze.gnuplot.png "not PNG:$bad"
bad=""
for p in $plots; do
	grep -q '<svg' "$dir/plots/$p.svg" 2>/dev/null || bad="$bad $p"
done
[ -z "$bad" ] && pass analyze.gnuplot.svg || fail analyze.gnuplot.svg "not SVG:$bad"
bad=""
for p in $plots; do
	rm -f "$dir/plots/$p.png"
	(cd "$dir/plots" && gnuplot "$p.gp" >/dev/null 2>&1) && [ -s "$dir/plots/$p.png" ] || bad="$bad $p"
done
[ -z "$bad" ] && pass analyze.gnuplot.scripts || fail analyze.gnuplot.scripts "failed:$bad"
