#!/usr/bin/env bash
# codec.sh - issue 25's chunk codec decision, measured: LZ4 frames against
# zstd at the recorder's settings on the chunks of real recordings
# (bench-codec, codec.c), and st-record's own CPU per event while it made
# them, so the table says what LZ4 would make of st-record's CPU per event.
# The issue's bar for a second codec: st-record's CPU per event drops, at
# <= 12 bytes per event, and zstd-recompressed files stay <= 8.5.
#
# The recordings: st-record -e block and -e all of fio 4k random reads,
# io_uring, iodepth 32, O_DIRECT (overhead.sh's workload) on a loop device
# over a file in /dev/shm, SECONDS each; or the FILEs given.
#
# Usage: scripts/bench/codec.sh [FILE.sttrace...]   (as root, after `make`, to record)
#   BENCH_SECONDS=4  BENCH_ROUNDS=5 (bench-codec's passes)
set -eu
cd "$(dirname "$0")/../.."
BUILD=${ST_BUILD:-$PWD/build}
SECS=${BENCH_SECONDS:-4}
ROUNDS=${BENCH_ROUNDS:-5}

die() { echo "codec.sh: $*" >&2; exit 1; }
[ -x "$BUILD/bench/bench-codec" ] || die "$BUILD/bench/bench-codec not built (make; liblz4-dev: make deps)"
DIR=$(mktemp -d /dev/shm/sttrace-codec.XXXXXX)
trap 'rm -rf "$DIR"' EXIT

# record PRESET: a recording of the workload, and st-record's summary line beside it
record() {
	(
		. tests/lib.sh
		st_loopdev dev 256
		"$BUILD/st-record" -o "$DIR/$1.sttrace" -e "$1" -d "$dev" -- \
			fio --name=bench --filename="$dev" --direct=1 --ioengine=io_uring --iodepth=32 \
			--rw=randread --bs=4k --time_based --runtime="$SECS" --randrepeat=0 \
			--output=/dev/null >/dev/null 2>"$DIR/$1.log"
	)
	grep "events," "$DIR/$1.log" | tail -1 >"$DIR/$1.summary"
}

FILES=("$@")
if [ ${#FILES[@]} -eq 0 ]; then
	[ "$(id -u)" -eq 0 ] || die "run as root to record (or give recordings)"
	[ -x "$BUILD/st-record" ] || die "$BUILD/st-record not built (make)"
	command -v fio >/dev/null || die "fio not installed (make deps)"
	for preset in block all; do
		record "$preset"
		FILES+=("$DIR/$preset.sttrace")
	done
fi
for f in "${FILES[@]}"; do
	echo "== $(basename "$f")"
	"$BUILD/bench/bench-codec" -r "$ROUNDS" "$f" | tee "$DIR/codec.out"
	summary=$DIR/$(basename "$f" .sttrace).summary
	[ -s "$summary" ] || continue
	# "... N events, ... S s CPU, ..."; the codec rows "NAME ... X ns/event  Y bytes/event ..."
	awk -v line="$(cat "$summary")" '
		BEGIN { n = split(line, w, " ")
			for (i = 2; i <= n; i++) {
				if (w[i] == "events,") events = w[i - 1]
				if (w[i] == "CPU," && w[i - 1] == "s") cpu = w[i - 2]
			}
			rec = cpu / events * 1e9 }
		/ns\/event/ { name = ""
			for (i = 1; i <= NF; i++) if ($(i + 1) == "ns/event") { ns = $i; bytes = $(i + 2); break } else name = name (i > 1 ? " " : "") $i
			if (name ~ /recorder/) zstd = ns; else if (name ~ /lz4/) { lz4[name] = ns; lz4b[name] = bytes } }
		END {
			printf "st-record: %d events, %.2f s CPU: %.0f ns/event with zstd -1 (%.0f of them compressing)\n",
				events, cpu, rec, zstd
			for (c in lz4)
				printf "  with %s: %.0f ns/event (%+.0f), %.2f bytes/event (bar <= 12)\n",
					c, rec - zstd + lz4[c], lz4[c] - zstd, lz4b[c]
		}' "$DIR/codec.out"
done
