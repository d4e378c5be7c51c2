#!/usr/bin/env bash
# Issue 41 item 2, the analyzer's half: a recording whose metadata says an
# event was not on the recording host's kernel (`missing.<event>` = reason,
# spec section 10) shows the stages and causes that event feeds as "not
# recorded on this kernel", naming the event and the reason, in every
# report: the text summary, --csv, --quantile (text and CSV), --why (text
# and CSV) and --html; never as a 0 or a column of zeros.
#
# One real recording (st-record -e all of fio: direct 4k writes to a file
# on ext4 over a loop device, an fsync every 4; two jobs writing one file
# buffered, whose i_rwsem they contend for), which has jnl and lock, copied with the keys a kernel without ext4's fsync
# tracepoints (xfs's neither), lock events and the page-cache event gives:
# jnl, lock and cache go; the copy without them (the same recording) prints
# no such line and keeps jnl, lock and cache.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"	# rec_require_bpf

rec_require_bpf missing_report
command -v fio >/dev/null || { skip missing_report "fio not installed"; exit 0; }

st_tmpdir T
st_loopdev L 256
mkfs.ext4 -q "$L" || { fail missing_report "mkfs.ext4 $L"; exit 0; }
mkdir "$T/mnt" && mount "$L" "$T/mnt" || { fail missing_report "mount $L"; exit 0; }
at_exit "umount '$T/mnt'"
st-record -e all -o "$T/r.sttrace" -- fio --bs=4k --ioengine=psync \
	--name=missing --filename="$T/mnt/f" --size=8M --rw=randwrite --direct=1 --fsync=4 --number_ios=400 \
	--name=missing_lock --filename="$T/mnt/g" --size=32M --rw=write --numjobs=2 \
	>"$T/fio.out" 2>"$T/rec.err" || { fail missing_report "st-record: $(tail -1 "$T/rec.err")"; exit 0; }
umount "$T/mnt"
# this kernel's own missing events would be in both copies
if st-format info "$T/r.sttrace" | grep -q '^ *missing\.'; then
	skip missing_report "this kernel lacks events of -e all: $(st-format info "$T/r.sttrace" | grep -m1 '^ *missing\.')"
	exit 0
fi

gone() { echo "missing.$1=tracepoint $2/$1 not on this kernel"; }
# the same recording, through the same copy, with and without the keys
"$ST_BUILD/tests/replace-strings" "$T/r.sttrace" "$T/kept.sttrace" zz_never zz &&
	"$ST_BUILD/tests/replace-strings" "$T/r.sttrace" "$T/gone.sttrace" zz_never zz \
	"$(gone ext4_sync_file_enter ext4)" "$(gone ext4_sync_file_exit ext4)" \
	"$(gone xfs_file_fsync xfs)" "$(gone contention_begin lock)" "$(gone contention_end lock)" \
	"$(gone mm_filemap_add_to_page_cache filemap)" || { fail missing_report "replace-strings"; exit 0; }

LINE='not recorded on this kernel: ext4_sync_file_enter (tracepoint ext4/ext4_sync_file_enter not on this kernel): sys2fs, fs, fs2q, wb, jnl;'
LOCK='contention_begin (tracepoint lock/contention_begin not on this kernel): lock;'
# said F: F names the missing events with their reasons and what they feed
said() { grep -qF "$LINE" "$1" && grep -qF "$LOCK" "$1" && grep -qF "): cache" "$1"; }
for v in kept gone; do
	st-analyze "$T/$v.sttrace" >"$T/$v.sum" &&
		st-analyze "$T/$v.sttrace" --csv >"$T/$v.csv" 2>"$T/$v.csv.err" &&
		st-analyze "$T/$v.sttrace" --quantile 99 >"$T/$v.q" &&
		st-analyze "$T/$v.sttrace" --quantile 50 --csv >"$T/$v.qcsv" 2>"$T/$v.qcsv.err" &&
		st-analyze "$T/$v.sttrace" --why --by op >"$T/$v.why" &&
		st-analyze "$T/$v.sttrace" --why --by op --csv >"$T/$v.whycsv" 2>"$T/$v.whycsv.err" &&
		st-analyze "$T/$v.sttrace" --html "$T/$v.html" >/dev/null ||
		{ fail missing_report "st-analyze $v.sttrace failed"; exit 0; }
