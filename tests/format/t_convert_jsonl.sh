#!/usr/bin/env bash
# `st-format convert --to jsonl` on a real recording (st-record -e all of dd
# writing and reading with O_DIRECT on ext4 over a loop device), its every
# field of every event checked by python3's json module against the same
# event's row of `st-format cat --csv`, a separate printer (spec section 14):
#   - one object per CSV row, in the same order, as many as the trace holds;
#   - the object's keys are the row's non-empty cells (a string field may
#     be empty in both), `type` the type's name;
#   - numbers equal the cell; hex and dev values are strings equal to it;
#     arrays equal its `a;b;...`; a string equals the cell's bytes (CSV's
#     \xHH and \\ escapes undone) decoded as Python decodes UTF-8 with
#     "replace", one U+FFFD per maximal ill-formed subpart.
# The command name and the file name hold a quote, a comma, a backslash, a
# tab, an é and a stray 0xff byte, so the escapes and the repair are used.
# --records: the CSV header names no column "(null)" (convert has no spans).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"

why=$(bpf_unavailable)
command -v mkfs.ext4 >/dev/null || why=${why:-"mkfs.ext4 not installed"}
if [ -n "$why" ]; then
	skip convert.jsonl.fields "$why"
	skip convert.records.columns "$why"
	exit 0
fi

st_tmpdir dir
st_loopdev dev 64
rec_ext4 convert.jsonl.fields "$dev" "$dir/mnt"
odd=$'d"d,\\\t\xc3\xa9\xffx'		# 11 bytes: the whole command name (at most 15)
mkdir "$dir/bin"
cp "$(command -v dd)" "$dir/bin/$odd"
st-record -o "$dir/t.sttrace" -e all -- sh -c '
	"$1" if=/dev/zero of="$2" bs=4k count=64 oflag=direct status=none &&
	"$1" if="$2" of=/dev/null bs=4k iflag=direct status=none' sh \
	"$dir/bin/$odd" "$dir/mnt/file $odd" >"$dir/rec.log" 2>&1 ||
	{ fail convert.jsonl.fields "st-record failed: $(tail -1 "$dir/rec.log")"; exit 1; }

st-format convert "$dir/t.sttrace" --to jsonl -o "$dir/t.jsonl" ||
	{ fail convert.jsonl.fields "convert --to jsonl failed"; exit 1; }
st-format cat --csv "$dir/t.sttrace" >"$dir/t.csv" ||
	{ fail convert.jsonl.fields "cat --csv failed"; exit 1; }
events=$(st-format info "$dir/t.sttrace" | awk '$1 == "events" { print $2; exit }')

if out=$(python3 - "$dir/t.jsonl" "$dir/t.csv" "$events" "$odd" <<'EOF' 2>&1
import csv, json, os, re, sys

jsonl, csvfile, events = sys.argv[1], sys.argv[2], int(sys.argv[3])
odd = os.fsencode(sys.argv[4])

def unescape(cell):
    """The bytes of a cell printed with section 14's escapes."""
    out, i = bytearray(), 0
    while i < len(cell):
        if cell[i] == "\\" and cell[i + 1] == "\\":
            out.append(92); i += 2
        elif cell[i] == "\\" and cell[i + 1] == "x":
            out.append(int(cell[i + 2:i + 4], 16)); i += 4
        else:
            assert 32 <= ord(cell[i]) < 127, repr(cell)
            out.append(ord(cell[i])); i += 1
    return bytes(out)

def same(value, cell, where):
    if isinstance(value, bool) or value is None or isinstance(value, (dict, float)):
        raise AssertionError("%s: %r is no value of section 14" % (where, value))
    if isinstance(value, int):
        assert str(value) == cell, (where, value, cell)
    elif isinstance(value, list):
        assert ";".join(str(v) if isinstance(v, int) else v for v in value) == cell, \
            (where, value, cell)
    else:
        assert value == unescape(cell).decode("utf-8", "replace"), (where, value, cell)

lines = open(jsonl, "rb").read().splitlines()
rows = list(csv.reader(open(csvfile, newline="", encoding="ascii")))
header, rows = rows[0], rows[1:]
assert len(lines) == len(rows) == events, (len(lines), len(rows), events)
strings = set()
for n, (line, row) in enumerate(zip(lines, rows), 1):
    obj = json.loads(line.decode("utf-8", "strict"))
    cells = dict(zip(header, row))
    assert obj["type"] == cells["type"], (n, obj["type"], cells["type"])
    filled = {k for k, v in cells.items() if v != ""}
    assert filled <= set(obj) <= set(header), (n, sorted(filled ^ set(obj)))
    for key, value in obj.items():
        same(value, cells[key], "line %d %s" % (n, key))
        if isinstance(value, str) and "\ufffd" in value:
            strings.add(value)
# the odd names came through, each 0xff as one U+FFFD
name = odd.decode("utf-8", "replace")
assert any(name in s for s in strings), sorted(strings)
EOF
); then
	pass convert.jsonl.fields
else
	fail convert.jsonl.fields "$(echo "$out" | tail -1)"
fi

st-format convert "$dir/t.sttrace" --to csv --records -o "$dir/records.csv" ||
	{ fail convert.records.columns "convert --records failed"; exit 1; }
columns=$(head -1 "$dir/records.csv")
case ",$columns," in
*"(null)"* | *",,"*) fail convert.records.columns "header: $columns" ;;
*) check convert.records.columns test "$(tr ',' '\n' <<<"$columns" | sort | uniq -d)" = "" ;;
esac
