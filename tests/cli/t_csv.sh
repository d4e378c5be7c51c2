#!/usr/bin/env bash
# Every CSV the toolkit prints is RFC 4180: a command name and a path that
# hold a double quote, a comma and a newline read back as one field each
# (Python's csv module is the reader), in st-analyze's summary, --quantile
# list and st-format cat --csv.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"
rec_require_bpf csv_fields
st_tmpdir T

comm='a"b,c'$'\n''d'
path="$T/x\"y,z"$'\n'"w.dat"
# The kernel names a task after the file it executed: dd under that name.
mkdir "$T/bin" && ln -s "$(command -v dd)" "$T/bin/$comm"
st-record -o "$T/t.st" -e all -- "$T/bin/$comm" if=/dev/zero of="$path" bs=4k count=50 \
	2>"$T/rec.err" ||
	fail csv_record "st-record failed: $(tail -1 "$T/rec.err")"

# The field as every sttrace output writes it: non-printable bytes as \xNN.
want_comm='a"b,c\x0ad'
want_path="${path//$'\n'/\\x0a}"
st-analyze --csv --by comm "$T/t.st" >"$T/by.csv" 2>/dev/null
st-analyze --csv --quantile 50 --top 100 "$T/t.st" >"$T/q.csv" 2>/dev/null
st-format cat --csv -t sys_enter_write "$T/t.st" >"$T/cat.csv"
# fields FILE COLUMN VALUE: every row parses to the header's width, and some
# row has VALUE in COLUMN (a name, or the group column 0).
fields() {
	python3 - "$@" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
width = len(rows[0])
col = int(sys.argv[2]) if sys.argv[2].isdigit() else rows[0].index(sys.argv[2])
bad = [r for r in rows if len(r) != width]
hit = any(r[col] == sys.argv[3] for r in rows[1:])
sys.exit(0 if not bad and hit else 1)
PY
}
check csv_summary_group_comm fields "$T/by.csv" 0 "$want_comm"
check csv_quantile_comm fields "$T/q.csv" comm "$want_comm"
check csv_quantile_path fields "$T/q.csv" file "$want_path"
check csv_cat_comm_rows_parse python3 -c '
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
sys.exit(0 if len(rows) > 50 and all(len(r) == len(rows[0]) for r in rows) else 1)' "$T/cat.csv"
