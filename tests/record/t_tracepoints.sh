#!/usr/bin/env bash
# Tracepoints that are not built in, named at record time (`-e SUBSYS:NAME`,
# globs): buffered writes with dd on ext4 over a loop device, recorded with
# `-e 'ext4:ext4_da_write_*'` next to a bpftrace count of the same
# tracepoints (the reference: bpftrace reads the tracepoints on its own).
# The file holds as many events as bpftrace counted, every field of the
# tracepoint's format file by name, the positions dd wrote, and only the
# device -d named; --span makes one span per write. A __data_loc string
# (workqueue:workqueue_queue_work's `workqueue`) comes out as text bpftrace
# saw too. -c and -d filter generic events (a second file system).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
rec_require_bpf record_tracepoints
command -v bpftrace >/dev/null || { skip record_tracepoints "bpftrace not installed"; exit 0; }

WRITES=300
st_tmpdir T
st_loopdev L 64
DEV=$(rec_devno "$L")
# the tracepoints' dev_t: major << 20 | minor
DEVT=$(( $(printf '%d' "0x$(stat -c %t "$L")") << 20 | $(printf '%d' "0x$(stat -c %T "$L")") ))
rec_ext4 record_tracepoints "$L" "$T/mnt"
FMT=/sys/kernel/tracing/events/ext4

# bpftrace_start LOG PROGRAM: bpftrace in the background, returns once attached; pid in $BT_PID
bpftrace_start() {
	bpftrace -e "$2" >"$1" 2>&1 &
	BT_PID=$!
	at_exit "kill -KILL $BT_PID"
	rec_wait_line "$BT_PID" "$1" "^Attach"
}
bpftrace_stop() {
	bt_stop "$BT_PID"
}

bpftrace_start "$T/bt" "tracepoint:ext4:ext4_da_write_begin /args->dev == $DEVT/ { @begin = count(); }
	tracepoint:ext4:ext4_da_write_end /args->dev == $DEVT/ { @end = count(); }" ||
	{ fail record_tracepoints_bpftrace "bpftrace did not start: $(cat "$T/bt")"; exit 1; }
rec_start "$T/w.sttrace" "$T/log" -e 'ext4:ext4_da_write_*' -d "$L" ||
	{ fail record_tracepoints_start "$(cat "$T/log")"; exit 1; }
dd if=/dev/zero of="$T/mnt/f" bs=4k count=$WRITES status=none
sync
check record_tracepoints_stop rec_stop
bpftrace_stop

bt_begin=$(awk '/^@begin:/ { print $2 }' "$T/bt")
bt_end=$(awk '/^@end:/ { print $2 }' "$T/bt")
begin=$(rec_count "$T/w.sttrace" ext4:ext4_da_write_begin)
end=$(rec_count "$T/w.sttrace" ext4:ext4_da_write_end)
if [ "$begin" = "$bt_begin" ] && [ "$end" = "$bt_end" ] && [ "$begin" -ge $WRITES ]; then
	pass record_tracepoints_count_bpftrace
else
	fail record_tracepoints_count_bpftrace "file: $begin begin, $end end; bpftrace: ${bt_begin:-?}, ${bt_end:-?} (dd: $WRITES writes)"
fi

# The glob took every ext4:ext4_da_write_* tracepoint into the schema, next to
# the built-in types (those of a synthetic file).
st-format synth -o "$T/s.sttrace" --ios 1 >/dev/null
want=$(( $(ls "$FMT" | grep -c '^ext4_da_write_') + $(st-format info --json "$T/s.sttrace" | jq .schema_types) ))
got=$(st-format info --json "$T/w.sttrace" | jq .schema_types)
if [ "$got" -eq "$want" ]; then
	pass record_tracepoints_glob
else
	fail record_tracepoints_glob "$got types in the schema, want $want"
fi

# Every field of the format file (common_* aside) is a column of the CSV.
fields=$(awk -F'[;:]' '/field:/ { n = split($2, w, " "); f = w[n]; sub(/\[.*/, "", f);
	if (f !~ /^common_/) print f }' "$FMT/ext4_da_write_end/format")
header=$(st-format cat --csv -t ext4:ext4_da_write_end "$T/w.sttrace" | head -1)
missing=$(for f in $fields; do echo ",$header," | grep -q ",$f," || echo "$f"; done)
if [ -n "$fields" ] && [ -z "$missing" ]; then
	pass record_tracepoints_every_field
else
	fail record_tracepoints_every_field "fields not printed: ${missing:-the format file has none}"
fi

# Values: dd's positions 0, 4096, ... with len 4096, on the -d device only.
rec_rows "$T/w.sttrace" ext4:ext4_da_write_begin dev pos len | sort -u >"$T/rows"
for ((i = 0; i < WRITES; i++)); do echo "$DEV $((i * 4096)) 4096"; done | sort -u >"$T/want"
if cmp -s "$T/rows" "$T/want"; then
	pass record_tracepoints_values
else
	fail record_tracepoints_values "$(diff "$T/want" "$T/rows" | head -3 | tr '\n' ' ')"
fi