done

# ok NAME CONDITION WHY: PASS when CONDITION (evaluated) holds, else FAIL with WHY
ok() { if eval "$2"; then pass "$1"; else fail "$1" "$3"; fi; }
# rows STAGE FILE: the text summary's rows of STAGE
rows() { awk -v s="$1" '$1 == s' "$2" | wc -l; }
# csv_rows STAGE FILE: the summary CSV's rows of STAGE (column 7)
csv_rows() { awk -F, -v s="$1" '$7 == s' "$2" | wc -l; }
# cells COLUMN FILE: the --quantile CSV's cells of COLUMN, one a line
cells() { awk -F, -v c="$1" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next } { print $k }' "$2"; }

for v in sum q why html; do
	if grep -q "not recorded on this kernel" "$T/kept.$v"; then
		fail "missing_report.$v.line" "the recording without missing.* keys says: $(grep -m1 'not recorded' "$T/kept.$v")"
	elif ! said "$T/gone.$v"; then
		fail "missing_report.$v.line" "no 'not recorded on this kernel' line naming the events and reasons"
	else
		pass "missing_report.$v.line"
	fi
done
for v in csv qcsv whycsv; do
	if grep -q "not recorded" "$T/kept.$v.err" "$T/kept.$v" || ! said "$T/gone.$v.err"; then
		fail "missing_report.$v.line" "the line, with the header lines on standard error: kept $(grep -c 'not recorded' "$T/kept.$v.err"), gone $(grep -c 'not recorded' "$T/gone.$v.err")"
	else
		pass "missing_report.$v.line"
	fi
done

# the summary: jnl and lock rows without the keys (lock where a writer waited: the text shows
# stages with data); no jnl or lock row with them
ok missing_report.summary "[ $(rows jnl "$T/kept.sum") -ge 1 ] && [ $(rows lock "$T/kept.sum") -ge 1 ] &&
	[ $(rows jnl "$T/gone.sum") -eq 0 ] && [ $(rows lock "$T/gone.sum") -eq 0 ] &&
	[ $(rows runq "$T/gone.sum") -eq $(rows runq "$T/kept.sum") ]" \
	"jnl rows $(rows jnl "$T/kept.sum") -> $(rows jnl "$T/gone.sum"), lock rows $(rows lock "$T/kept.sum") -> $(rows lock "$T/gone.sum")"
