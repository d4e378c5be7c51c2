#!/usr/bin/env bash
# Damaged and foreign input never crashes or hangs st-analyze: byte flips
# anywhere in a trace and the reader's fuzz corpus end with exit 0 (what was
# intact is analyzed) or 1 (one line saying what is wrong), never a signal.
. "$(dirname "$0")/../lib.sh"

st_tmpdir dir
# The byte flips are random; the seed is printed so a failure can be re-run.
seed=${ST_SEED:-$((RANDOM * 32768 + RANDOM))}
RANDOM=$seed
echo "t_hostile: seed $seed (ST_SEED=$seed $0 repeats this run)"
st-format synth -o "$dir/a.sttrace" --ios 300 --seed 11 >/dev/null || { fail analyze.hostile "synth failed"; exit 1; }
size=$(stat -c %s "$dir/a.sttrace")
bad=""
for i in $(seq 1 30); do
	cp "$dir/a.sttrace" "$dir/f.sttrace"
	off=$(( (i * 7919 + RANDOM) % size ))
	printf "\\x$(printf %02x $(( (RANDOM % 255) + 1 )))" |
		dd of="$dir/f.sttrace" bs=1 seek="$off" conv=notrunc status=none
	timeout 20 st-analyze --quantile 90 "$dir/f.sttrace" >/dev/null 2>&1
	rc=$?
	[ $rc = 0 ] || [ $rc = 1 ] || bad="$bad offset $off: exit $rc;"
done
[ -z "$bad" ] && pass analyze.hostile.flips || fail analyze.hostile.flips "$bad"

bad=""
for f in "$(dirname "$0")"/../fuzz/corpus/*; do
	[ -f "$f" ] || continue
	timeout 20 st-analyze --interval 1ms "$f" >/dev/null 2>&1
	rc=$?
	[ $rc = 0 ] || [ $rc = 1 ] || bad="$bad $(basename "$f"): exit $rc;"
done
[ -z "$bad" ] && pass analyze.hostile.corpus || fail analyze.hostile.corpus "$bad"
