#!/usr/bin/env bash
# st-analyze diff BASE NEW --gnuplot DIR: for every op in both traces a
# CDF plot (diff_cdf_OP) and a quantile plot (diff_quantiles_OP), each as
# .dat, .gp, PNG (by its magic bytes) and SVG; the CDF data holds both
# traces: for every stage one base and one new block, each rising to
# fraction 1 at that trace's maximum of the stage as st-analyze --by op
# --csv reports it on that trace alone.
. "$(dirname "$0")/../lib.sh"

st_tmpdir dir
st-format synth -o "$dir/base.sttrace" --ios 3000 --seed 3 >/dev/null &&
	st-format synth -o "$dir/new.sttrace" --ios 3000 --seed 4 >/dev/null ||
	{ fail analyze.diff_gnuplot "synth failed"; exit 1; }
st-analyze diff "$dir/base.sttrace" "$dir/new.sttrace" --gnuplot "$dir/plots" >"$dir/out" 2>&1
rc=$?
ops=$(st-analyze --by op --csv "$dir/base.sttrace" 2>/dev/null | awk -F, 'NR > 1 { gsub(/"/, "", $1); print $1 }' | sort -u)
if [ $rc -gt 1 ] || [ -z "$ops" ]; then
	fail analyze.diff_gnuplot.files "diff failed ($rc): $(tail -1 "$dir/out")"
	exit 1
fi

missing=""
for op in $ops; do
	for kind in cdf quantiles; do
		for ext in dat gp; do
			[ -s "$dir/plots/diff_${kind}_$op.$ext" ] || missing="$missing diff_${kind}_$op.$ext"
		done
	done
done
[ -z "$missing" ] && pass analyze.diff_gnuplot.files || fail analyze.diff_gnuplot.files "missing:$missing"

if command -v gnuplot >/dev/null; then
	bad=""
	for op in $ops; do
		for kind in cdf quantiles; do
			f="$dir/plots/diff_${kind}_$op"
			[ "$(head -c 8 "$f.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] &&
				grep -q '<svg' "$f.svg" 2>/dev/null || bad="$bad diff_${kind}_$op"
		done
	done
	[ -z "$bad" ] && pass analyze.diff_gnuplot.images || fail analyze.diff_gnuplot.images "no PNG/SVG:$bad"
else
	skip analyze.diff_gnuplot.images "gnuplot not installed"
fi

# "OP STAGE max_us" of one trace alone, and the same from the CDF blocks' last lines.
maxima() { st-analyze --by op --csv "$1" 2>/dev/null | awk -F, 'NR > 1 { gsub(/"/, "", $1); print $1, $7, $16 }' | sort; }
blocks() { # blocks base|new: OP STAGE last-latency-of-block (fraction 1)
	for op in $ops; do
		awk -v op="$op" -v side="$1" '
			/^# / { on = ($3 == side); stage = $2; next }
			on && NF == 2 { last = $1; frac = $2 }
			on && NF == 0 && last != "" { if (frac == 1) print op, stage, last; last = "" }
			' "$dir/plots/diff_cdf_$op.dat"
	done | sort -u
}
common() { join -j1 <(awk '{ print $1 "/" $2, $3 }' "$1" | sort) <(awk '{ print $1 "/" $2 }' "$2" | sort); }
maxima "$dir/base.sttrace" >"$dir/base.max"
maxima "$dir/new.sttrace" >"$dir/new.max"
blocks base >"$dir/base.blocks"
blocks new >"$dir/new.blocks"
ok=1
for side in base new; do
	# every stage plotted for this side ends at that side's own maximum
	if [ ! -s "$dir/$side.blocks" ] ||
		! cmp -s <(awk '{ print $1 "/" $2, $3 }' "$dir/$side.blocks" | sort) \
			<(common "$dir/$side.max" "$dir/$side.blocks"); then
		ok=0
		echo "$side: $(head -3 "$dir/$side.blocks" | tr '\n' ';') vs $(head -3 "$dir/$side.max" | tr '\n' ';')"
	fi
done
[ "$(wc -l <"$dir/base.blocks")" = "$(wc -l <"$dir/new.blocks")" ] || ok=0
[ $ok = 1 ] && pass analyze.diff_gnuplot.data ||
	fail analyze.diff_gnuplot.data "the CDF data does not hold both traces' distributions"
