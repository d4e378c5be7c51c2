#!/usr/bin/env bash
# The layers above the block layer: fio psync O_DIRECT reads of a file on
# ext4 give one pread64 enter/exit, one iomap_dio_rw_begin/complete and one
# read request per I/O (dio preset); fio io_uring reads give one submit and
# one completion per I/O, matched by request identity (uring preset).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
rec_require_bpf record_layers

IOS=100
st_tmpdir T
st_loopdev L 64
DEV=$(rec_devno "$L")
rec_ext4 record_layers "$L" "$T/mnt"
# lay the file out first, so the recorded run only reads
fio --name=lay --filename="$T/mnt/f" --size=8M --rw=write --bs=1M --output=/dev/null ||
	{ fail record_layers "fio layout failed"; exit 1; }

check record_layers_dio_run st-record -o "$T/d.sttrace" -e dio -d "$L" -- \
	fio --name=dio --filename="$T/mnt/f" --size=8M --rw=randread --bs=4k --direct=1 \
	--ioengine=psync --number_ios=$IOS --output=/dev/null
enter=$(rec_rows "$T/d.sttrace" sys_enter_pread64 count | grep -cx 4096)
exits=$(rec_rows "$T/d.sttrace" sys_exit_pread64 ret | grep -cx 4096)
begin=$(rec_rows "$T/d.sttrace" iomap_dio_rw_begin dev count | grep -cx "$DEV 4096")
done_=$(rec_rows "$T/d.sttrace" iomap_dio_complete dev ret | grep -cx "$DEV 4096")
reqs=$(rec_issued "$T/d.sttrace" dev bytes opf | grep -cx "$DEV 4096 0x100")
if [ "$enter $exits $begin $done_ $reqs" = "$IOS $IOS $IOS $IOS $IOS" ]; then
	pass record_layers_dio_chain
else
	fail record_layers_dio_chain "pread64 $enter/$exits, iomap $begin/$done_, read requests $reqs; want $IOS each"
fi

# the file fio opened is named in the metadata (openat seen while recording)
if st-format info "$T/d.sttrace" | grep -qE "^ *fd\.[0-9]+\.[0-9]+ = $T/mnt/f\$"; then
	pass record_layers_fd_names
else
	fail record_layers_fd_names "no fd.PID.FD = $T/mnt/f in the metadata"
fi

check record_layers_uring_run st-record -o "$T/u.sttrace" -e uring -- \
	fio --name=ur --filename="$L" --size=32M --rw=randread --bs=4k --direct=1 \
	--ioengine=io_uring --iodepth=8 --number_ios=$IOS --output=/dev/null
# IORING_OP_READ is 22; completions carry the bytes read
rec_rows "$T/u.sttrace" io_uring_submit_req req opcode | awk '$2 == 22 { print $1 }' | sort >"$T/sub"
rec_rows "$T/u.sttrace" io_uring_complete req res | awk '$2 == 4096 { print $1 }' | sort >"$T/com"
if [ "$(wc -l <"$T/sub")" -eq $IOS ] && cmp -s "$T/sub" "$T/com"; then
	pass record_layers_uring_pairs
else
	fail record_layers_uring_pairs "$(wc -l <"$T/sub") read submissions, $(wc -l <"$T/com") completions of 4096 bytes, identities match: $(cmp -s "$T/sub" "$T/com" && echo yes || echo no)"
fi
