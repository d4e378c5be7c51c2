#!/usr/bin/env bash
# convert --to blktrace / blkparse and import-blktrace on a synthetic trace
# (no BPF needed), which has what the recordings of t_blktrace rarely show:
# splits (X, with their PDU), requeues (R), back and front merges (M, F),
# inserts (I), several devices and CPUs.
#   - `--to blkparse` prints blkparse's own text for the exported files,
#     statistics and the order of events of one nanosecond on several CPUs
#     (a dozen in this trace) included, and every one of those actions is
#     in it;
#   - export then import gives back the same block events.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"
. "$(dirname "$0")/blktrace.sh"

if ! command -v blkparse >/dev/null; then
	skip convert.blkparse.synth_text "blktrace tools not installed"
	skip import.blktrace.synth_roundtrip "blktrace tools not installed"
	exit 0
fi
st_tmpdir dir
st-format synth -o "$dir/s.sttrace" --ios 20000 --seed 5 >/dev/null &&
	st-format convert "$dir/s.sttrace" --to blkparse -o "$dir/ours.txt" ||
	{ fail convert.blkparse.synth_text "synth or convert failed"; exit 1; }
# blkparse names its statistics after its input: the files take the name
# --to blkparse gives them (the first device's).
name=$(sed -n 's/^CPU[0-9]* (\(.*\)):$/\1/p' "$dir/ours.txt" | head -1)
st-format convert "$dir/s.sttrace" --to blktrace -o "$dir/$name" ||
	{ fail convert.blkparse.synth_text "convert --to blktrace failed"; exit 1; }
LC_ALL=C blkparse -i "$dir/$name" 2>"$dir/err" | grep -v '^Input file' >"$dir/blkparse.txt"
actions=$(sed '/^CPU[0-9]* (/,$d' "$dir/ours.txt" | awk '{ print $6 }' | sort -u | tr -d '\n')
if cmp -s "$dir/ours.txt" "$dir/blkparse.txt" &&
	[ "$actions" = CDFGIMQRX ] && ! grep -qv '^Input file' "$dir/err"; then
	pass convert.blkparse.synth_text
else
	fail convert.blkparse.synth_text "actions $actions; $(diff "$dir/blkparse.txt" "$dir/ours.txt" | head -3 | tr '\n' ' ')"
fi

if st-format import-blktrace "$dir/$name".blktrace.* -o "$dir/imported.sttrace" 2>"$dir/import.err" &&
	cmp -s <(block_events "$dir/s.sttrace") <(block_events "$dir/imported.sttrace"); then
	pass import.blktrace.synth_roundtrip
else
	fail import.blktrace.synth_roundtrip "$(cat "$dir/import.err") $(diff <(block_events "$dir/s.sttrace") <(block_events "$dir/imported.sttrace") | head -3 | tr '\n' ' ')"
fi
