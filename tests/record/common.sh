# Shared by the st-record tests: source it after ../lib.sh.
#
# Every test records real I/O, so it needs root, BPF and tracefs: without them
# it reports one SKIP with the reason and exits.

rec_require_bpf() {
	local why
	why=$(bpf_unavailable)
	if [ -n "$why" ]; then
		skip "$1" "$why"
		exit 0
	fi
}

# bt_stop PID: end a bpftrace started in the background, which prints its
# maps on SIGINT. A background job of a non-interactive shell starts with
# SIGINT ignored, and bpftrace installs its handler only once its probes are
# attached (after its "Attaching" line): a SIGINT before that is lost, and
# the tracer runs for good (seen in a clean-clone run after drop_caches).
# So SIGINT again until it exits, for up to 20 s; then SIGKILL, and fail.
bt_stop() {
	local i
	for ((i = 0; i < 100; i++)); do
		kill -INT "$1" 2>/dev/null || break
		sleep 0.2
	done
	kill -0 "$1" 2>/dev/null && { kill -KILL "$1"; wait "$1"; return 1; }
	wait "$1"
	return 0
}

# rec_wait_line PID LOG PATTERN: until LOG has a line matching PATTERN
# (a tracer's "attached" line); fails when PID exits first, or after 30 s.
rec_wait_line() {
	local i
	for ((i = 0; i < 600; i++)); do
		grep -q "$3" "$2" 2>/dev/null && return 0
		kill -0 "$1" 2>/dev/null || break
		sleep 0.05
	done
	return 1
}

# rec_start OUT LOG ARGS...: st-record in the background, returns once its
# probes are attached (its "recording" line). The pid is in $REC_PID.
rec_start() {
	local out=$1 log=$2
	shift 2
	: >"$log"	# exists before the loop below reads it
	st-record -o "$out" "$@" 2>"$log" &
	REC_PID=$!
	at_exit "kill -KILL $REC_PID"
	rec_wait_line "$REC_PID" "$log" "recording .* probes" && return 0
	echo "st-record did not start: $(cat "$log")" >&2
	return 1
}

# rec_stop: SIGINT the background recorder and wait; its exit status.
rec_stop() {
	kill -INT "$REC_PID"
	wait "$REC_PID"
}

# rec_rows FILE TYPE COLUMN...: the named columns of every TYPE event, space
# separated, one event a line (st-format cat --csv, columns found by name).
rec_rows() {
	local file=$1 type=$2
	shift 2
	st-format cat --csv -t "$type" "$file" | rec_csv_columns "$@"
}

# rec_csv_columns COLUMN...: the named columns of a CSV on stdin (its first
# line names them), space separated, one row a line.
rec_csv_columns() {
	awk -F, -v cols="$*" '
		NR == 1 { n = split(cols, c, " "); for (i = 1; i <= NF; i++) idx[$i] = i; next }
		{ s = ""; for (j = 1; j <= n; j++) s = s (j > 1 ? " " : "") $(idx[c[j]]); print s }'
}

# rec_count FILE TYPE: how many TYPE events the file holds.
rec_count() {
	rec_rows "$1" "$2" ts | wc -l
}

# rec_lost FILE: the lost-event total the file stores.
rec_lost() {
	st-format info "$1" | awk '/^lost events/ { print $3; exit }'
}

# rec_check_no_loss NAME FILE: passes NAME when FILE counts no lost event.
rec_check_no_loss() {
	local lost
	lost=$(rec_lost "$2")
	if [ "$lost" = 0 ]; then pass "$1"; else fail "$1" "${lost:-unknown} events lost"; fi
}

# rec_ext4 NAME DEV DIR [MKFS_OPTION...]: an ext4 file system on DEV mounted
# on DIR (made), unmounted at exit; fails NAME and exits when that cannot be
# done.
rec_ext4() {
	mkfs.ext4 -q -F "${@:4}" "$2" || { fail "$1" "mkfs.ext4 $2 failed"; exit 1; }
	mkdir -p "$3"
	mount "$2" "$3" || { fail "$1" "mount $2 failed"; exit 1; }
	at_exit "umount '$3'"
}

