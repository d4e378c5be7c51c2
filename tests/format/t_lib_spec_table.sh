#!/usr/bin/env bash
# The built-in event type tables in spec/sttrace-format.md are exactly what
# format/lib/sttrace_events.h defines (regenerate them with `make spec-table`).
. "$(dirname "$0")/../lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
gen="$ST_BUILD/spec/gen_event_table"
[ -x "$gen" ] || { fail spec_event_table "$gen not built"; exit 1; }
st_tmpdir tmp
sed -n '/^<!-- BEGIN EVENT TABLE/,/^<!-- END EVENT TABLE/p' "$root/spec/sttrace-format.md" |
	sed '1d;$d' >"$tmp/committed"
"$gen" >"$tmp/generated"
if [ ! -s "$tmp/committed" ]; then
	fail spec_event_table "no generated table section in spec/sttrace-format.md"
elif diff -u "$tmp/committed" "$tmp/generated" >"$tmp/diff"; then
	pass spec_event_table
else
	fail spec_event_table "spec differs from the header (make spec-table): $(head -c 300 "$tmp/diff")"
fi

# The spec's title names the version sttrace.h writes (it said 1.0 at 1.7).
want=$(sed -n 's/^#define ST_FORMAT_MAJOR \([0-9]*\)$/\1/p; s/^#define ST_FORMAT_MINOR \([0-9]*\)$/.\1/p' \
	"$root/format/lib/sttrace.h" | tr -d '\n')
title=$(head -n 1 "$root/spec/sttrace-format.md")
case "$title" in
*"version $want") pass spec_title_version ;;
*) fail spec_title_version "spec title \"$title\", sttrace.h writes $want" ;;
esac
