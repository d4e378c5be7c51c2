#!/usr/bin/env bash
# A real Prometheus server scrapes st-analyze --follow --metrics every second
# while fio reads a loop device under st-record. After fio ends, Prometheus'
# own HTTP API must hold sttrace_io_total for the device's reads equal to
# fio's I/O count, and histogram_quantile(0.99, ...) of their total latency
# within one bucket of st-analyze's p99 of the same recording. promtool
# accepts the text exposition; Prometheus, which asks for OpenMetrics first,
# scrapes the target without error (its parser accepts that format too).
# The recorder's ring buffer gauges are what st-format info reports of the
# file. After st-record ends, the follower keeps serving the end: Prometheus'
# own samples scraped after it, 4 or more, hold up{job="sttrace"} 1 and
# sttrace_io_total of the reads at fio's count; promtool accepts the text
# exposition served then, and the OpenMetrics one is what the Prometheus
# Python client's OpenMetrics parser reads, the reads' count in it too
# (promtool 2.42 lints only the text format: it calls every OpenMetrics
# counter sample "no help text").
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"
. "$(dirname "$0")/common.sh"

NAMES="live.prom.scrape live.prom.count live.prom.p99 live.prom.openmetrics live.prom.promtool live.prom.ring
	live.prom.after_end live.prom.after_end_formats"
live_require $NAMES
if ! command -v prometheus >/dev/null || ! command -v promtool >/dev/null || ! command -v curl >/dev/null; then
	for n in $NAMES; do skip "$n" "prometheus, promtool or curl not installed (scripts/install-deps.sh)"; done
	exit 0
fi

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# prom_query EXPR: the value of an instant query, "" when there is none.
prom_query() {
	curl -s --get "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$1" |
		jq -r '.data.result[0].value[1] // empty'
}
# prom_since EXPR T: the values of the samples of EXPR Prometheus holds
# (the last 60 s) with a timestamp after T (seconds since the epoch).
prom_since() {
	curl -s --get "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$1[60s]" |
		jq -r --argjson t "$2" '[.data.result[0].values[]? | select(.[0] > $t) | .[1]] | join(" ")'
}

IOS=6000
st_tmpdir dir
st_loopdev dev 64
st_nomerges "$dev"
name=$(basename "$dev")
mport=$(free_port)
pport=$(free_port)

rec_start "$dir/run.sttrace" "$dir/record.log" -d "$dev" -e block ||
	{ fail live.prom.scrape "st-record did not start"; exit 1; }
st-analyze --follow --metrics "127.0.0.1:$mport" "$dir/run.sttrace" >"$dir/follow.out" 2>"$dir/follow.err" &
follower=$!
at_exit "kill -KILL $follower"

cat >"$dir/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: sttrace
    static_configs:
      - targets: ['127.0.0.1:$mport']
EOF
prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/tsdb" \
	--web.listen-address="127.0.0.1:$pport" >"$dir/prometheus.log" 2>&1 &
prom=$!
at_exit "kill -KILL $prom"
for ((i = 0; i < 300; i++)); do
	[ "$(prom_query 'up{job="sttrace"}')" = 1 ] && break
	sleep 0.1
done
[ "$(prom_query 'up{job="sttrace"}')" = 1 ] ||
	{ fail live.prom.scrape "Prometheus never scraped the follower: $(tail -2 "$dir/prometheus.log")"; exit 1; }

live_fio "$dev" "$dir/fio.json" $IOS
fio_ios=$(jq '.jobs[0].read.total_ios' "$dir/fio.json")

# Until Prometheus holds the count the follower reached (held back by at most
# the flush interval, a margin and a scrape), and it stays for two scrapes.
sel="dev=\"$name\",op=\"read\""
last="" same=0
for ((i = 0; i < 150 && same < 20; i++)); do
	now=$(prom_query "sttrace_io_total{$sel}")
	if [ -n "$now" ] && [ "$now" = "$last" ]; then same=$((same + 1)); else same=0; fi
	last=$now
	[ "$now" = "$fio_ios" ] && [ $same -ge 2 ] && break
	sleep 0.1
