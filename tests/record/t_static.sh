#!/usr/bin/env bash
# The static st-record (`make static`, built by default where the static
# libraries are installed): ldd finds no dynamic section, and it records as
# the dynamic one does: dd's 16 direct reads of a loop device are 16 issued
# requests in its trace.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
rec_require_bpf record_static
REC=$ST_BUILD/st-record-static
[ -x "$REC" ] || { fail record_static "$REC not built (make static: needs the static libraries)"; exit 0; }

if ldd "$REC" 2>&1 | grep -q 'not a dynamic executable'; then
	pass record_static_ldd
else
	fail record_static_ldd "ldd $REC: $(ldd "$REC" 2>&1 | head -1)"
fi
check record_static_version test "$("$REC" --version)" = "$(st-record --version)"

st_tmpdir T
st_loopdev L 16
check record_static_records "$REC" -o "$T/s.sttrace" -e block -d "$L" -- \
	dd if="$L" of=/dev/null bs=4k count=16 iflag=direct status=none 2>"$T/log"
n=$(rec_issued "$T/s.sttrace" ts | wc -l)
if [ "$n" = 16 ]; then pass record_static_requests; else
	fail record_static_requests "16 reads issued, $n in the trace"; fi
