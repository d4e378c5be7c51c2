#!/usr/bin/env bash
# The kernel matrix: tests/kernels/checks.sh with the static st-record
# (build/st-record-static) on each of Debian's kernels, 5.10, 6.1 and 6.12
# (fetched by fetch.sh, booted by boot.sh under qemu), and natively on this
# machine's kernel (host). KERNELS (default "5.10 6.1 6.12 host") picks
# them: `make test-kernels K=6.1`.
#
# Writes $ST_BUILD/kernels/matrix.md: the table kernel x preset x what was
# recorded, and each kernel's wall time (boot and checks). Each boot's logs
# stay in $ST_BUILD/kernels/K/matrix/ (console.log, out). A kernel that
# does not boot or does not finish its checks FAILs; SKIP only when qemu
# cannot run it (qemu not installed, the kernel cannot be fetched).
. "$(dirname "$0")/../lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)

why=$(bpf_unavailable)
[ -z "$why" ] || { skip kernels "$why"; exit 0; }
REC=$ST_BUILD/st-record-static
[ -x "$REC" ] || { fail kernels.static "$REC not built (make static: needs the static libraries)"; exit 0; }

OUT=$ST_BUILD/kernels
mkdir -p "$OUT"
st_tmpdir T
: >"$T/times"

for k in ${KERNELS:-5.10 6.1 6.12 host}; do
	rows=$T/rows.$k
	: >"$rows"
	start=$EPOCHREALTIME
	if [ "$k" = host ]; then
		ST_RECORD=$REC "$HERE/checks.sh" host "$rows"
	elif ! command -v qemu-system-x86_64 >/dev/null; then
		skip "kernels.$k" "qemu-system-x86_64 not installed (apt-get install qemu-system-x86)"
		continue
	elif ! "$HERE/fetch.sh" "$k" >"$T/fetch.$k" 2>&1; then
		skip "kernels.$k" "qemu has no kernel $k to boot: fetch.sh: $(tail -1 "$T/fetch.$k")"
		continue
	else
		dir=$OUT/$k/matrix
		rm -rf "$dir"
		mkdir -p "$dir"
		"$HERE/boot.sh" -t 900 -o "$dir" "$k" env ST_RECORD="$REC" "$HERE/checks.sh" "$k" "$dir/rows"
		rc=$?
		[ "$rc" = 0 ] || fail "kernels.$k.boot" "boot.sh exited $rc; log: $dir/console.log: $(grep -a 'init:\|Kernel panic\|BUG' "$dir/console.log" | head -2)"
		cp "$dir/rows" "$rows" 2>/dev/null
	fi
	secs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }')
	echo "kernels.$k: ${secs} s (boot and checks)"
	echo "| $k | $secs |" >>"$T/times"
	cat "$rows" >>"$T/table"
done

{
	echo "| kernel | preset | loads | events | event types recorded | st-record said |"
	echo "|---|---|---|---|---|---|"
	cat "$T/table" 2>/dev/null
	echo
	echo "| kernel | wall time, s (boot and checks) |"
	echo "|---|---|"
	cat "$T/times"
} >"$OUT/matrix.md"
echo "kernels: table in $OUT/matrix.md"
