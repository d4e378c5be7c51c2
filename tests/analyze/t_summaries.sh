#!/usr/bin/env bash
# Mergeable summaries: N traces saved one summary each (--save-summary) and
# merged (st-analyze merge) print what analyzing the N traces together
# prints: every count exact (and the I/Os synth wrote), min/avg/max exact,
# quantiles within the sketch's stated relative error (0.39 %) of the exact
# ones. A merged summary merges again; diff reads summaries; a corrupt or
# newer-version summary is one line of error and exit 2.
. "$(dirname "$0")/../lib.sh"

IOS=6000 N=3
st_tmpdir dir
files=() sums=()
for i in $(seq 1 $N); do
	st-format synth -o "$dir/$i.sttrace" --ios $IOS --seed $((i + 20)) >/dev/null ||
		{ fail analyze.summaries.synth "synth failed"; exit 1; }
	files+=("$dir/$i.sttrace")
	sums+=("$dir/$i.sum")
	st-analyze "$dir/$i.sttrace" --save-summary "$dir/$i.sum" >/dev/null ||
		{ fail analyze.summaries.save "--save-summary failed"; exit 1; }
done

# Exact quantiles for the traces (every sample kept), against the merged sketches.
st-analyze --csv --exact-limit 1000000 "${files[@]}" >"$dir/together.csv" 2>/dev/null
st-analyze merge --csv "${sums[@]}" >"$dir/merged.csv" 2>"$dir/merged.err"
# Columns: group,ios,iops,mb_s,incomplete,errors,stage,n,min_us,avg_us,p50..p99_95 (11-15),max_us,quantiles.
cmp_rows() {
	awk -F, -v tol=0.0039 'NR == FNR { if (FNR > 1) want[$1 "," $7] = $0; next }
		FNR == 1 { next }
		{ k = $1 "," $7; if (!(k in want)) { print "extra row " k; bad = 1; next }
		  split(want[k], w, ","); seen++
		  for (c = 2; c <= 10; c++) if (c != 7 && w[c] != $c) { print k " column " c ": " $c " want " w[c]; bad = 1 }
		  if (w[16] != $16) { print k " max " $16 " want " w[16]; bad = 1 }
		  for (c = 11; c <= 15; c++) { d = $c - w[c]; if (d < 0) d = -d
		    if (d > w[c] * tol + 0.0005) { print k " quantile column " c ": " $c " want " w[c]; bad = 1 } } }
		END { if (seen != length(want)) { print seen " rows, want " length(want); bad = 1 }; exit bad }' "$1" "$2"
}
ios=$(awk -F, '$7 == "total" { s += $2 } END { print s + 0 }' "$dir/merged.csv")
if why=$(cmp_rows "$dir/together.csv" "$dir/merged.csv") && [ "$ios" = $((N * IOS)) ] &&
	grep -q "^$N files" "$dir/merged.err"; then
	pass analyze.summaries.merge_equals_together
else
	fail analyze.summaries.merge_equals_together "$ios I/Os (want $((N * IOS))): $(echo "$why" | head -3 | tr '\n' ';')"
fi

# A merged summary is a summary: merging it with the rest gives the same table.
st-analyze merge --save-summary "$dir/12.sum" "${sums[0]}" "${sums[1]}" >/dev/null &&
	st-analyze merge --csv "$dir/12.sum" "${sums[2]}" >"$dir/again.csv" 2>/dev/null &&
	cmp -s "$dir/again.csv" "$dir/merged.csv" && pass analyze.summaries.merge_merged ||
	fail analyze.summaries.merge_merged "merging a merged summary changed the table"

# Size: per group and stage the sketch's non-empty buckets, not the samples.
size=$(stat -c %s "${sums[0]}")
trace=$(stat -c %s "${files[0]}")
[ "$size" -lt $((trace / 4)) ] && pass analyze.summaries.small ||
	fail analyze.summaries.small "summary $size bytes for a $trace-byte trace"

# diff on summaries (saved --by op, the groups diff uses) gates like diff on traces.
st-format synth -o "$dir/slow.sttrace" --ios 20000 --seed 2 --slow-factor 1.5 >/dev/null &&
	st-format synth -o "$dir/base.sttrace" --ios 20000 --seed 1 >/dev/null
st-analyze --by op "$dir/slow.sttrace" --save-summary "$dir/slow.sum" >/dev/null
st-analyze --by op "$dir/base.sttrace" --save-summary "$dir/base.sum" >/dev/null
st-analyze diff "$dir/base.sum" "$dir/slow.sum" >"$dir/diff.out" 2>&1
rc_slow=$?
st-analyze diff "$dir/base.sum" "$dir/base.sum" >/dev/null 2>&1
rc_same=$?
[ $rc_slow = 3 ] && [ $rc_same = 0 ] && grep -q 'REGRESSED (gate)' "$dir/diff.out" &&
	pass analyze.summaries.diff || fail analyze.summaries.diff "exit $rc_slow for a slower device, $rc_same for itself"

