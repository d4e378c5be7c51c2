#!/usr/bin/env bash
# A trace from a bug report runs no command and injects nothing: names that
# hold a newline and a gnuplot command (`!cmd`, system(), a backquote), a
# quote that would end a gnuplot string, HTML, or a spreadsheet formula reach
# every output as text. A synthetic trace is given such a file name, command
# name, device name and host name (tests/format/replace_strings.c), and the
# crafted files of the issue (tests/format/hostile/*-inj*) are read too; for
# each route the plot directory holds nothing but the plots (no file a
# command made), gnuplot still renders every plot, and the name shows, each
# byte that could be syntax written as \xNN.
. "$(dirname "$0")/../lib.sh"

HOSTILE=$(dirname "$0")/../format/hostile
st_tmpdir dir
t=$dir/t.sttrace
st-format synth -o "$dir/s.sttrace" --ios 2000 --seed 3 >/dev/null &&
	"$ST_BUILD/tests/replace-strings" "$dir/s.sttrace" "$dir/1.sttrace" rocksdb.3.dat \
		$'r\n!touch PWN_file\n`touch PWN_bq`\n#' &&
	"$ST_BUILD/tests/replace-strings" "$dir/1.sttrace" "$dir/2.sttrace" postgres $'p\n!touch Pc\n#' &&
	"$ST_BUILD/tests/replace-strings" "$dir/2.sttrace" "$dir/3.sttrace" 'name=vda;' \
		$'name=v\n!touch PWN_dev\n#;' &&
	"$ST_BUILD/tests/replace-strings" "$dir/3.sttrace" "$t" synth $'h\';system("touch PWN_host")#' ||
	{ fail analyze.inject "cannot make the trace"; exit 1; }

# stray DIR: what in DIR is no plot (.dat .gp .png .svg), or a plot gnuplot did not render.
stray() {
	local f
	for f in "$1"/*; do
		case $f in
		*.dat | *.svg) ;;
		*.gp) [ -s "${f%.gp}.png" ] && [ "$(head -c 4 "${f%.gp}.png" | od -An -c | tr -d ' ')" = 211PNG ] &&
			grep -q '</svg>' "${f%.gp}.svg" || echo "${f##*/}: not rendered" ;;
		*.png) ! grep -aq 'uid=' "$f" || echo "${f##*/}: holds a command's output" ;;
		*) echo "${f##*/}" ;;
		esac
	done
}

# route NAME PLOTDIR PATTERN: no stray file, and PATTERN (grep -F) in a .gp of PLOTDIR.
route() {
	local bad
	bad=$(stray "$2" | tr '\n' ' ')
	if [ -n "$bad" ]; then
		fail "$1" "$bad"
	elif ! grep -qF -- "$3" "$2"/*.gp; then
		fail "$1" "no label $3 in $2/*.gp"
	else
		pass "$1"
	fi
}

if ! command -v gnuplot >/dev/null; then
	skip analyze.inject.gnuplot "gnuplot not installed"
else
	st-analyze "$t" --by file --sizes --hist --gnuplot "$dir/file" >/dev/null 2>&1
	route analyze.inject.gnuplot_file "$dir/file" "/r\\x0a!touch PWN_file\\x0a\`touch PWN_bq\`\\x0a#'"
	st-analyze "$t" --by comm --sizes --gnuplot "$dir/comm" >/dev/null 2>&1
	route analyze.inject.gnuplot_comm "$dir/comm" "'p\\x0a!touch Pc\\x0a#'"
	st-analyze "$t" --sizes --seek --depth --hist --gnuplot "$dir/dev" >/dev/null 2>&1
	route analyze.inject.gnuplot_dev "$dir/dev" "'v\\x0a!touch PWN_dev\\x0a# read forward'"
	# the position heat map's panel of that device, titled with its name as a string
	grep -qF "set title 'Position heatmap, '.'v\\x0a!touch PWN_dev\\x0a#'" "$dir/dev/heatmap_position.gp" &&
		pass analyze.inject.gnuplot_position ||
		fail analyze.inject.gnuplot_position "no panel titled with the device's name in heatmap_position.gp"
	st-analyze "$t" --by host --save-summary "$dir/host.sum" >/dev/null 2>&1
	st-analyze diff "$dir/host.sum" "$dir/host.sum" --gnuplot "$dir/diff" >/dev/null 2>&1
	route analyze.inject.gnuplot_diff "$dir/diff" "'h\\x27;system(\"touch PWN_host\")#'.': latency CDF"
	# the crafted files of the issue, each as it was reported
	st-analyze "$HOSTILE/filename-inj.sttrace" --by file --sizes --gnuplot "$dir/h-file" >/dev/null 2>&1
	route analyze.inject.hostile_file "$dir/h-file" 'system("id>PWN")\x0a#'
	st-analyze "$HOSTILE/comm-inj.sttrace" --by comm --sizes --gnuplot "$dir/h-comm" >/dev/null 2>&1
	route analyze.inject.hostile_comm "$dir/h-comm" "'a\\x0asystem(\"id\")#'"
	st-analyze "$HOSTILE/inj-dev.sttrace" --sizes --gnuplot "$dir/h-dev" >/dev/null 2>&1
	route analyze.inject.hostile_dev "$dir/h-dev" 'PWNED_dev")\x0a# read'
	st-analyze diff "$HOSTILE/diff-title-inj.sum" "$HOSTILE/diff-title-inj.sum" --gnuplot "$dir/h-diff" \
		>/dev/null 2>&1
	route analyze.inject.hostile_diff "$dir/h-diff" "'\\x27;system(\"id>PWN_d\")#'"
	# gnuplot's SVG holds a name as text, never as markup
	"$ST_BUILD/tests/replace-strings" "$dir/s.sttrace" "$dir/x.sttrace" rocksdb.3.dat '<script>alert(1)</script>' &&
		st-analyze "$dir/x.sttrace" --by file --sizes --gnuplot "$dir/svg" >/dev/null 2>&1
	if grep -q '&lt;script>alert(1)&lt;/script>' "$dir/svg/sizes.svg" && ! grep -q '<script' "$dir/svg/sizes.svg"; then
		pass analyze.inject.svg
	else
		fail analyze.inject.svg "a name became markup in sizes.svg, or is missing"
	fi
	bad=$(cd "$dir" && ls | grep -v -e '^[0-9stx]\.sttrace$' -e '^host\.sum$' -e '^svg$' \
		-e '^file$' -e '^comm$' -e '^dev$' -e '^diff$' -e '^h-file$' -e '^h-comm$' -e '^h-dev$' -e '^h-diff$')
	[ -z "$bad" ] && pass analyze.inject.nothing_else || fail analyze.inject.nothing_else "made: $bad"
fi

# A data file's comment holds a label on one line: no forged data row.
if grep -qa '^!touch\|^`touch\|^system' "$dir"/*/*.dat 2>/dev/null; then
	fail analyze.inject.dat_lines "a label's newline in a .dat"
else
	pass analyze.inject.dat_lines
fi

# CSV: a name beginning with = + - @ (or ') is no formula: a ' goes in front (common/csv.h).
"$ST_BUILD/tests/replace-strings" "$dir/s.sttrace" "$dir/f.sttrace" fio '=1+2' &&
	"$ST_BUILD/tests/replace-strings" "$dir/f.sttrace" "$dir/g.sttrace" rocksdb '@SUM(A1)' ||
	{ fail analyze.inject.csv "cannot make the trace"; exit 1; }
st-analyze "$dir/g.sttrace" --by comm --csv >"$dir/comm.csv" 2>/dev/null
cells=$(python3 -c 'import csv, sys; print(" ".join(sorted(r[0] for r in list(csv.reader(open(sys.argv[1])))[1:])))' \
	"$dir/comm.csv")
case " $cells " in
*" '=1+2 "*" '@SUM(A1) "*) pass analyze.inject.csv_formula ;;
*) fail analyze.inject.csv_formula "first cells: $cells" ;;
esac

