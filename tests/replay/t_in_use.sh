#!/usr/bin/env bash
# st-replay never writes where a mounted file system lives, however the
# target reaches it; each case has a real ext4 mounted on a loop device and
# passes when st-replay exits 1 with one line saying why, the device holds
# as many bytes 0x5a (what st-replay writes) as before, read with O_DIRECT
# (the loop device reads its image), and the file system checks clean
# (e2fsck -fn after unmounting):
#   symlink    file level, DIR/0-NAME a symbolic link to the mounted device
#   hardlink   file level, DIR/0-NAME a hard link to the image of a mounted loop
#   backing    --target the device a mounted loop device is over
#   shared     --target a second loop device over the image of a mounted one
#   image      --target the image file of a mounted loop device
#   unlinked   --target a hard link to the image of a mounted loop device whose
#              first name was removed (sysfs then gives "NAME (deleted)"), and
#              --target a second loop device over that hard link
#   on_top     --target a device on top of the mounted one (sysfs slaves)
# --force-in-use writes to a loop device's backing device all the same.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"
. "$(dirname "$0")/common.sh"
rp_require replay_in_use
if [ "$(id -u)" -ne 0 ]; then
	skip replay_in_use "needs root for loop devices and mounts"
	exit 0
fi

st_tmpdir T
# Block and file level writes: the synthetic trace reaches about 1 GiB into
# each device and file (--wrap folds it into the block targets).
st-format synth -o "$T/run.sttrace" --ios 400 --seed 5 >/dev/null
SHM=$(mktemp -d /dev/shm/sttrace-replaysafe.XXXXXX)
at_exit "rm -rf '$SHM'"

# pattern_bytes DEV: the bytes 0x5a on DEV, read past the page cache.
pattern_bytes() {
	dd if="$1" iflag=direct bs=1M status=none | tr -dc '\132' | wc -c
}

# refused NAME PATTERN DEV MNT ARGS...: with a new ext4 on DEV mounted on
# MNT, st-replay ARGS exits 1 with one line matching PATTERN, and the file
# system checks clean after.
refused() {
	local name=$1 pattern=$2 dev=$3 mnt=$4 rc before after
	shift 4
	# no lazy init: nothing is written after the mount but what st-replay would
	mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$dev" && mkdir -p "$mnt" && mount "$dev" "$mnt" ||
		{ fail "$name" "cannot make and mount an ext4 on $dev"; return; }
	sync
	before=$(pattern_bytes "$dev")
	timeout 60 st-replay "$T/run.sttrace" --timing afap --allow-write "$@" >"$T/out" 2>"$T/err"
	rc=$?
	after=$(pattern_bytes "$dev")
	umount "$mnt"
	if ! e2fsck -fn "$dev" >"$T/fsck" 2>&1; then
		fail "$name" "exit $rc, the file system on $dev is damaged: $(grep -m1 -i -e bad -e corrupt "$T/fsck")"
	elif [ "$after" -ne "$before" ]; then
		fail "$name" "exit $rc, bytes 0x5a on $dev: $before before, $after after"
	elif [ "$rc" -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q -- "$pattern" "$T/err"; then
		pass "$name"
	else
		fail "$name" "exit $rc, stderr: $(head -3 "$T/err" | tr '\n' ' ')"
	fi
}

st_loopdev A 64
at_exit "umount '$T/mnt'"
at_exit "umount '$T/mntc'"
IMG=$(losetup -nO BACK-FILE "$A")

mkdir "$T/dir"
ln -s "$A" "$T/dir/0-postgres.1.dat"
refused replay_in_use_symlink "0-postgres.1.dat: is a symbolic link; not followed" "$A" "$T/mnt" \
	--level file --target "$T/dir"
check replay_in_use_symlink_kept test -L "$T/dir/0-postgres.1.dat"

mkdir "$SHM/dir"
ln "$IMG" "$SHM/dir/0-postgres.1.dat"
refused replay_in_use_hardlink "0-postgres.1.dat: backs loop device $(basename "$A")" "$A" "$T/mnt" \
	--level file --target "$SHM/dir"

refused replay_in_use_image "$IMG: backs loop device $(basename "$A")" "$A" "$T/mnt" \
	--level block --target "$IMG" --wrap

rp_loop_on SHARED "$IMG"
refused replay_in_use_shared "$SHARED: a loop device over $IMG: backs loop device $(basename "$A")" \
	"$A" "$T/mnt" --level block --target "$SHARED" --wrap

# E's image reached only by a hard link made before its name was removed.
st_loopdev E 64
at_exit "umount '$T/mnte'"
IMGE=$(losetup -nO BACK-FILE "$E")
ln "$IMGE" "$SHM/kept.img"
rm "$IMGE"
refused replay_in_use_unlinked_image "$SHM/kept.img: backs loop device $(basename "$E")" "$E" "$T/mnte" \
	--level block --target "$SHM/kept.img" --wrap
rp_loop_on SHARED_KEPT "$SHM/kept.img"
refused replay_in_use_unlinked_shared "$SHARED_KEPT: a loop device over $SHM/kept.img: backs loop device $(basename "$E")" \
	"$E" "$T/mnte" --level block --target "$SHARED_KEPT" --wrap

# B under a loop device C that holds the mounted ext4.
st_loopdev B 64
rp_loop_on C "$B"
refused replay_in_use_backing "$B: backs loop device $(basename "$C")" "$C" "$T/mntc" \
	--level block --target "$B" --wrap

# Not mounted, C still reads and writes B: refused, and written with --force-in-use.
st-replay "$T/run.sttrace" --level block --target "$B" --wrap --allow-write --timing afap \
	>/dev/null 2>"$T/err"
check replay_in_use_unmounted_loop_refused grep -q "backs loop device $(basename "$C")" "$T/err"
st-replay "$T/run.sttrace" --level block --target "$B" --wrap --allow-write --timing afap \
	--force-in-use >/dev/null 2>"$T/err"
rc=$?
written=$(( $(blockdev --getsize64 "$B") - $(tr -d '\132' <"$B" | wc -c) ))
if [ "$rc" -eq 0 ] && [ "$written" -gt 0 ]; then
	pass replay_in_use_forced
else
	fail replay_in_use_forced "exit $rc, $written bytes 0x5a on $B: $(head -2 "$T/err")"
fi

# On top of a mounted device (a device mapper's or md's sysfs slaves): this
# kernel has neither, so the slave is shown in a private mount namespace by
# a directory bound over D's slaves list, as t_safety.sh shows a holder.
st_loopdev D 64
mkfs.ext4 -q -F "$A" && mount "$A" "$T/mnt"
mkdir -p "$T/slaves/$(basename "$A")"
rec_in_namespace "mount --bind '$T/slaves' /sys/dev/block/$(rec_devno "$D")/slaves" \
	st-replay "$T/run.sttrace" --level block --target "$D" --wrap --allow-write --timing afap \
	>/dev/null 2>"$T/err"
rc=$?
umount "$T/mnt"
if [ "$rc" -eq 1 ] && grep -q "$D: on top of $(basename "$A"), mounted on $T/mnt" "$T/err"; then
	pass replay_in_use_on_top
else
	fail replay_in_use_on_top "exit $rc: $(head -2 "$T/err")"
fi
