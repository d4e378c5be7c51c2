#!/usr/bin/env bash
# What st-replay refuses, each with one line naming it: a mounted device, a
# disk with a mounted partition, a device with a holder (device mapper), a target smaller than the trace
# reaches (unless --wrap, which then replays every I/O inside it); reads are
# allowed anyway; a cut trace replays its intact chunks and says so.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"
. "$(dirname "$0")/common.sh"
rp_require replay_safety
rec_require_bpf replay_safety

st_tmpdir T
st_loopdev A 64
st_loopdev B 64
st_loopdev SMALL 16

check replay_safety_record st-record -o "$T/run.sttrace" -e block -d "$A" -- \
	fio --name=rw --filename="$A" --direct=1 --ioengine=psync --rw=randrw --bs=4k \
	--number_ios=400 --size=60M --randrepeat=1 --output="$T/fio.out"
check replay_safety_read_record st-record -o "$T/reads.sttrace" -e block -d "$A" -- \
	fio --name=r --filename="$A" --direct=1 --ioengine=psync --rw=randread --bs=4k \
	--number_ios=200 --size=60M --randrepeat=1 --output="$T/fio2.out"

# refused NAME PATTERN ARGS...: st-replay ARGS exits 1 with one line matching
# PATTERN; ARGS may start with rec_in_namespace SETUP st-replay instead.
refused() {
	local name=$1 pattern=$2 rc
	shift 2
	[ "$1" = rec_in_namespace ] || set -- st-replay "$@"
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
	if [ "$rc" -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q -- "$pattern" "$T/err"; then
		pass "$name"
	else
		fail "$name" "exit $rc, stderr: $(head -3 "$T/err" | tr '\n' ' ')"
	fi
}

# A mounted device: never written, but read.
rec_ext4 replay_safety_mounted "$B" "$T/mnt"
refused replay_safety_mounted "mounted on $T/mnt" "$T/run.sttrace" --target "$B" --allow-write --timing afap
check replay_safety_mounted_reads st-replay "$T/reads.sttrace" --target "$B" --timing afap
umount "$T/mnt"

# A disk whose partition is mounted: partition 1 (MBR, sectors 2048..34815)
# added by partx, since this kernel reads no partition table of a loop device.
PIMG=$(mktemp /dev/shm/sttrace-replay.XXXXXX)
at_exit "rm -f '$PIMG'"
truncate -s 64M "$PIMG"
printf '\x83\x00\x00\x00\x00\x08\x00\x00\x00\x80\x00\x00' | dd of="$PIMG" bs=1 seek=450 conv=notrunc status=none
printf '\x55\xaa' | dd of="$PIMG" bs=1 seek=510 conv=notrunc status=none
if P=$(losetup -P --find --show "$PIMG"); then
	at_exit "losetup -d '$P'"
	at_exit "partx -d '$P'"
	partx -a "$P" 2>/dev/null
	if [ -b "${P}p1" ] && mkfs.ext4 -q "${P}p1" && mkdir -p "$T/pmnt" && mount "${P}p1" "$T/pmnt"; then
		at_exit "umount '$T/pmnt'"
		refused replay_safety_mounted_partition "mounted on $T/pmnt (partition" "$T/run.sttrace" --target "$P" --allow-write --timing afap
		umount "$T/pmnt"
	else
		fail replay_safety_mounted_partition "could not make and mount ${P}p1"
	fi
else
	fail replay_safety_mounted_partition "losetup -P failed"
fi

# A device with a holder: a device-mapper linear target on top of B. This
# kernel has no device mapper (nor md); there the holder dm-7 is shown in a
# private mount namespace by a directory bound over B's sysfs holders list,
# which is all the kernel itself exposes of a holder.
DM=sttrace-replay-$$
if dmsetup create "$DM" --table "0 $(blockdev --getsz "$B") linear $B 0" 2>/dev/null; then
	at_exit "dmsetup remove '$DM'"
	refused replay_safety_holder "held by dm-" "$T/run.sttrace" --target "$B" --allow-write --timing afap
	dmsetup remove "$DM"
else
	mkdir -p "$T/holders/dm-7"
	refused replay_safety_holder "held by dm-7" rec_in_namespace \
		"mount --bind '$T/holders' /sys/dev/block/$(rec_devno "$B")/holders" \
		st-replay "$T/run.sttrace" --target "$B" --allow-write --timing afap
fi

# Too small: the trace reaches about 60 MiB, SMALL has 16.
refused replay_safety_too_small "smaller than the" "$T/run.sttrace" --target "$SMALL" --allow-write --timing afap
check replay_safety_wrap_run st-record -o "$T/wrap.sttrace" -e block -d "$SMALL" -- \
	st-replay "$T/run.sttrace" --target "$SMALL" --allow-write --timing afap --wrap --report "$T/wrap.json"
inside=$(rp_requests "$T/wrap.sttrace" "$(rec_devno "$SMALL")" | awk '$2 + $3 <= 16 * 1048576' | wc -l)
got=$(rp_json "$T/wrap.json" '[.issued, .completed, .failed] | join(" ")')
if [ "$inside" -eq 400 ] && [ "$got" = "400 400 0" ]; then
	pass replay_safety_wrap
else
	fail replay_safety_wrap "$inside of 400 requests inside 16 MiB; issued completed failed: $got"
fi

# Bad input files.
head -c 100000 /dev/urandom >"$T/garbage"
refused replay_safety_garbage "garbage: " "$T/garbage" --target "$B"
refused replay_safety_missing "No such file" "$T/none.sttrace" --target "$B"
refused replay_safety_bad_target "No such file" "$T/reads.sttrace" --target "$T/none"

# A trace cut in the middle: its intact chunks replay, the report says so.
st-format synth -o "$T/synth.sttrace" --ios 40000 --seed 3
size=$(stat -c %s "$T/synth.sttrace")
head -c $((size / 2)) "$T/synth.sttrace" >"$T/cut.sttrace"
st-replay "$T/synth.sttrace" --level block --target "$A" --allow-write --wrap --timing afap \
	--report "$T/full.json" >"$T/full.out" 2>&1
st-replay "$T/cut.sttrace" --level block --target "$A" --allow-write --wrap --timing afap \
	--report "$T/cut.json" >"$T/cut.out" 2>"$T/cut.err"
rc=$?
full=$(rp_json "$T/full.json" .completed)
cut=$(rp_json "$T/cut.json" '[.completed, .input_damaged] | join(" ")')
if [ "$rc" -eq 0 ] && grep -q "intact chunks" "$T/cut.err" && [ "${cut% *}" -gt 0 ] &&
	[ "${cut% *}" -lt "$full" ] && [ "${cut#* }" = true ]; then
	pass replay_safety_cut_input
else
	fail replay_safety_cut_input "exit $rc, completed (damaged) $cut of $full: $(cat "$T/cut.err")"
fi