# HTML: a name is text, never markup: the page's one script is its own.
"$ST_BUILD/tests/replace-strings" "$dir/s.sttrace" "$dir/h.sttrace" postgres '<script>alert(1)</script>' &&
	st-analyze "$dir/h.sttrace" --html "$dir/r.html" >/dev/null 2>&1 ||
	{ fail analyze.inject.html "no report"; exit 1; }
if [ "$(grep -o '<script' "$dir/r.html" | wc -l)" = 1 ] && grep -q '&lt;script&gt;alert(1)' "$dir/r.html"; then
	pass analyze.inject.html
else
	fail analyze.inject.html "a name became markup, or is missing"
fi

# Perfetto's JSON parses and holds the names as they are.
st-format convert "$t" --to perfetto -o "$dir/p.json" >/dev/null 2>&1
if jq -e '[.. | strings | select(. == "p\n!touch Pc\n#")] | length > 0' "$dir/p.json" >/dev/null 2>&1; then
	pass analyze.inject.perfetto
else
	fail analyze.inject.perfetto "no valid JSON holding the command name"
fi

# fio's iolog: a device name stays one field of one line, under /dev.
st-format convert "$t" --to fio-iolog -o "$dir/io.log" >/dev/null 2>&1
if awk 'NR > 1 && ($2 !~ /^\/dev\/[^\/]*$/ || NF < 3 || NF > 5) { bad = 1 } END { exit bad || NR < 2 }' \
	"$dir/io.log" && grep -qF '/dev/v\x0a!touch\x20PWN_dev\x0a# add' "$dir/io.log"; then
	pass analyze.inject.iolog
else
	fail analyze.inject.iolog "a device name broke a line: $(grep -m1 -v '^[0-9]* /dev/[a-z0-9]* ' "$dir/io.log" | head -c 80)"
fi

# A terminal: no report, nor blkparse's text, prints a byte it acts on (ESC, BEL, CR, C1,
# not UTF-8);
# the name shows with those as \xNN, its UTF-8 as it is.
"$ST_BUILD/tests/replace-strings" "$dir/s.sttrace" "$dir/e.sttrace" postgres $'p\e]0;X\a\xc2\x9b\xff\xc3\xa9\r' &&
	st-analyze "$dir/e.sttrace" --by comm --save-summary "$dir/e.sum" >/dev/null 2>&1 ||
	{ fail analyze.inject.terminal "cannot make the trace"; exit 1; }
{
	st-analyze "$dir/e.sttrace" --by comm --sizes --hist
	st-analyze "$dir/e.sttrace" --quantile 99 --top 50 --why
	st-analyze "$dir/e.sttrace" --by file --top-by comm
	st-analyze diff "$dir/e.sum" "$dir/e.sum"
	st-format info "$dir/e.sttrace"
	st-format convert "$dir/e.sttrace" --to blkparse -o "$dir/e.blkparse" && cat "$dir/e.blkparse"
} >"$dir/terminal.out" 2>&1
if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]\|\xc2[\x80-\x9f]\|\xff' "$dir/terminal.out"; then
	fail analyze.inject.terminal "a control byte reached the terminal: $(LC_ALL=C grep -c $'\e' "$dir/terminal.out") ESC"
elif [ "$(grep -cF 'p\x1b]0;X\x07\xc2\x9b\xffé\x0d' "$dir/terminal.out")" -lt 5 ]; then
	fail analyze.inject.terminal "the name is not shown escaped"
else
	pass analyze.inject.terminal
fi
