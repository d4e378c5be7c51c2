#!/usr/bin/env bash
# The recorder does not trace its own I/O: with the output on the traced disk,
# no write request touches the output file's blocks, even when the kernel's
# flusher threads write them back while recording.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
rec_require_bpf record_self

st_tmpdir T
st_loopdev L 128
DEV=$(rec_devno "$L")
rec_ext4 record_self "$L" "$T/mnt"

rec_start "$T/mnt/self.sttrace" "$T/log" -e block -d "$L" --chunk-size 64K ||
	{ fail record_self_start "$(cat "$T/log")"; exit 1; }
# events to record (reads of the device itself), then writeback of everything
# written so far, the output file included, by the flusher threads
dd if="$L" of=/dev/null bs=4k count=20000 iflag=direct status=none
sync
written=$(stat -c %s "$T/mnt/self.sttrace")
sleep 0.3
check record_self_stop rec_stop

# the output file's blocks as 512-byte sector ranges [first, last]
filefrag -v -b512 "$T/mnt/self.sttrace" |
	awk '$1 ~ /^[0-9]+:$/ { gsub(/[.:]/, "", $4); gsub(/[.:]/, "", $5); print $4 + 0, $5 + 0 }' >"$T/extents"
overlap=$(rec_issued "$T/mnt/self.sttrace" dev sector nr_sector opf |
	awk "$AWK_HEX"' NR == FNR { lo[NR] = $1; hi[NR] = $2; n = NR; next }
		$1 == "'"$DEV"'" && hex($4) % 256 == 1 {
			for (i = 1; i <= n; i++) if ($2 <= hi[i] && $2 + $3 - 1 >= lo[i]) { c++; break } }
		END { print c + 0 }' "$T/extents" -)
if [ -s "$T/extents" ] && [ "$written" -gt 100000 ] && [ "$overlap" -eq 0 ]; then
	pass record_self_excluded
else
	fail record_self_excluded "$overlap write requests on the output file's blocks ($written bytes written, extents: $(tr '\n' ' ' <"$T/extents"))"
fi
