#!/usr/bin/env bash
# -d with a partition: it selects the partition's disk. Block events carry
# the disk's device and whole-disk sectors, so reads through either partition
# are recorded at the partition's start plus their offset, and another disk's
# reads are not recorded at all. The partitions are added with addpart
# (BLKPG): a kernel may have no partition table parser (this one has none).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
rec_require_bpf record_partition

st_tmpdir T
st_loopdev OTHER 16
IMG=$(mktemp /dev/shm/sttrace-part.XXXXXX)
at_exit "rm -f '$IMG'"
truncate -s 64M "$IMG"
P1_START=2048
P2_START=34816
DISK=$(losetup --find --show --partscan "$IMG") || { fail record_partition "losetup --partscan failed"; exit 1; }
at_exit "losetup -d '$DISK'"
if ! addpart "$DISK" 1 "$P1_START" 32768 || ! addpart "$DISK" 2 "$P2_START" 32768; then
	fail record_partition "addpart $DISK failed"
	exit 1
fi
for ((i = 0; i < 100; i++)); do [ -b "${DISK}p2" ] && break; sleep 0.05; done
if [ ! -b "${DISK}p2" ]; then
	fail record_partition "no ${DISK}p2 after addpart"
	exit 1
fi

if st-record -o "$T/x.sttrace" -d "${DISK}p9" -t 1 2>"$T/err"; then
	fail record_partition_unknown_refused "st-record accepted -d ${DISK}p9"
elif grep -q "${DISK}p9" "$T/err"; then
	pass record_partition_unknown_refused
else
	fail record_partition_unknown_refused "the error does not name ${DISK}p9: $(cat "$T/err")"
fi
rec_start "$T/p.sttrace" "$T/log" -e block -d "${DISK}p2" ||
	{ fail record_partition_start "$(cat "$T/log")"; exit 1; }
dd if="${DISK}p1" of=/dev/null bs=4k skip=100 count=5 iflag=direct status=none
dd if="${DISK}p2" of=/dev/null bs=4k skip=50 count=7 iflag=direct status=none
dd if="$OTHER" of=/dev/null bs=4k count=9 iflag=direct status=none
rec_stop

want=$( { for ((k = 0; k < 5; k++)); do echo $((P1_START + 800 + 8 * k)); done
	for ((k = 0; k < 7; k++)); do echo $((P2_START + 400 + 8 * k)); done; } | sort -n | paste -sd' ')
got=$(rec_issued "$T/p.sttrace" dev sector | awk -v d="$(rec_devno "$DISK")" '$1 == d { print $2 }' |
	sort -n | paste -sd' ')
if [ "$got" = "$want" ]; then
	pass record_partition_selects_disk
else
	fail record_partition_selects_disk "disk sectors read: '$got', want '$want'"
fi
other=$(rec_issued "$T/p.sttrace" dev | grep -cx "$(rec_devno "$OTHER")")
if [ "$other" = 0 ]; then
	pass record_partition_other_disk_excluded
else
	fail record_partition_other_disk_excluded "$other requests of $OTHER recorded"
fi