# --span: one span per dd write, none unpaired (dd's own count is the truth),
# reported by the summary (CSV) and --quantile --stage; reversed (END before
# START), the first write's begin and the last one's end are left unpaired.
SPAN='w=ext4:ext4_da_write_begin..ext4:ext4_da_write_end'
line=$(st-analyze "$T/w.sttrace" --span "$SPAN" | grep '^span w ')
want="span w = ext4:ext4_da_write_begin .. ext4:ext4_da_write_end by tid: $WRITES paired, 0 unpaired starts, 0 unpaired ends"
if [ "$line" = "$want" ]; then pass record_tracepoints_span_pairs; else fail record_tracepoints_span_pairs "$line"; fi
n=$(st-analyze "$T/w.sttrace" --span "$SPAN" --csv 2>/dev/null | awk -F, '$7 == "w" { print $8 }')
if [ "$n" = "$WRITES" ]; then pass record_tracepoints_span_summary; else fail record_tracepoints_span_summary "stage w: n=${n:-none}"; fi
n=$(st-analyze "$T/w.sttrace" --span "$SPAN" --quantile 50 --stage w --top 100000 --csv 2>/dev/null |
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "w_us") c = i; next } $c != "" { n++ } END { print n + 0 }')
# nearest rank: the I/Os at or above the median are at least half of them
if [ "$n" -ge $((WRITES / 2)) ] && [ "$n" -le "$WRITES" ]; then
	pass record_tracepoints_span_quantile
else
	fail record_tracepoints_span_quantile "$n spans listed at or above the median of $WRITES"
fi
# ... and in the per-interval views, plots and diff: every write once
n=$(st-analyze "$T/w.sttrace" --span "$SPAN" --stage w --interval 100ms --csv 2>/dev/null |
	awk -F, 'NR > 1 { n += $2 } END { print n + 0 }')
h=$(st-analyze "$T/w.sttrace" --span "$SPAN" --stage w --heatmap lat --csv 2>/dev/null |
	awk -F, 'NR > 1 { for (i = 2; i <= NF; i++) n += $i } END { print n + 0 }')
st-analyze "$T/w.sttrace" --span "$SPAN" --gnuplot "$T/plots" >/dev/null 2>&1
d=$(st-analyze diff "$T/w.sttrace" "$T/w.sttrace" --span "$SPAN" --stage w 2>/dev/null | grep -c "^  w  *n $WRITES -> $WRITES:")
# (the CDF: a panel per group, the span's "DEV span" one a curve of stage w)
if [ "$n" = $WRITES ] && [ "$h" = $WRITES ] && grep -q '^# .* span w: ' "$T/plots/cdf.dat" && [ "$d" = 1 ]; then
	pass record_tracepoints_span_views
else
	fail record_tracepoints_span_views "series $n, heatmap $h, cdf $(grep -c '^# .* span w: ' "$T/plots/cdf.dat"), diff rows $d (want $WRITES, $WRITES, 1, 1)"
fi
line=$(st-analyze "$T/w.sttrace" --span 'r=ext4_da_write_end..ext4_da_write_begin' | grep '^span r ')
want="span r = ext4_da_write_end .. ext4_da_write_begin by tid: $((WRITES - 1)) paired, 1 unpaired starts, 1 unpaired ends"
if [ "$line" = "$want" ]; then pass record_tracepoints_span_unpaired; else fail record_tracepoints_span_unpaired "$line"; fi

# A __data_loc string: every workqueue name in the file was seen by bpftrace,
# attached before st-record and detached after it.
bpftrace_start "$T/bt2" 'tracepoint:workqueue:workqueue_queue_work { @[str(args->workqueue)] = count(); }' ||
	{ fail record_tracepoints_bpftrace "bpftrace did not start: $(cat "$T/bt2")"; exit 1; }
rec_start "$T/q.sttrace" "$T/log2" -e workqueue:workqueue_queue_work ||
	{ fail record_tracepoints_start "$(cat "$T/log2")"; exit 1; }
dd if=/dev/zero of="$T/mnt/g" bs=4k count=64 conv=fsync status=none
sleep 0.5
rec_stop
bpftrace_stop
sed -n 's/^@\[\(.*\)\]: [0-9]*$/\1/p' "$T/bt2" | sort -u >"$T/bt_names"
rec_rows "$T/q.sttrace" workqueue:workqueue_queue_work workqueue | sort -u >"$T/names"
unseen=$(comm -23 "$T/names" "$T/bt_names")
if [ -s "$T/names" ] && ! grep -qx '' "$T/names" && [ -z "$unseen" ]; then
	pass record_tracepoints_data_loc_string
else
	fail record_tracepoints_data_loc_string "names: $(head -3 "$T/names" | tr '\n' ' '); not seen by bpftrace: $unseen"
fi

# Filters on a generic event: -c keeps the tasks of that name, -d the events
# whose dev field is that disk's. ddfilt (a copy of dd) writes 20 pages on
# the -d device and 10 on another; dd writes 15 on the -d device: 20 remain.
st_loopdev L2 64
DEV2=$(rec_devno "$L2")
rec_ext4 record_tracepoints "$L2" "$T/mnt2"
cp "$(command -v dd)" "$T/ddfilt"
rec_start "$T/f.sttrace" "$T/log3" -e ext4:ext4_da_write_begin -c ddfilt -d "$L2" ||
	{ fail record_tracepoints_start "$(cat "$T/log3")"; exit 1; }
"$T/ddfilt" if=/dev/zero of="$T/mnt2/a" bs=4k count=20 status=none
"$T/ddfilt" if=/dev/zero of="$T/mnt/a" bs=4k count=10 status=none
dd if=/dev/zero of="$T/mnt2/b" bs=4k count=15 status=none
rec_stop
rows=$(rec_rows "$T/f.sttrace" ext4:ext4_da_write_begin dev | sort | uniq -c | awk '{ print $1, $2 }')
if [ "$rows" = "20 $DEV2" ]; then pass record_tracepoints_filters; else
	fail record_tracepoints_filters "events per device: ${rows:-none} (want 20 on $DEV2)"; fi
