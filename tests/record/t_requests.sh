#!/usr/bin/env bash
# fio O_DIRECT psync on a loop device: the trace holds exactly fio's requests
# (count, offset, size, direction, from its own iolog), each completed, none lost.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
rec_require_bpf record_requests

st_tmpdir T
st_loopdev L 64
DEV=$(rec_devno "$L")

check record_requests_run st-record -o "$T/r.sttrace" -e block -d "$L" -- \
	fio --name=rq --filename="$L" --direct=1 --ioengine=psync --rw=randrw \
	--bssplit=4k/50:16k/30:64k/20 --number_ios=300 --size=48M --randrepeat=1 \
	--write_iolog="$T/iolog" --output="$T/fio.out"

# fio's view: "R|W offset bytes" per I/O (iolog v3: ts file action offset len)
awk '$3 == "read" || $3 == "write" { print ($3 == "read" ? "R" : "W"), $4, $5 }' "$T/iolog" |
	sort >"$T/want"
# the trace's view: every request issued on the device
rec_issued "$T/r.sttrace" dev sector bytes opf |
	awk "$AWK_HEX"' $1 == "'"$DEV"'" { op = hex($4) % 256; print (op == 0 ? "R" : op == 1 ? "W" : "op" op), $2 * 512, $3 }' |
	sort >"$T/got"

n=$(wc -l <"$T/want")
if [ "$n" -eq 300 ] && cmp -s "$T/want" "$T/got"; then
	pass record_requests_match_iolog
else
	fail record_requests_match_iolog "fio logged $n I/Os, trace has $(wc -l <"$T/got"); diff: $(diff "$T/want" "$T/got" | head -5 | tr '\n' ' ')"
fi

issued=$(rec_issued "$T/r.sttrace" ts | wc -l)
completed=$(rec_completed "$T/r.sttrace" ts | wc -l)
queued=$(rec_count "$T/r.sttrace" block_bio_queue)
if [ "$issued" -eq 300 ] && [ "$completed" -eq 300 ] && [ "$queued" -eq 300 ]; then
	pass record_requests_lifecycle
else
	fail record_requests_lifecycle "queued $queued, issued $issued, completed $completed; want 300 each"
fi

rec_check_no_loss record_requests_no_loss "$T/r.sttrace"
check record_requests_verify st-format verify "$T/r.sttrace"
