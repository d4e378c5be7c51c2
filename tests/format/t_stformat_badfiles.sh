#!/usr/bin/env bash
# st-format on files that are not traces, are empty, cut short or corrupted:
# a clear one-line error and a non-zero exit where the file is unusable,
# never a crash or a hang (every run is under a timeout).
. "$(dirname "$0")/../lib.sh"
st_tmpdir T

# run_sf ARGS...: st-format under a timeout; status in $rc, stderr in $T/err.
run_sf() {
	timeout 20 st-format "$@" >"$T/out" 2>"$T/err"
	rc=$?
}

# no_crash NAME: the last run neither crashed (signal) nor hung (timeout).
no_crash() {
	if [ "$rc" -ge 124 ]; then
		fail "$1" "exit $rc (crash or timeout): $(head -c 300 "$T/err")"
		return 1
	fi
}

# file_error NAME FILE ARGS...: exit 1 and one stderr line "st-format: FILE: ...".
file_error() {
	local name=$1 file=$2
	shift 2
	run_sf "$@"
	no_crash "$name" || return
	if [ "$rc" -ne 1 ]; then
		fail "$name" "exit $rc, expected 1 (st-format $*)"
	elif [ "$(wc -l <"$T/err")" -ne 1 ] || ! grep -q "^st-format: $file: ." "$T/err"; then
		fail "$name" "stderr is not one line naming $file: $(head -c 300 "$T/err")"
	else
		pass "$name"
	fi
}

# flip_bit FILE OFFSET BIT: invert one bit in place.
flip_bit() {
	local byte
	byte=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
	printf "\\$(printf %03o $((byte ^ (1 << $3))))" |
		dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

st-format synth -o "$T/good.st" --ios 400 --chunk-size 8192 --seed 3 >/dev/null ||
	fail synth "synth failed"
size=$(stat -c %s "$T/good.st")

# Files that hold no trace at all: every subcommand refuses them.
for _ in $(seq 200); do echo "this is not a trace, just text"; done >"$T/text"
: >"$T/empty"
mkdir "$T/dir"
head -c 32 "$T/good.st" >"$T/header-only"
awk 'BEGIN { srand(7); for (i = 0; i < 65536; i++) printf "%c", int(rand() * 256) }' >"$T/garbage"
for f in text empty dir header-only garbage; do
	file_error "info_$f" "$T/$f" info "$T/$f"
	file_error "verify_$f" "$T/$f" verify "$T/$f"
	file_error "cat_$f" "$T/$f" cat "$T/$f"
	file_error "slice_$f" "$T/$f" slice "$T/$f" -o "$T/slice.out"
	file_error "recover_$f" "$T/$f" recover "$T/$f" -o "$T/recover.out"
done
[ -e "$T/slice.out" ] || [ -e "$T/recover.out" ] &&
	fail no_output_from_bad_input "an output file was left behind" || pass no_output_from_bad_input

# A file cut inside a chunk: still readable up to the cut, but not intact.
head -c $((size * 2 / 3)) "$T/good.st" >"$T/cut"
file_error verify_cut "$T/cut" verify "$T/cut"
grep -q "chunk [0-9]* at offset [0-9]*" "$T/err" && pass verify_cut_names_chunk ||
	fail verify_cut_names_chunk "$(cat "$T/err")"
run_sf info "$T/cut"
if [ $rc -eq 0 ] && grep -q "^footer        missing" "$T/out" && grep -q "^lost tail" "$T/out"; then
	pass info_cut_reports_loss
else
	fail info_cut_reports_loss "exit $rc: $(head -c 400 "$T/out")"
fi
run_sf cat "$T/cut"
cut_lines=$(wc -l <"$T/out")
all_lines=$(st-format cat "$T/good.st" | wc -l)
if [ $rc -eq 0 ] && [ "$cut_lines" -gt 0 ] && [ "$cut_lines" -lt "$all_lines" ]; then
	pass cat_cut_prints_prefix
else
	fail cat_cut_prints_prefix "exit $rc, $cut_lines of $all_lines events"
fi

# Bit flips anywhere: verify rejects each one naming what is wrong; the
# other subcommands never crash or hang on them.
flips=0 undetected=0 crashes=0
for off in $(awk -v n="$size" 'BEGIN { srand(11); for (i = 0; i < 48; i++) print int(rand() * n); print 0; print 20; print n - 1; print n - 20 }'); do
	cp "$T/good.st" "$T/flip"
	flip_bit "$T/flip" "$off" $((off % 8))
	flips=$((flips + 1))
	run_sf verify "$T/flip"
	[ $rc -ge 124 ] && crashes=$((crashes + 1))
	if [ $rc -ne 1 ] || [ "$(wc -l <"$T/err")" -ne 1 ]; then
		undetected=$((undetected + 1))
		echo "flip at offset $off: verify exit $rc: $(cat "$T/err")"
	fi
	for sub in info cat; do
		run_sf $sub "$T/flip"
		[ $rc -ge 124 ] && crashes=$((crashes + 1)) && echo "$sub crashed on flip at $off: $(cat "$T/err")"
	done
	run_sf recover "$T/flip" -o "$T/flip.rec"
	[ $rc -ge 124 ] && crashes=$((crashes + 1)) && echo "recover crashed on flip at $off"
	if [ $rc -eq 0 ] && ! st-format verify -q "$T/flip.rec" 2>/dev/null; then
		crashes=$((crashes + 1))
		echo "recover of flip at $off wrote a file verify rejects"
	fi
	rm -f "$T/flip.rec"
done
[ $undetected -eq 0 ] && pass "verify_detects_${flips}_bit_flips" ||
	fail verify_detects_bit_flips "$undetected of $flips flips not reported"
[ $crashes -eq 0 ] && pass bit_flips_never_crash || fail bit_flips_never_crash "$crashes failures"