ok missing_report.summary_csv "[ $(csv_rows jnl "$T/kept.csv") -ge 1 ] && [ $(csv_rows lock "$T/kept.csv") -ge 3 ] &&
	[ $(csv_rows jnl "$T/gone.csv") -eq 0 ] && [ $(csv_rows lock "$T/gone.csv") -eq 0 ] &&
	[ \"$(head -1 "$T/kept.csv")\" = \"$(head -1 "$T/gone.csv")\" ]" \
	"jnl rows $(csv_rows jnl "$T/kept.csv") -> $(csv_rows jnl "$T/gone.csv"), lock rows $(csv_rows lock "$T/kept.csv") -> $(csv_rows lock "$T/gone.csv")"

# --quantile CSV: the same columns; lock_us and cache a value in every row without the keys, empty with them
n=$(($(wc -l <"$T/gone.qcsv") - 1))
ok missing_report.quantile_csv "[ $n -ge 10 ] && [ \"$(head -1 "$T/kept.qcsv")\" = \"$(head -1 "$T/gone.qcsv")\" ] &&
	[ $(cells lock_us "$T/kept.qcsv" | grep -c '^[0-9]') -eq $n ] && [ $(cells cache "$T/kept.qcsv" | grep -c .) -eq $n ] &&
	[ $(cells lock_us "$T/gone.qcsv" | grep -c .) -eq 0 ] && [ $(cells jnl_us "$T/gone.qcsv" | grep -c .) -eq 0 ] &&
	[ $(cells cache "$T/gone.qcsv" | grep -c .) -eq 0 ] &&
	[ \"$(cells runq_us "$T/kept.qcsv" | sort | md5sum)\" = \"$(cells runq_us "$T/gone.qcsv" | sort | md5sum)\" ]" \
	"$n rows; lock_us cells without keys $(cells lock_us "$T/kept.qcsv" | grep -c '^[0-9]'), with $(cells lock_us "$T/gone.qcsv" | grep -c .); jnl_us with $(cells jnl_us "$T/gone.qcsv" | grep -c .); cache with $(cells cache "$T/gone.qcsv" | grep -c .)"
# --quantile text: the cache column names each I/O's page cache without the keys, '-' with them
cachecol() { awk '$1 == "#" { for (i = 1; i <= NF; i++) if ($i == "cache") k = i; next } k && /^ *[0-9]/ { print $k }' "$1"; }
ok missing_report.quantile "[ $(cachecol "$T/kept.q" | grep -c '^[a-z]') -ge 1 ] &&
	[ $(cachecol "$T/gone.q" | grep -c .) -eq $(cachecol "$T/kept.q" | grep -c .) ] &&
	[ $(cachecol "$T/gone.q" | grep -vc '^-$') -eq 0 ]" \
	"cache cells: without keys $(cachecol "$T/kept.q" | tr '\n' ' '); with $(cachecol "$T/gone.q" | tr '\n' ' ')"

# --why: each group's lock cause "not recorded on this kernel" with the keys, never without
# (text), empty us and share cells (CSV); no lock_kind culprit
groups=$(grep -cE '^[^ ].*: [0-9]+ I/Os at or above ' "$T/gone.why")
ok missing_report.why "[ $groups -ge 2 ] && [ $(grep -c 'not recorded on this kernel$' "$T/kept.why") -eq 0 ] &&
	[ $(grep -cE '^  cause +lock +not recorded on this kernel$' "$T/gone.why") -eq $groups ] &&
	[ $(grep -c 'lock_kind' "$T/gone.why") -eq 0 ]" \
	"$groups groups; lock rows not recorded: without keys $(grep -c 'not recorded on this kernel$' "$T/kept.why"), with $(grep -cE '^  cause +lock +not recorded on this kernel$' "$T/gone.why")"
kept_rows=$(awk -F, '$4 == "cause" && $5 == "lock" && $6 != ""' "$T/kept.whycsv" | wc -l)
gone_rows=$(awk -F, '$4 == "cause" && $5 == "lock" && $6 == "" && $7 == ""' "$T/gone.whycsv" | wc -l)
ok missing_report.why_csv "[ $kept_rows -eq $groups ] && [ $gone_rows -eq $groups ] &&
	[ \"$(head -1 "$T/kept.whycsv")\" = \"$(head -1 "$T/gone.whycsv")\" ]" \
	"lock rows with a value (no keys) $kept_rows, empty (keys) $gone_rows of $groups groups"

# asked for by name: one line saying so, exit 1; the recording without the keys has them
for a in "quantile_lock --quantile 99 --stage lock" "why_jnl --why --stage jnl" "by_cache --by cache"; do
	set -- $a
	name=$1
	shift
	st-analyze "$T/gone.sttrace" "$@" >"$T/ask.out" 2>"$T/ask.err"
	rc=$?
	st-analyze "$T/kept.sttrace" "$@" >/dev/null 2>&1
	krc=$?
	ok "missing_report.ask_$name" "[ $rc -eq 1 ] && [ $krc -eq 0 ] && [ $(wc -l <"$T/ask.err") -eq 1 ] &&
		grep -q 'not recorded on this kernel' '$T/ask.err'" "exit $rc (without the keys $krc): $(head -c 300 "$T/ask.err")"
done
