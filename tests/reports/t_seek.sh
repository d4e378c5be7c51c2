#!/usr/bin/env bash
# st-analyze --seek against fio and btt. fio O_DIRECT 4 KiB reads on a loop
# device (merges off), once with --percentage_random=30 and once purely
# sequential, each recorded on its own:
#   - the sequential share (distance 0) is within 2 points of the share of
#     fio's I/Os, in the order of its --write_iolog, that start where the one
#     before ended (the first from sector 0, as btt counts it);
#   - on the blktrace export of the same recording (st-format convert --to
#     blktrace), btt -s writes every request's D2D seek distance; bucketed the
#     way --seek buckets them (0; else log2 of |distance|, forward and
#     backward), the counts per bucket are the same.
# A failed check keeps the run's recording, its blktrace export, btt's
# output and --seek's in a directory it names.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"
. "$(dirname "$0")/../format/blktrace.sh"
rec_require_bpf reports_seek
command -v btt >/dev/null && command -v blkparse >/dev/null ||
	{ skip reports_seek "btt/blkparse not installed (blktrace package)"; exit 0; }

st_tmpdir T
st_loopdev L 128
st_nomerges "$L"
NAME=$(basename "$L")

for run in mixed:--percentage_random=30 seq:--rw=read; do
	name=${run%%:*}
	opt=${run#*:}
	rw=--rw=randread
	[ "$name" = seq ] && rw=
	st-record -o "$T/$name.sttrace" -e block -d "$L" -- \
		fio --name=seek --filename="$L" --direct=1 --ioengine=psync $rw $opt --bs=4k \
		--number_ios=3000 --size=100M --randrepeat=1 --norandommap \
		--write_iolog="$T/$name.iolog" --output="$T/$name.fio" 2>"$T/$name.log" ||
		{ fail reports_seek_record "st-record $name failed: $(tail -1 "$T/$name.log")"; exit 1; }

	# fio's sequential share: I/Os starting at the previous one's end
	want=$(awk '$3 == "read" { n++; if ($4 == end) s++; end = $4 + $5 }
		END { printf "%.4f %d", 100 * s / n, n }' "$T/$name.iolog")
	st-analyze "$T/$name.sttrace" --seek --csv --dev "$L" >"$T/$name.csv" 2>"$T/err" ||
		{ fail reports_seek_run "st-analyze --seek failed: $(tail -1 "$T/err")"; exit 1; }
	got=$(awk -F, -v g="$NAME read" '$1 == g && $2 == "zero" { print $6 }' "$T/$name.csv")
	if [ -n "$got" ] && awk -v w="${want% *}" -v g="$got" 'BEGIN { d = w - g; exit !(d <= 2 && d >= -2) }'; then
		pass "reports_seek_${name}_share"
	else
		fail "reports_seek_${name}_share" "fio sequential ${want% *}% of ${want#* } I/Os, --seek ${got:-none}%; kept in $(st_keep "seek_$name" "$T/$name".*)"
	fi
	echo "$name: fio sequential ${want% *}%, st-analyze --seek $got%"

	# btt's D2D seeks of the same requests
	mkdir -p "$T/$name.bt"
	bt=$T/$name.bt/$NAME
	bt_export "$T/$name.sttrace" "$bt" >"$T/$name.bt.err" ||
		{ fail "reports_seek_${name}_btt" "export: $(cat "$T/$name.bt.err"); kept in $(st_keep "seek_$name" "$T/$name".*)"; continue; }
	blkparse -q -i "$bt" -d "$bt.bin" -O >/dev/null 2>&1
	(cd "$T/$name.bt" && btt -i "$bt.bin" -s seeks >"$bt.btt.txt" 2>&1)
	# btt names them seeks_MAJ,MIN_d2d_r.dat: time and distance of each read at D
	dat=$(ls "$T/$name.bt"/seeks_*_d2d_r.dat 2>/dev/null | head -1)
	if [ -z "$dat" ]; then
		fail "reports_seek_${name}_btt" "btt wrote no seek file: $(ls "$T/$name.bt" | tr '\n' ' '); kept in $(st_keep "seek_$name" "$T/$name".*)"
		continue
	fi
	awk '{ d = $2 + 0; if (d == 0) k = "zero 0"; else { a = d < 0 ? -d : d; s = 0
		while (a >= 2) { a = int(a / 2); s++ }
		k = (d > 0 ? "forward " : "backward ") (s ? 2 ^ s : 0) } n[k]++ }
		END { for (k in n) printf "%s %d\n", k, n[k] }' "$dat" | sort >"$T/$name.btt"
	awk -F, -v g="$NAME read" '$1 == g { print $2, $3, $5 }' "$T/$name.csv" | sort >"$T/$name.ours"
	echo "$name: btt seeks by bucket: $(tr "\n" " " <"$T/$name.btt")"
	if [ -s "$T/$name.btt" ] && cmp -s "$T/$name.btt" "$T/$name.ours"; then
		pass "reports_seek_${name}_btt"
	else
		fail "reports_seek_${name}_btt" "btt $(tr '\n' ' ' <"$T/$name.btt"); --seek $(tr '\n' ' ' <"$T/$name.ours"); kept in $(st_keep "seek_$name" "$T/$name".*)"
	fi
done
