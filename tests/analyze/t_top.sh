#!/usr/bin/env bash
# --quantile's list holds --top N I/Os at most, and N is only a bound: its
# memory grows with the I/Os listed, not with N (a 2 GB guest ran out of
# memory on --top 10^7). A synthetic trace of 2,000 operations, listed
# whole (--quantile 0.0001), under a 500 MB address space: --top 2*10^9
# prints what --top 100000 prints, one row per complete I/O of the
# summary (the sum of its per-device-and-op counts).
. "$(dirname "$0")/../lib.sh"
st_tmpdir T

st-format synth -o "$T/s.sttrace" --ios 2000 >/dev/null || { fail analyze_top_synth "synth failed"; exit 1; }
list() { (ulimit -v 500000; exec st-analyze --csv --quantile 0.0001 --top "$1" "$T/s.sttrace") 2>"$T/err.$1"; }
list 100000 >"$T/small.csv" || { fail analyze_top_small "$(cat "$T/err.100000")"; exit 1; }
if list 2000000000 >"$T/huge.csv"; then
	pass analyze_top_huge_runs
else
	fail analyze_top_huge_runs "st-analyze --top 2000000000 under ulimit -v 500000: $(cat "$T/err.2000000000")"
fi
if cmp -s "$T/small.csv" "$T/huge.csv"; then
	pass analyze_top_huge_same
else
	fail analyze_top_huge_same "--top 2000000000 and --top 100000 print differently"
fi
# The summary's I/O counts: "DEV OP: N I/Os, ..." (incomplete ones are not listed)
ios=$(st-analyze "$T/s.sttrace" | awk '/ I\/Os, / { n += $3 - $NF } END { print n + 0 }')
rows=$(($(wc -l <"$T/small.csv") - 1))
if [ "$ios" -gt 0 ] && [ "$rows" -eq "$ios" ]; then
	pass analyze_top_all_listed
else
	fail analyze_top_all_listed "$rows rows listed, the summary counts $ios complete I/Os"
fi
