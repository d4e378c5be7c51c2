#!/usr/bin/env bash
# st-analyze --sizes against fio's own log of what it issued: fio O_DIRECT
# random reads with --bssplit=4k/50:16k/30:64k/20 on a loop device (merges
# off, so each fio I/O is one request of its size); fio's --write_iolog
# names every I/O with its length. The count of each size equals the
# iolog's, and each size's share of the log2 histogram is within 1 point of
# fio's split as the iolog counts it.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"
rec_require_bpf reports_sizes

st_tmpdir T
st_loopdev L 128
st_nomerges "$L"
NAME=$(basename "$L")

check reports_sizes_record st-record -o "$T/r.sttrace" -e block -d "$L" -- \
	fio --name=sizes --filename="$L" --direct=1 --ioengine=psync --rw=randread \
	--bssplit=4k/50:16k/30:64k/20 --number_ios=2000 --size=100M --randrepeat=1 --norandommap \
	--write_iolog="$T/iolog" --output="$T/fio.out"

# (--norandommap: fio never trims an I/O to the blocks its random map left free)
# fio's view: bytes per I/O (iolog v3: ts file action offset len)
awk '$3 == "read" { n[$5]++ } END { for (s in n) print s, n[s] }' "$T/iolog" | sort -n >"$T/want"
st-analyze "$T/r.sttrace" --sizes --csv --dev "$L" >"$T/sizes.csv" 2>"$T/err" ||
	{ fail reports_sizes_run "st-analyze --sizes failed: $(tail -1 "$T/err")"; exit 1; }
awk -F, -v g="$NAME read" '$1 == g && $2 == "size" { print $3, $5 }' "$T/sizes.csv" | sort -n >"$T/got"
if [ "$(wc -l <"$T/want")" -eq 3 ] && cmp -s "$T/want" "$T/got"; then
	pass reports_sizes_counts
else
	fail reports_sizes_counts "fio issued $(tr '\n' ' ' <"$T/want"), --sizes counts $(tr '\n' ' ' <"$T/got")"
fi

# the log2 histogram: 4 KiB, 16 KiB and 64 KiB are each the bottom of a slot
total=$(awk '{ t += $2 } END { print t }' "$T/want")
bad=$(awk -F, -v g="$NAME read" -v total="$total" '
	NR == FNR { split($0, f, " "); want[f[1]] = 100 * f[2] / total; next }
	$1 == g && $2 == "log2" { got[$3] = $6 }
	END {
		for (s in want) { d = got[s] - want[s]; if (d < 0) d = -d
			if (!(s in got) || d > 1) printf "%s B: fio %.2f%%, histogram %s%%; ", s, want[s], got[s] }
		for (s in got) if (!(s in want)) printf "%s B: not issued by fio; ", s
	}' "$T/want" "$T/sizes.csv")
[ -z "$bad" ] && pass reports_sizes_shares || fail reports_sizes_shares "$bad"

st-analyze "$T/r.sttrace" --sizes --dev "$L" >"$T/sizes.txt" 2>&1
if grep -q "bytes  *: count  *distribution" "$T/sizes.txt" && grep -q "^ *65536 -> 131071 *: " "$T/sizes.txt"; then
	pass reports_sizes_text
else
	fail reports_sizes_text "no biolatency-style size histogram: $(head -5 "$T/sizes.txt" | tr '\n' ' ')"
fi
