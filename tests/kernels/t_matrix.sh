#!/usr/bin/env bash
# The kernel matrix: tests/kernels/checks.sh with the static st-record
# (build/st-record-static) on each of Debian's kernels, 5.10, 6.1 and 6.12
# (fetched by fetch.sh, booted by boot.sh under qemu), and natively on this
# machine's kernel (host). KERNELS (default "5.10 6.1 6.12 host") picks
# them: `make test-kernels K=6.1`; ST_RECORD another recorder to run.
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
REC=${ST_RECORD:-$ST_BUILD/st-record-static}
[ -x "$REC" ] || { fail kernels.static "$REC not built (make static: needs the static libraries)"; exit 0; }

OUT=$ST_BUILD/kernels
mkdir -p "$OUT"
st_tmpdir T
: >"$T/times"

# kernel K: the checks on K; their lines in $T/out.K, the table's rows in
# $T/rows.K, the wall time in $T/secs.K.
kernel() {
	local k=$1 dir rc start=$EPOCHREALTIME
	: >"$T/rows.$k"
	if [ "$k" = host ]; then
		ST_RECORD=$REC "$HERE/checks.sh" host "$T/rows.$k"
	elif ! command -v qemu-system-x86_64 >/dev/null; then
		skip "kernels.$k" "qemu-system-x86_64 not installed (apt-get install qemu-system-x86)"
		return
	elif ! "$HERE/fetch.sh" "$k" >"$T/fetch.$k" 2>&1; then
		skip "kernels.$k" "qemu has no kernel $k to boot: fetch.sh: $(tail -1 "$T/fetch.$k")"
		return
	else
		dir=$OUT/$k/matrix
		rm -rf "$dir"
		mkdir -p "$dir"
		"$HERE/boot.sh" -t 1200 -o "$dir" "$k" env ST_RECORD="$REC" "$HERE/checks.sh" "$k" "$dir/rows" 2>&1
		rc=$?
		# A guest kernel that died before running the checks (emulation on a
		# loaded machine: "IO-APIC + timer doesn't work" once in some 20 boots
		# before no_timer_check) boots once more; its log stays as console.log.1.
		if [ "$rc" = 125 ] && [ ! -e "$dir/out" ]; then
			mv "$dir/console.log" "$dir/console.log.1"
			echo "kernels.$k: the guest did not start ($(grep -a -m1 'Kernel panic' "$dir/console.log.1")): booting again"
			"$HERE/boot.sh" -t 1200 -o "$dir" "$k" env ST_RECORD="$REC" "$HERE/checks.sh" "$k" "$dir/rows" 2>&1
			rc=$?
		fi
		[ "$rc" = 0 ] || fail "kernels.$k.boot" "boot.sh exited $rc; log: $dir/console.log: $(grep -a 'init:\|Kernel panic\|BUG' "$dir/console.log" | head -2)"
		cp "$dir/rows" "$T/rows.$k" 2>/dev/null
	fi
	awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f\n", b - a }' >"$T/secs.$k"
}

# All at once: each guest is one thread of qemu's (single-threaded TCG),
# so two of them keep both cores of a 2-core machine busy.
kernels=${KERNELS:-5.10 6.1 6.12 host}
start=$EPOCHREALTIME
for k in $kernels; do
	kernel "$k" >"$T/out.$k" 2>&1 &
done
wait
total=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }')
for k in $kernels; do
	cat "$T/out.$k"
	[ -s "$T/secs.$k" ] || continue
	echo "kernels.$k: $(cat "$T/secs.$k") s (boot and checks)"
	echo "| $k | $(cat "$T/secs.$k") |" >>"$T/times"
	cat "$T/rows.$k" >>"$T/table"
done
echo "kernels: $total s for $kernels"

{
	echo "Events recorded by each preset (- : did not load):"
	echo
	awk -F' [|] ' '{ k = $1; sub(/^[|] /, "", k); p = $2
			if (!(k in seen)) { seen[k] = 1; ks[++nk] = k }
			if (!(p in pseen)) { pseen[p] = 1; ps[++np] = p }
			cell[k, p] = $3 == "yes" ? $4 : "-" }
		END { if (!nk) exit
			h = "| kernel |"; r = "|---|"
			for (j = 1; j <= np; j++) { h = h " " ps[j] " |"; r = r "---|" }
			print h; print r
			for (i = 1; i <= nk; i++) { l = "| " ks[i] " |"
				for (j = 1; j <= np; j++) l = l " " cell[ks[i], ps[j]] " |"
				print l } }' "$T/table"
	echo
	echo "| kernel | preset | loads | events | event types recorded | st-record said |"
	echo "|---|---|---|---|---|---|"
	cat "$T/table" 2>/dev/null
	echo
	echo "| kernel | wall time, s (boot and checks) |"
	echo "|---|---|"
	cat "$T/times"
	echo "| all, at once | $total |"
} >"$OUT/matrix.md"
echo "kernels: table in $OUT/matrix.md"