# rec_in_namespace SETUP CMD ARGS...: CMD in a private mount namespace, after
# the shell code SETUP (mounts that hide what the test takes away; the
# machine's own mounts stay as they were). Exit 99 when SETUP fails.
rec_in_namespace() {
	local setup=$1
	shift
	unshare -m --propagation private sh -c "$setup"' || exit 99; exec "$@"' sh "$@"
}

# rec_devno DEV: a block device's major:minor as st-format prints devices.
rec_devno() {
	printf '%d:%d' "0x$(stat -c %t "$1")" "0x$(stat -c %T "$1")"
}

# AWK_HEX: an awk function hex("0x1a") -> 26 (mawk has no strtonum).
AWK_HEX='function hex(s,   i, v) { v = 0; s = tolower(s); sub(/^0x/, "", s);
	for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1;
	return v }'

# rec_bpf_stats: the kernel's BPF run-time statistics on until exit
# (scripts/bench/bpf-stats-on: unlike kernel.bpf_stats_enabled, which other
# users of the machine may switch off, they stay on while it runs). Fails
# when the kernel refuses.
rec_bpf_stats() {
	local log i
	log=$(mktemp)
	at_exit "rm -f '$log'"
	"$(dirname "${BASH_SOURCE[0]}")/../../scripts/bench/bpf-stats-on" >"$log" 2>&1 &
	at_exit "kill $!"
	for ((i = 0; i < 100; i++)); do
		grep -q . "$log" && break
		sleep 0.05
	done
	grep -qx on "$log"
}

# rec_require_fio NAME: fio and jq (its JSON), or one SKIP with the reason and exit.
rec_require_fio() {
	command -v fio >/dev/null && command -v jq >/dev/null ||
		{ skip "$1" "fio or jq not installed"; exit 0; }
}

# rec_require_fio_stats NAME: fio, jq and the kernel's BPF run-time
# statistics (rec_bpf_stats, on until exit), or one SKIP with the reason and exit.
rec_require_fio_stats() {
	rec_require_fio "$1"
	rec_bpf_stats || { skip "$1" "the kernel refused BPF run-time statistics"; exit 0; }
}

# rec_probe_runs FILE [PROGRAM_REGEX [KEY]]: a count st-record stored in the
# probe.* metadata (with BPF statistics on), summed over matching programs:
# KEY runs (the default: runs wholly inside the recording window) or
# edge_runs (runs under way as the window opened or closed).
rec_probe_runs() {
	st-format info "$1" | awk -v re="^probe\\\\.(${2:-.*})\$" -v key="${3:-runs}" '
		$1 ~ re { n_kv = split($3, kv, /[=;]/); for (i = 1; i < n_kv; i += 2) if (kv[i] == key) n += kv[i + 1] }
		END { print n + 0 }'
}

# rec_issued FILE COLUMN...: rec_rows of every issued request, whichever
# event recorded it (block_rq_issue, or block_rq_issue_stamped of `block`).
rec_issued() {
	local file=$1
	shift
	rec_rows "$file" block_rq_issue "$@"
	rec_rows "$file" block_rq_issue_stamped "$@"
}

# rec_completed FILE COLUMN...: rec_rows of every request completion, whichever
# event recorded it (block_rq_complete, or block_rq_complete_compact of
# `block`, whose columns are ts, rq, dev, bytes and error).
rec_completed() {
	local file=$1
	shift
	rec_rows "$file" block_rq_complete "$@"
	rec_rows "$file" block_rq_complete_compact "$@"
}

# rec_cgroup VAR NAME: a new cgroup v2 group NAME.$$ (cgroup2 mounted for the
# test when it is nowhere), removed at exit, path in $VAR; fails when none
# can be made.
rec_cgroup() {
	local _root _mnt
	_root=$(findmnt -n -t cgroup2 -o TARGET | head -1)
	if [ -z "$_root" ]; then
		_mnt=$(mktemp -d "${TMPDIR:-/tmp}/sttrace-cg.XXXXXX") || return 1
		at_exit "rmdir '$_mnt'"
		mount -t cgroup2 none "$_mnt" || return 1
		at_exit "umount '$_mnt'"
		_root=$_mnt
	fi
	mkdir "$_root/$2.$$" || return 1
	at_exit "rmdir '$_root/$2.$$'"
	printf -v "$1" '%s' "$_root/$2.$$"
}

