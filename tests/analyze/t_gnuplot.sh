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

# Two recordings of 16 devices each (16 processes, one device each): the
# position heat map has a panel for each of the first 16 devices, the
# first file's, and says that the second file's 2000 I/Os are not shown.
st-format synth -o "$dir/d1.sttrace" --ios 3000 --devices 16 --procs 16 --seed 5 >/dev/null &&
	st-format synth -o "$dir/d2.sttrace" --ios 2000 --devices 16 --procs 16 --seed 6 >/dev/null &&
	st-analyze --gnuplot "$dir/devs" "$dir/d1.sttrace" "$dir/d2.sttrace" >"$dir/out" 2>&1 ||
	{ fail analyze.gnuplot.devices "st-analyze failed: $(tail -1 "$dir/out")"; exit 1; }
gp=$dir/devs/heatmap_position.gp
panels=$(grep -c "^  set title 'Position heatmap, '.'$dir/d1.sttrace " "$gp")
if grep -q "^  set multiplot layout 16,1 title 'Position heatmap: 2000 I/Os of devices past the first 16 not shown'$" "$gp" &&
	[ "$panels" = 16 ]; then
	pass analyze.gnuplot.devices
else
	fail analyze.gnuplot.devices "$panels panels of d1's devices, want 16; $(grep multiplot "$gp" | head -1)"
fi

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
