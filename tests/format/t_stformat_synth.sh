#!/usr/bin/env bash
# st-format synth: deterministic for a seed, and a trace with the event
# semantics of a real recording (counts per type consistent with --ios,
# request lifecycles, merges, splits, fsync flushes, io_uring, queue depth,
# latency distribution, slow-factor regression, near time order).
. "$(dirname "$0")/../lib.sh"
st_tmpdir T

# Determinism: same options, same bytes, wherever the file is written.
st-format synth -o "$T/s1.st" --ios 3000 --seed 42 >/dev/null
st-format synth -o "$T/other-name.st" --ios 3000 --seed 42 >/dev/null
st-format synth -o "$T/s2.st" --ios 3000 --seed 43 >/dev/null
check synth_same_seed_same_bytes cmp -s "$T/s1.st" "$T/other-name.st"
cmp -s "$T/s1.st" "$T/s2.st"
check synth_other_seed_other_bytes test $? = 1
check synth_verifies st-format verify -q "$T/s1.st"

st-format info --json "$T/s1.st" >"$T/info.json"
st-format cat "$T/s1.st" >"$T/cat"
cnt() { jq "[$(printf '.events_per_type.%s // 0,' "$@" | sed 's/,$//')] | add" "$T/info.json"; }

# Counts per type, consistent with --ios 3000 and the kernel's semantics.
check synth_ops_equal_ios test "$(cnt sys_exit_pread64 sys_exit_pwrite64 sys_exit_fsync io_uring_complete)" = 3000
for call in pread64 pwrite64 fsync io_uring_enter openat; do
	check "synth_${call}_enter_exit_pairs" test "$(cnt sys_enter_$call)" = "$(cnt sys_exit_$call)"
done
check synth_every_request_completes test "$(cnt block_getrq)" = "$(cnt block_rq_complete)"
check synth_bios_become_requests_or_merge test "$(cnt block_bio_queue block_split)" = \
	"$(cnt block_getrq block_bio_backmerge block_bio_frontmerge)"
check synth_issues_are_completions_plus_requeues test "$(cnt block_rq_issue)" = "$(cnt block_rq_complete block_rq_requeue)"
check synth_dio_pairs test "$(cnt iomap_dio_rw_begin)" = "$(cnt iomap_dio_complete)"
check synth_uring_pairs test "$(cnt io_uring_submit_req)" = "$(cnt io_uring_complete)"
check synth_fsync_pairs test "$(cnt ext4_sync_file_enter)" = "$(cnt sys_enter_fsync)"
check synth_has_processes test "$(cnt sched_process_exec)" = 4
for t in block_bio_backmerge block_bio_frontmerge block_split block_rq_insert block_rq_requeue \
	sys_enter_fsync io_uring_submit_req sys_enter_pwrite64; do
	check "synth_has_$t" test "$(cnt $t)" -gt 0
done
check synth_insert_only_with_scheduler test "$(awk '$2 == "block_rq_insert" && / dev=259:/' "$T/cat" | wc -l)" = 0
check synth_about_10_events_per_io test "$(jq '.events / 3000 | floor' "$T/info.json")" = 8

# Metadata names every process, device and file the events use.
missing=$(awk '{ for (i = 3; i <= NF; i++) { if ($i ~ /^pid=/) print "pid." substr($i, 5); if ($i ~ /^dev=/) print "dev." substr($i, 5) } }' "$T/cat" | sort -u |
	while read -r key; do jq -e --arg k "$key" '.metadata[$k]' "$T/info.json" >/dev/null || echo "$key"; done)
check synth_metadata_covers_pids_and_devs test -z "$missing"
missing=$(awk '$2 ~ /^sys_enter_p(read|write)64$/ { split($4, p, "="); split($6, f, "="); print "fd." p[2] "." f[2] }' "$T/cat" | sort -u |
	while read -r key; do jq -e --arg k "$key" '.metadata[$k]' "$T/info.json" >/dev/null || echo "$key"; done)
check synth_metadata_covers_fds test -z "$missing"

