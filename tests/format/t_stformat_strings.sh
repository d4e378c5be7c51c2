#!/usr/bin/env bash
# Strings hold bytes, usually UTF-8 but not always (spec/sttrace-format.md,
# section 14): st-format cat --json and info --json write valid UTF-8 JSON
# whatever the bytes, each ill-formed part as U+FFFD the way Python's
# decoder replaces it; text and CSV show every byte back as \xHH escapes.
# The expected strings come from Python, not from st-format.
. "$(dirname "$0")/../lib.sh"
st_tmpdir T

# comm: a stray 0xff, a backslash, a quote, é (valid), an overlong NUL
# (0xc0 0x80); path: a comma, a tab, a surrogate (0xed 0xa0 0x80), 3 of the
# 4 bytes of an emoji, and a valid one.
comm=$'a\xff\\"\xc3\xa9\xc0\x80z'
path=$'/tmp/x,\ty\xed\xa0\x80\xf0\x9f\x98/\xf0\x9f\x98\x80.log'
"$ST_BUILD/tests/write-strings" "$T/s.st" "$comm" "$path" || fail write_strings "exit $?"

# expect WHAT: Python's answer for the bytes of $comm and $path.
expect() {
	COMM="$comm" P="$path" python3 -c '
import json, os, sys
comm, path = os.environb[b"COMM"][:15], os.environb[b"P"]
def esc(b):
    return "".join("\\\"" if c == 34 else "\\\\" if c == 92 else chr(c) if 32 <= c < 127 else "\\x%02x" % c for c in b)
what = sys.argv[1]
if what == "json":
    print(json.dumps([comm.decode("utf-8", "replace"), path.decode("utf-8", "replace")],
                     ensure_ascii=False, separators=(",", ":")))
elif what == "text":
    print("comm=\"%s\"" % esc(comm)); print("filename=\"%s\"" % esc(path))
elif what == "meta":
    print(json.dumps([comm.decode("utf-8", "replace"), path.decode("utf-8", "replace"),
                      ("inode.254:0." + path.decode("utf-8", "replace"))],
                     ensure_ascii=False, separators=(",", ":")))
' "$1"
}
# strict_json FILE [lines]: the file (each line) is valid UTF-8 and parses as
# JSON (Python's UTF-8 decoder is strict: no ill-formed byte gets through).
strict_json() {
	python3 -c '
import json, sys
data = open(sys.argv[1], "rb").read()
for doc in (data.splitlines() if len(sys.argv) > 2 else [data]):
    json.loads(doc.decode("utf-8", "strict"))
' "$@"
}

st-format cat --json "$T/s.st" >"$T/json" || fail cat_json_runs "exit $?"
check json_strings_parse strict_json "$T/json" lines
check json_strings_replaced test "$(jq -c -s '[.[0].comm, .[1].filename]' "$T/json")" = "$(expect json)"

st-format cat "$T/s.st" >"$T/text" || fail cat_text_runs "exit $?"
check text_strings_escaped test "$(grep -o 'comm=.*' "$T/text"; grep -o 'filename=.*' "$T/text")" = "$(expect text)"
st-format cat --csv "$T/s.st" >"$T/csv" || fail cat_csv_runs "exit $?"
check csv_strings_parse python3 -c 'import csv, sys; rows = list(csv.reader(open(sys.argv[1], newline=""))); sys.exit(len(rows) != 3)' "$T/csv"
# CSV: the same escapes, the comma-holding path quoted, its quotes doubled.
check csv_strings_escaped test "$(python3 -c '
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
h = rows[0]
print("comm=\"%s\"" % rows[1][h.index("comm")].replace("\"", "\\\""))
print("filename=\"%s\"" % rows[2][h.index("filename")].replace("\"", "\\\""))' "$T/csv")" = "$(expect text)"

st-format info --json "$T/s.st" >"$T/info.json" || fail info_json_runs "exit $?"
check info_json_parses strict_json "$T/info.json"
check info_json_metadata_replaced test "$(jq -c '.metadata | [.["pid.100"], .["fd.100.3"], (keys[] | select(startswith("inode.")))]' "$T/info.json")" = "$(expect meta)"