done
count=$last
p99_prom=$(prom_query "histogram_quantile(0.99, sum by (le, dev) (sttrace_io_latency_seconds_bucket{$sel,stage=\"total\"}))")
# The most the ring held only grows: st-format info the same before and
# after the scrape (a view, which sets the gauges, apart) is what it served.
ring_info() {
	st-format info "$dir/run.sttrace" 2>/dev/null | awk '/^ring buffer/ { print $7, $3 }'
}
ring_before=$(ring_info)
sleep 1.5
curl -s "http://127.0.0.1:$mport/metrics" >"$dir/metrics.txt"
ring_after=$(ring_info)
# What Prometheus asks for first (its scrape's Accept header) is OpenMetrics.
curl -s -D "$dir/om.headers" -H 'Accept: application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5' \
	"http://127.0.0.1:$mport/metrics" >"$dir/metrics.om"
targets=$(curl -s "http://127.0.0.1:$pport/api/v1/targets" | jq -r '.data.activeTargets[0] | "\(.health) \(.lastError)"')
rec_stop
# the follower at the end of the recording; then Prometheus' next scrapes
live_wait_line "$dir/follow.err" "serves its final values until SIGINT" 30
t_end=$(date +%s.%N)
up_after=""
for ((i = 0; i < 40; i++)); do
	up_after=$(prom_since 'up{job="sttrace"}' "$t_end")
	[ "$(wc -w <<<"$up_after")" -ge 4 ] && break
	sleep 0.5
done
count_after=$(prom_since "sttrace_io_total{dev=\"$name\",op=\"read\"}" "$t_end")
curl -s -m 5 "http://127.0.0.1:$mport/metrics" >"$dir/end.txt"
curl -s -m 5 -H 'Accept: application/openmetrics-text;version=1.0.0' "http://127.0.0.1:$mport/metrics" >"$dir/end.om"

if [ "$targets" = "up " ]; then
	pass live.prom.scrape
else
	fail live.prom.scrape "target: $targets"
fi

# This kernel now and then runs no completion probe for a request (as in
# t_follow_pipe): such a request is no complete I/O, live or offline.
devno=$(rec_devno "$dev")
uncompleted=$(($(rec_issued "$dir/run.sttrace" dev | grep -cx "$devno") -
	$(rec_completed "$dir/run.sttrace" dev | grep -cx "$devno")))
if [ "$fio_ios" = "$IOS" ] && [ "${count:-}" = "$((fio_ios - uncompleted))" ]; then
	pass live.prom.count
else
	fail live.prom.count "Prometheus: sttrace_io_total{$sel} ${count:-none}, fio: $fio_ios ($uncompleted without a completion)"
fi

# st-analyze's p99 of the reads' total (CSV: group, ..., stage in column 7, p99 in 13).
p99_us=$(st-analyze --csv "$dir/run.sttrace" 2>/dev/null |
	awk -F, -v g="$name read" '$1 == g && $7 == "total" { print $13 }')
# The buckets' bounds: 10^(3 + k/5) ns to three digits (analyze/st-analyze/metrics.c), k = 0..35.
bucket() {
	awk -v v="$1" 'BEGIN { for (k = 0; k < 36; k++) { b = sprintf("%.3g", 10 ^ (3 + k / 5));
		if (v <= b + 0) { print k; exit } } print 36 }'
}
if [ -n "$p99_prom" ] && [ -n "$p99_us" ]; then
	kp=$(bucket "$(awk -v s="$p99_prom" 'BEGIN { print s * 1e9 }')")
	ka=$(bucket "$(awk -v u="$p99_us" 'BEGIN { print u * 1e3 }')")
	if [ $((kp - ka)) -ge -1 ] && [ $((kp - ka)) -le 1 ]; then
		pass live.prom.p99
	else
		fail live.prom.p99 "Prometheus p99 $p99_prom s (bucket $kp), st-analyze $p99_us us (bucket $ka)"
	fi