# rec_run_gated TRACE LOG GO FILTER... -- CMD...: CMD starts first and waits
# until the file GO exists; then st-record starts with FILTER (a PID word in
# it becomes CMD's pid; CMD joins $MOVE_TO/cgroup.procs first when MOVE_TO is
# set), GO is made, CMD runs to its end and the recorder stops. Fails when
# the recorder did not start (its log says why).
rec_run_gated() {
	local trace=$1 log=$2 go=$3 pid i
	local -a filter=()
	shift 3
	while [ "$1" != -- ]; do
		filter+=("$1")
		shift
	done
	shift
	rm -f "$go"
	"$@" &
	pid=$!
	[ -n "${MOVE_TO:-}" ] && echo "$pid" >"$MOVE_TO/cgroup.procs"
	for i in "${!filter[@]}"; do
		[ "${filter[i]}" = PID ] && filter[i]=$pid
	done
	rec_start "$trace" "$log" "${filter[@]}" || { kill "$pid"; return 1; }
	touch "$go"
	wait "$pid"
	rec_stop
}

# rec_throttle_cgroup VAR DEVNO IOPS: a new cgroup whose reads of the device
# DEVNO (MAJ:MIN) are limited to IOPS, removed at exit, path in $VAR: v1 blkio
# (blkio.throttle.read_iops_device) where it is mounted, else v2 io.max.
# Returns 2 when neither controller is there, 1 when the group cannot be made.
rec_throttle_cgroup() {
	local _v1 _v2 _cg
	_v1=$(findmnt -n -t cgroup -o TARGET,OPTIONS | awk '$2 ~ /(^|,)blkio(,|$)/ { print $1; exit }')
	if [ -n "$_v1" ]; then
		_cg=$_v1/sttrace-throttle.$$
		mkdir "$_cg" || return 1
		at_exit "rmdir '$_cg'"
		echo "$2 $3" >"$_cg/blkio.throttle.read_iops_device" || return 1
	else
		_v2=$(findmnt -n -t cgroup2 -o TARGET | head -1)
		[ -n "$_v2" ] && grep -qw io "$_v2/cgroup.controllers" 2>/dev/null || return 2
		grep -qw io "$_v2/cgroup.subtree_control" ||
			{ echo +io >"$_v2/cgroup.subtree_control" || return 2; }
		_cg=$_v2/sttrace-throttle.$$
		mkdir "$_cg" || return 1
		at_exit "rmdir '$_cg'"
		echo "$2 riops=$3" >"$_cg/io.max" || return 1
	fi
	printf -v "$1" '%s' "$_cg"
}

# rec_dirty_bytes BYTES: vm.dirty_bytes set to BYTES until exit. The old
# setting comes back as it was given: dirty_bytes when it was not 0, else
# dirty_ratio (the kernel refuses 0 for dirty_bytes; each one written sets
# the other to 0).
rec_dirty_bytes() {
	local old_bytes old_ratio
	old_bytes=$(cat /proc/sys/vm/dirty_bytes)
	old_ratio=$(cat /proc/sys/vm/dirty_ratio)
	if [ "$old_bytes" != 0 ]; then
		REC_DIRTY_RESTORE="echo $old_bytes >/proc/sys/vm/dirty_bytes"
	else
		REC_DIRTY_RESTORE="echo $old_ratio >/proc/sys/vm/dirty_ratio"
	fi
	at_exit "$REC_DIRTY_RESTORE"
	echo "$1" >/proc/sys/vm/dirty_bytes
}

# rec_group_ios CSV GROUP: the I/Os st-analyze counts for GROUP (a cgroup by
# its path under the v2 mount, a file, ...) in the CSV of `st-analyze --by
# KEY --csv`: its total stage's ios.
rec_group_ios() {
	awk -F, -v g="$2" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$(col["group"]) == g && $(col["stage"]) == "total" { n += $(col["ios"]) }
		END { print n + 0 }' "$1"
}
