# Shared by the tests of st-analyze --follow: source it after ../lib.sh and
# ../record/common.sh.

# live_require NAME...: one SKIP per name and exit unless BPF recording and
# fio work here.
live_require() {
	local why name
	why=$(bpf_unavailable)
	command -v fio >/dev/null && command -v jq >/dev/null || why=${why:-fio or jq not installed}
	if [ -n "$why" ]; then
		for name in "$@"; do skip "$name" "$why"; done
		exit 0
	fi
}

# live_stamp: every line of standard input with the wall-clock time (s) it came.
live_stamp() {
	local line
	while IFS= read -r line; do printf '%s %s\n' "$EPOCHREALTIME" "$line"; done
}

# live_report OUT: what a follower printed after its last view (the final report).
live_report() {
	sed -n '/^--- end of the recording/,$p' "$1" | tail -n +2
}

# live_wait_line FILE PATTERN SECONDS: until FILE has a line matching PATTERN.
live_wait_line() {
	local i
	for ((i = 0; i < $3 * 20; i++)); do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# live_fio DEV JSON IOS: fio's 4k random O_DIRECT reads of DEV, IOS of them
# at most 2000 a second (so they span seconds), its JSON report in JSON.
live_fio() {
	fio --name=live --filename="$1" --rw=randread --bs=4k --direct=1 --ioengine=psync \
		--size=64M --number_ios="$3" --rate_iops=2000 --output-format=json --output="$2" \
		>/dev/null 2>&1
}
