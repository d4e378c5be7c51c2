#!/usr/bin/env bash
# --sizes, --seek, --hist and --depth with --gnuplot DIR: a .dat and .gp
# each, rendered to PNG and SVG, whose data are the reports' --csv numbers
# (a synthetic trace: the plots' data against the CSV, not the trace).
. "$(dirname "$0")/../lib.sh"

st_tmpdir T
st-format synth -o "$T/a.sttrace" --ios 3000 --seed 3 >/dev/null || { fail reports_plots "synth failed"; exit 1; }
st-analyze "$T/a.sttrace" --sizes --seek --hist --depth --gnuplot "$T/plots" >"$T/out" 2>&1 ||
	{ fail reports_plots_run "st-analyze failed: $(tail -1 "$T/out")"; exit 1; }
missing=""
for p in sizes seeks hist depth; do
	[ -s "$T/plots/$p.dat" ] && [ -s "$T/plots/$p.gp" ] || missing="$missing $p"
done
[ -z "$missing" ] && pass reports_plots_files || fail reports_plots_files "missing:$missing"

# "# LABEL" then "LOW COUNT" lines per block; the CSV's rows of the same label and slot
st-analyze "$T/a.sttrace" --hist --csv 2>/dev/null |
	awk -F, 'NR > 1 && $5 > 0 { print $1 "|" ($3 ? $3 : 1) "|" $5 }' | sort >"$T/hist.csv.rows"
awk '/^# / { label = substr($0, 3); next } NF == 2 { print label "|" $1 "|" $2 }' "$T/plots/hist.dat" |
	sort >"$T/hist.dat.rows"
if [ -s "$T/hist.csv.rows" ] && cmp -s "$T/hist.csv.rows" "$T/hist.dat.rows"; then
	pass reports_plots_hist_data
else
	fail reports_plots_hist_data "$(diff "$T/hist.csv.rows" "$T/hist.dat.rows" | head -3 | tr '\n' ' ')"
fi
st-analyze "$T/a.sttrace" --depth --csv 2>/dev/null | awk -F, 'NR > 1 { print $1 "|" $2 "|" $4 }' | sort >"$T/depth.csv.rows"
awk '/^# / { label = substr($0, 3); sub(/: depth percent_of_time$/, "", label); next }
	NF == 2 { print label "|" $1 "|" $2 }' "$T/plots/depth.dat" | sort >"$T/depth.dat.rows"
if [ -s "$T/depth.csv.rows" ] && cmp -s "$T/depth.csv.rows" "$T/depth.dat.rows"; then
	pass reports_plots_depth_data
else
	fail reports_plots_depth_data "$(diff "$T/depth.csv.rows" "$T/depth.dat.rows" | head -3 | tr '\n' ' ')"
fi

if ! command -v gnuplot >/dev/null; then
	skip reports_plots_render "gnuplot not installed"
	exit 0
fi
bad=""
for p in sizes seeks hist depth; do
	[ "$(head -c 8 "$T/plots/$p.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] &&
		grep -q '<svg' "$T/plots/$p.svg" || bad="$bad $p"
done
[ -z "$bad" ] && pass reports_plots_render || fail reports_plots_render "not rendered:$bad"