# Lifecycles, checked event by event in timestamp order.
lifecycle=$(awk '
function f(name,   i) { for (i = 3; i <= NF; i++) if (index($i, name "=") == 1) return substr($i, length(name) + 2); return "" }
$2 ~ /^sys_enter_(pread64|pwrite64|fsync|io_uring_enter)$/ { t = f("tid"); if (open[t] != "") print "tid " t " enters twice"; open[t] = substr($2, 11); cnt[t] = f("count") }
$2 ~ /^sys_exit_(pread64|pwrite64|fsync|io_uring_enter)$/ { t = f("tid"); if (open[t] != substr($2, 10)) print "tid " t " exits " $2 " without enter"
	if ($2 ~ /pread|pwrite/ && f("ret") != cnt[t]) print "tid " t " ret " f("ret") " != count " cnt[t]; open[t] = "" }
$2 == "block_bio_queue" { q[f("bio")] = 1 }
$2 == "block_getrq" || $2 ~ /merge$/ { b = f("bio"); if (!q[b] && !split_bio[b]) print "bio " b " not queued"; delete q[b] }
$2 == "block_split" { split_bio[f("bio")] = 1 }
$2 ~ /merge$/ { merged[f("bio")] = f("dev") }
$2 == "block_rq_insert" { r = f("rq"); if (st[r] != "") print "rq " r " inserted while " st[r]; st[r] = "ins" }
$2 == "block_rq_issue" { r = f("rq"); if (st[r] != "" && st[r] != "ins" && st[r] != "req") print "rq " r " issued while " st[r]; st[r] = "iss"
	d = f("dev"); if (++depth[d] > maxdepth[d]) maxdepth[d] = depth[d]
	n = split(substr(f("bios"), 2, length(f("bios")) - 2), bs, ","); nb = f("nr_bios")
	for (i = 1; i <= n; i++) if (i <= nb) delete merged[bs[i]]; else if (bs[i] != "0x0") print "bios past nr_bios" }
$2 == "block_rq_requeue" { r = f("rq"); if (st[r] != "iss") print "rq " r " requeued while " st[r]; st[r] = "req"; depth[f("dev")]-- }
$2 == "block_rq_complete" { r = f("rq"); if (st[r] != "iss") print "rq " r " completed while " st[r]; st[r] = ""; depth[f("dev")]-- }
END { for (b in merged) print "merged bio " b " never issued in a chain"; for (b in q) print "bio " b " never got a request"; for (t in open) if (open[t] != "") print "tid " t " never exits"
	for (d in maxdepth) if (maxdepth[d] < 2) print "dev " d " queue depth " maxdepth[d] }
' "$T/cat" | head -5)
[ -z "$lifecycle" ] && pass synth_lifecycles_consistent || fail synth_lifecycles_consistent "$lifecycle"
check synth_flush_requests grep -qE 'block_rq_issue .* bytes=0 opf=0x802 ' "$T/cat"

# Device latency (D2C): reads around 70 us, a long tail, and --slow-factor scales it.
d2c() { st-format cat --type block_rq_issue,block_rq_complete "$1" | awk '
	{ for (i = 3; i <= NF; i++) if ($i ~ /^rq=/) r = $i }
	$2 == "block_rq_issue" { t[r] = $1 } $2 == "block_rq_complete" { print $1 - t[r] }' | sort -n; }
d2c "$T/s1.st" >"$T/d2c"
median=$(awk '{ a[NR] = $1 } END { print a[int(NR / 2)] }' "$T/d2c")
check synth_d2c_median_us_scale awk -v m="$median" 'BEGIN { exit !(m > 20000 && m < 200000) }'
st-format synth -o "$T/tail.st" --ios 20000 --seed 42 >/dev/null
d2c "$T/tail.st" >"$T/d2c-tail"
check synth_long_tail awk '{ a[NR] = $1 } END { exit !(a[NR] > 10 * a[int(NR / 2)] && a[int(NR * 0.999)] > 3 * a[int(NR / 2)]) }' "$T/d2c-tail"
st-format synth -o "$T/slow.st" --ios 3000 --seed 42 --slow-factor 4 >/dev/null
slow_median=$(d2c "$T/slow.st" | awk '{ a[NR] = $1 } END { print a[int(NR / 2)] }')
check synth_slow_factor_scales_d2c awk -v a="$median" -v b="$slow_median" 'BEGIN { exit !(b / a > 3.4 && b / a < 4.6) }'
check synth_slow_factor_in_metadata test "$(st-format info --json "$T/slow.st" | jq -r '.metadata.options | fromjson | .slow_factor')" = 4

# Nearly, not perfectly, time-ordered: neighbouring chunks overlap by a few us at most.
st-format synth -o "$T/small-chunks.st" --ios 3000 --seed 42 --chunk-size 4096 >/dev/null
order=$(st-format info --json --chunks "$T/small-chunks.st" | jq '[.chunk_list | map(select(.kind == "events")) | . as $c | range(1; length) | $c[. - 1].last_ts - $c[.].first_ts] | "\(max) \(map(select(. > 0)) | length)"' -r)
check synth_out_of_order_bounded test "${order% *}" -lt 3000
check synth_some_out_of_order test "${order#* }" -gt 0

# Options reach the trace: devices, processes, CPUs.
st-format synth -o "$T/wide.st" --ios 500 --devices 5 --procs 9 --cpus 3 >/dev/null
st-format info --json "$T/wide.st" >"$T/wide.json"
check synth_devices_option test "$(jq '[.metadata | keys[] | select(startswith("dev."))] | length' "$T/wide.json")" = 5
check synth_procs_option test "$(jq '.events_per_type.sched_process_exec' "$T/wide.json")" = 9
check synth_cpus_option test "$(st-format cat "$T/wide.st" | grep -o ' cpu=[0-9]*' | sort -u | wc -l)" = 3

# Lost counts grow with the I/Os done and go out in LOST chunks during the
# file, as a recorder's do: the file cut after its middle chunk reports about
# half of --lost (1000 over 4 CPUs; between a quarter and three quarters,
# since a LOST chunk follows the events chunk after the counts change), the
# whole file all of it.
st-format synth -o "$T/lossy.st" --ios 3000 --seed 42 --lost 1000 --cpus 4 --chunk-size 16384 >/dev/null
st-format info --json --chunks "$T/lossy.st" >"$T/lossy.json"
check synth_lost_whole_file test "$(jq .lost_events "$T/lossy.json")" = 1000
mid=$(jq '[.chunk_list[] | select(.kind == "events")] | .[length / 2 | floor] | .offset' "$T/lossy.json")
head -c "$mid" "$T/lossy.st" >"$T/lossy-cut.st"
cut_lost=$(st-format info --json "$T/lossy-cut.st" | jq .lost_events)
if [ "$cut_lost" -ge 250 ] && [ "$cut_lost" -le 750 ]; then
	pass synth_lost_in_cut_file
else
	fail synth_lost_in_cut_file "the first half of the file reports $cut_lost of 1000 lost events"
fi