else
	fail live.prom.p99 "Prometheus p99 '${p99_prom}', st-analyze p99 '${p99_us}'"
fi
echo "live.prom: count $count (fio $fio_ios), p99 Prometheus $p99_prom s, st-analyze $p99_us us"

if grep -qi '^content-type: application/openmetrics-text; version=1.0.0' "$dir/om.headers" &&
	[ "$(tail -1 "$dir/metrics.om")" = "# EOF" ] && grep -q '^# TYPE sttrace_io counter$' "$dir/metrics.om" &&
	grep -q "^sttrace_io_total{host=\"[^\"]*\",$sel} $count\$" "$dir/metrics.om"; then
	pass live.prom.openmetrics
else
	fail live.prom.openmetrics "$(grep -i content-type "$dir/om.headers") last line: $(tail -1 "$dir/metrics.om")"
fi
ring=$(awk '/^sttrace_recorder_ring_buffer_used_max_bytes\{/ { u = $2 }
	/^sttrace_recorder_ring_buffer_bytes\{/ { s = $2 } END { print u, s }' "$dir/metrics.txt")
if [ -n "$ring_before" ] && [ "$ring_before" = "$ring_after" ] && [ "$ring" = "$ring_before" ]; then
	pass live.prom.ring
else
	fail live.prom.ring "served (used, size): '$ring', st-format info: '$ring_before', then '$ring_after'"
fi
if [ -s "$dir/metrics.txt" ] && promtool check metrics <"$dir/metrics.txt" >"$dir/promtool.out" 2>&1; then
	pass live.prom.promtool
else
	fail live.prom.promtool "$(head -3 "$dir/promtool.out")"
fi

# after the end: 4 or more scrapes, every one up and at the final count
n_up=$(wc -w <<<"$up_after")
if [ "$n_up" -ge 4 ] && [ -z "$(tr ' ' '\n' <<<"$up_after" | grep -vx 1)" ] &&
	[ "$(wc -w <<<"$count_after")" -ge 4 ] &&
	[ -z "$(tr ' ' '\n' <<<"$count_after" | grep -vx "$((fio_ios - uncompleted))")" ]; then
	pass live.prom.after_end
else
	fail live.prom.after_end "Prometheus' samples after the end: up '$up_after', sttrace_io_total{$sel} '$count_after' (fio $fio_ios, $uncompleted without a completion); follower: $(tail -1 "$dir/follow.err")"
fi
# Debian's python3-prometheus-client is for Debian's python3
if ! /usr/bin/python3 -c 'import prometheus_client' 2>/dev/null; then
	skip live.prom.after_end_formats "python3-prometheus-client not installed (scripts/install-deps.sh)"
	exit 0
fi
bad=""
[ -s "$dir/end.txt" ] && promtool check metrics <"$dir/end.txt" >"$dir/end.promtool" 2>&1 ||
	bad+="end.txt ($(wc -c <"$dir/end.txt") bytes): $(head -2 "$dir/end.promtool" | tr '\n' ' '); "
om=$(/usr/bin/python3 - "$dir/end.om" "$name" <<'PY' 2>&1
import sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
for f in text_string_to_metric_families(open(sys.argv[1]).read()):
    for s in f.samples:
        if s.name == "sttrace_io_total" and s.labels.get("dev") == sys.argv[2] and s.labels.get("op") == "read":
            print(int(s.value))
PY
)
[ "$om" = "$((fio_ios - uncompleted))" ] || bad+="end.om: $(tail -1 <<<"$om") (the reads' count: $((fio_ios - uncompleted))); "
[ -z "$bad" ] && pass live.prom.after_end_formats || fail live.prom.after_end_formats "$bad"
