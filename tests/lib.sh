# Shared helpers for the shell tests; source it: . "$(dirname "$0")/../lib.sh"
#
# Results: pass NAME, fail NAME WHY, skip NAME WHY print the lines tests/run.sh
# counts. check NAME CMD... runs CMD and passes or fails NAME on its status.
# Resources made through these helpers are released by an EXIT trap, also when
# the test fails or is interrupted.

ST_BUILD=${ST_BUILD:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build}
export PATH="$ST_BUILD:$PATH"

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: ${2:-}"; ST_FAILED=1; }
skip() { echo "SKIP: $1: $2"; }
check() {
	local name=$1; shift
	if "$@"; then pass "$name"; else fail "$name" "command failed: $*"; fi
}

# expect_fault NAME INPUT TEXT: $checker (a checking script under test) exits
# 1 on INPUT and says TEXT; its output goes to $T/NAME.out.
expect_fault() {
	"$checker" "$2" >"$T/$1.out" 2>&1
	local rc=$?
	check "${1}_exit" test $rc -eq 1
	check "${1}_names_it" grep -qF -- "$3" "$T/$1.out"
}

ST_CLEANUP=()
st_cleanup() {
	local i
	for ((i = ${#ST_CLEANUP[@]} - 1; i >= 0; i--)); do
		eval "${ST_CLEANUP[i]}" >/dev/null 2>&1 || true
	done
}
trap st_cleanup EXIT
trap 'exit 130' INT TERM
at_exit() { ST_CLEANUP+=("$*"); }

# st_tmpdir VAR: a scratch directory, removed at exit, path in $VAR.
# (Helpers set a variable instead of printing, since a $(...) subshell
# would lose the cleanup they register.)
st_tmpdir() {
	local _d
	_d=$(mktemp -d "${TMPDIR:-/tmp}/sttrace-test.XXXXXX") || return 1
	at_exit "rm -rf '$_d'"
	printf -v "$1" '%s' "$_d"
}

# st_screenshots VAR: the directory where tests keep the screenshots they
# take, build/tests/screenshots (out of git), made if missing; path in $VAR.
st_screenshots() {
	local _d="$ST_BUILD/tests/screenshots"
	mkdir -p "$_d" || return 1
	printf -v "$1" '%s' "$_d"
}

# st_shot ERRLOG OUT.png W H URL: headless Chromium's screenshot of URL in a
# W x H window (what a user sees in a window that size);
# Chromium's chatter appended to ERRLOG. Needs $CHROMIUM.
st_shot() {
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu \
		--window-size="$3,$4" --screenshot="$2" "$5" >/dev/null 2>>"$1"
}

# st_keep NAME FILE...: copies of FILEs (a failure's recording and what was
# made of it) in a new directory that outlives the test; prints its path.
st_keep() {
	local _d
	_d=$(mktemp -d "${TMPDIR:-/tmp}/sttrace-kept-$1.XXXXXX") || return 1
	shift
	cp -a "$@" "$_d/" && echo "$_d"
}

# Why BPF recording cannot run here, or nothing when it can.
bpf_unavailable() {
	[ "$(id -u)" -eq 0 ] || { echo "not root"; return; }
	[ -r /sys/kernel/btf/vmlinux ] || { echo "no kernel BTF"; return; }
	[ -x "$ST_BUILD/st-record" ] || { echo "st-record not built (no clang/bpftool/libbpf)"; return; }
	if [ ! -d /sys/kernel/tracing/events ]; then
		mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null ||
			{ echo "tracefs not mounted and cannot be mounted"; return; }
	fi
}

# st_loopdev VAR SIZE_MB: a loop device over a new file in /dev/shm, detached
# and removed at exit, path in $VAR.
st_loopdev() {
	local _img _dev
	_img=$(mktemp /dev/shm/sttrace-loop.XXXXXX) || return 1
	at_exit "rm -f '$_img'"
	truncate -s "${2}M" "$_img"
	_dev=$(losetup --find --show "$_img") || return 1
	at_exit "losetup -d '$_dev'"
	printf -v "$1" '%s' "$_dev"
}

# st_nomerges DEV...: the block layer stops merging adjacent I/Os into one
# request on DEV until exit. Two random I/Os can be adjacent and in flight
# together; merged, they become one request, and a count or multiset of
# requests is no longer that of the I/Os a test compares it with.
st_nomerges() {
	local dev q
	for dev in "$@"; do
		q=/sys/block/$(basename "$dev")/queue/nomerges
		at_exit "echo $(cat "$q") > '$q'"
		echo 2 >"$q"
	done
}

# st_fresh_fio VAR DIR: a copy of fio made in the new directory DIR, its path
# in $VAR, and the page cache dropped, as on a machine that never ran fio:
# its binary, libraries and the strings it passes to the kernel are not
# resident (a name read at a syscall's entry, a library read from disk).
st_fresh_fio() {
	mkdir -p "$2" && cp "$(command -v fio)" "$2/fio" || return 1
	printf -v "$1" '%s' "$2/fio"
	sync
	echo 3 >/proc/sys/vm/drop_caches
}