# Bad summaries: one line naming the file, exit 1 ($RC: 2, a usage error) (after "bounded": in 20 s and 1 GB).
expect_error() {
	local name=$1 word=$2 rc
	shift 2
	if [ "$1" = bounded ]; then
		shift
		(ulimit -v 1000000; timeout 20 st-analyze "$@") >/dev/null 2>"$dir/err"
	else
		st-analyze "$@" >/dev/null 2>"$dir/err"
	fi
	rc=$?
	if [ $rc = "${RC:-1}" ] && [ "$(wc -l <"$dir/err")" = 1 ] && grep -q -- "$word" "$dir/err"; then
		pass "$name"
	else
		fail "$name" "exit $rc: $(head -2 "$dir/err" | tr '\n' ' ')"
	fi
}
sed '1s/ 2$/ 3/' "${sums[0]}" >"$dir/newer.sum"
expect_error analyze.summaries.newer "version 3 is newer" merge "$dir/newer.sum" "${sums[1]}"
head -c $(($(stat -c %s "${sums[0]}") / 2)) "${sums[0]}" >"$dir/cut.sum"
expect_error analyze.summaries.cut "cut.sum: line" merge "$dir/cut.sum"
sed '0,/^stage /s/ \([0-9]*\):\([0-9]*\)/ 999999:\2/' "${sums[0]}" >"$dir/bucket.sum"
expect_error analyze.summaries.bad_bucket "bucket.sum: line" merge "$dir/bucket.sum"
sed '0,/^group /s/^group [0-9]*/group x/' "${sums[0]}" >"$dir/group.sum"
expect_error analyze.summaries.bad_group "group.sum: line" merge "$dir/group.sum"
expect_error analyze.summaries.not_summary "1.sttrace: line 1: not an st-analyze summary" merge "${files[0]}"
# What is no summary costs a bounded read: a device is refused before reading,
# an endless line (through a pipe) at the longest line a summary has.
expect_error analyze.summaries.device "/dev/zero: not an st-analyze summary" bounded merge /dev/zero
expect_error analyze.summaries.endless_line "line 3: longer than" bounded merge \
	<(printf 'sttrace-summary 1\nby devop\n'; yes | tr -d '\n')
st-analyze --by op "${files[0]}" --save-summary "$dir/op.sum" >/dev/null
expect_error analyze.summaries.mixed_by "grouped otherwise" merge "${sums[0]}" "$dir/op.sum"
RC=2 expect_error analyze.summaries.merge_option "--dev" merge --dev loop0 "${sums[0]}"
expect_error analyze.summaries.no_write "--save-summary" "${files[0]}" --save-summary "$dir/no/such/dir.sum"

# A label with a newline, a backslash and a space (a command name can hold
# them) survives a merge byte for byte, escaped as \xNN; a bad escape is an error.
{
	printf 'sttrace-summary 2\nby comm\nfiles 1\nrecovered 0\nevents 4\nlost_events 0\nwall_clock 0 1000\n'
	for c in ios incomplete stale orphan_exits orphan_requests orphan_completions out_of_order; do
		printf 'corr.%s %d\n' $c $([ $c = ios ] && echo 1 || echo 0)
	done
	printf 'group 1 4096 0 0 0 0 0 a\\x0ab\\x5cc d\nbusy 100 600\nstage total 1 500 500 500 378:1\nend\n'
} >"$dir/label.sum"
st-analyze merge --save-summary "$dir/label2.sum" "$dir/label.sum" >/dev/null 2>&1 &&
	cmp -s "$dir/label.sum" "$dir/label2.sum" && pass analyze.summaries.label_escapes ||
	fail analyze.summaries.label_escapes "$(diff "$dir/label.sum" "$dir/label2.sum" 2>&1 | head -3 | tr '\n' ' ')"
sed 's/\\x0a/\\xZZ/' "$dir/label.sum" >"$dir/badlabel.sum"
expect_error analyze.summaries.bad_escape "badlabel.sum: line 15" merge "$dir/badlabel.sum"
# version 1, without busy lines, is read; a busy line twice in a group is not
sed '1s/ 2$/ 1/; /^busy /d' "$dir/label.sum" >"$dir/v1.sum"
check analyze.summaries.version1 st-analyze merge "$dir/v1.sum"
sed 's/^busy .*/&\n&/' "$dir/label.sum" >"$dir/busy2.sum"
expect_error analyze.summaries.busy_twice "busy2.sum: line 17" merge "$dir/busy2.sum"
