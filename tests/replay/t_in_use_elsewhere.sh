#!/usr/bin/env bash
# st-replay never writes into a file system mounted where this mount table
# does not show it, deciding from what the kernel says of the device (an
# exclusive open refused) and of the file (the loop devices' backing files):
#   namespace  an ext4 on loop A mounted only in another mount namespace
#              (unshare -m, held by a sleeping process there): --target A
#              itself, and a loop device B over A
#   btrfs      a btrfs on loop C (mountinfo lists it as 0:NN, not C's
#              numbers): --target C itself, and a loop device D over C
#   overlay    an ext4 image in an overlay's upper directory, loop-mounted
#              through the overlay's merged directory: --target the image
#              under upper/ (and, as before, under merged/); loop-mounted
#              from upper/: --target the image under merged/; the overlay
#              mounted only in another mount namespace, loop-mounted here
#              through /proc/PID/root: --target the image under upper/
# The trace: 16 writes of 64 KiB over the first MiB (blktrace records
# imported). Each passes when st-replay --allow-write exits 1 with one
# line saying why, the image's sha256 is the same before and after, and
# the file system checks clean after it is unmounted (e2fsck -fn, btrfs
# check).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"
. "$(dirname "$0")/common.sh"
rp_require replay_in_use_elsewhere
if [ "$(id -u)" -ne 0 ]; then
	skip replay_in_use_elsewhere "needs root for loop devices and mounts"
	exit 0
fi

st_tmpdir T
# 16 writes of 64 KiB over the first MiB, where ext4 and btrfs keep their
# superblocks: one that got through would show in the check.
rp_blktrace "$T/run.sttrace" W 65536 $(seq 0 128 1920)
SHM=$(mktemp -d /dev/shm/sttrace-replayelse.XXXXXX)
at_exit "rm -rf '$SHM'"

# refused NAME PATTERN IMAGE ARGS...: st-replay ARGS exits 1 with one line
# matching PATTERN, and IMAGE's sha256 is unchanged.
refused() {
	local name=$1 pattern=$2 image=$3 rc before after
	shift 3
	sync
	before=$(sha256sum <"$image")
	timeout 60 st-replay "$T/run.sttrace" --timing afap --allow-write "$@" \
		>"$T/out" 2>"$T/err"
	rc=$?
	sync
	after=$(sha256sum <"$image")
	if [ "$after" != "$before" ]; then
		fail "$name" "exit $rc, $image changed: $(head -2 "$T/err" | tr '\n' ' ')"
	elif [ "$rc" -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q -- "$pattern" "$T/err"; then
		pass "$name"
	else
		fail "$name" "exit $rc, stderr: $(head -3 "$T/err" | tr '\n' ' ')"
	fi
}

# clean NAME CMD...: the file system checks clean after (CMD is the checker).
clean() {
	local name=$1
	shift
	if "$@" >"$T/fsck" 2>&1; then
		pass "$name"
	else
		fail "$name" "$* says: $(grep -m2 -i -e bad -e corrupt -e error -e invalid "$T/fsck" | tr '\n' ' ')"
	fi
}

# No lazy init: nothing is written after the mount but what st-replay would.
mkext4() { mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$1"; }

# elsewhere VAR MNT MOUNT...: MOUNT (a mount command onto the directory MNT)
# run in a new mount namespace that a sleeping process, its pid in VAR,
# keeps until exit; fails unless MNT is mounted there and not here. The
# new namespace starts with a copy of every mount of the machine; all but
# MNT and those above it are let go at once (umount -l there), or the file
# systems other programs unmount meanwhile would stay mounted in the copy
# (seen: t_in_use, run beside it, could not mkfs its unmounted device).
elsewhere() {
	local _var=$1 _mnt=$2 _pid
	shift 2
	unshare -m --propagation private sh -c 'mnt=$1
		shift
		"$@" || exit 1
		awk "{ print \$5 }" /proc/self/mountinfo | sort -r | while read -r m; do
			case "$mnt/" in "$m"/*) continue ;; esac
			[ "$m" = / ] || umount -l "$m" 2>/dev/null
		done
		exec sleep 600' sh "$_mnt" "$@" &
	_pid=$!
	at_exit "kill $_pid; wait $_pid"
	printf -v "$_var" '%s' "$_pid"
	for _ in $(seq 50); do
		grep -q " $_mnt " "/proc/$_pid/mountinfo" 2>/dev/null && break
		sleep 0.1
	done
	grep -q " $_mnt " "/proc/$_pid/mountinfo" 2>/dev/null && ! grep -q " $_mnt " /proc/self/mountinfo
}

# namespace: A mounted only in a namespace that a sleeping process keeps.
st_loopdev A 64
IMGA=$(losetup -nO BACK-FILE "$A")
mkext4 "$A"
mkdir "$T/nsmnt"
if ! elsewhere HOLDER "$T/nsmnt" mount "$A" "$T/nsmnt"; then
	fail replay_in_use_elsewhere_namespace "could not mount $A in another mount namespace only"
else
	refused replay_in_use_elsewhere_namespace_direct "$A: mounted or held where" "$IMGA" --target "$A"
	rp_loop_on B "$A"
	refused replay_in_use_elsewhere_namespace "$B: a loop device over $A: mounted or held where this mount table does not show it" \
		"$IMGA" --target "$B"
fi
kill "$HOLDER"
wait "$HOLDER" 2>/dev/null
clean replay_in_use_elsewhere_namespace_fsck e2fsck -fn "$A"

# btrfs: at least 114 MiB.
if ! command -v mkfs.btrfs >/dev/null; then
	skip replay_in_use_elsewhere_btrfs "no mkfs.btrfs (btrfs-progs)"
elif ! grep -qw btrfs /proc/filesystems && ! modprobe btrfs 2>/dev/null; then
	skip replay_in_use_elsewhere_btrfs "no btrfs in this kernel"
else
	st_loopdev C 128
	IMGC=$(losetup -nO BACK-FILE "$C")
	mkdir "$T/btrfs"
	if mkfs.btrfs -q -f "$C" >/dev/null && mount "$C" "$T/btrfs"; then
		at_exit "umount '$T/btrfs'"
		refused replay_in_use_elsewhere_btrfs_direct "$C: mounted or held where" "$IMGC" --target "$C"
		rp_loop_on D "$C"
		refused replay_in_use_elsewhere_btrfs "$D: a loop device over $C: mounted or held where" "$IMGC" --target "$D"
		umount "$T/btrfs"
		clean replay_in_use_elsewhere_btrfs_check btrfs check --readonly "$C"
	else
		fail replay_in_use_elsewhere_btrfs "cannot make and mount a btrfs on $C"
	fi
fi

# overlay DIR: lower/, upper/ holding an ext4 image img.img, work/ and
# merged/ in DIR, and the mount command of the overlay on merged/.
overlay() {
	mkdir -p "$1/lower" "$1/upper" "$1/work" "$1/merged" && truncate -s 64M "$1/upper/img.img" &&
		mkext4 "$1/upper/img.img" || return 1
	OVERLAY=(mount -t overlay sttrace-ov -o "lowerdir=$1/lower,upperdir=$1/upper,workdir=$1/work" "$1/merged")
}

# overlay: the image in upper/, loop-mounted as merged/img.img.
O=$SHM/ov
mkdir "$T/ovmnt"
if overlay "$O" && "${OVERLAY[@]}"; then
	at_exit "umount '$O/merged'"
	rp_loop_on E "$O/merged/img.img"
	mount "$E" "$T/ovmnt" && at_exit "umount '$T/ovmnt'"
	refused replay_in_use_elsewhere_overlay "$O/upper/img.img: backs loop device $(basename "$E") (over $O/merged/img.img, this file through an overlay)" \
		"$O/upper/img.img" --target "$O/upper/img.img"
	refused replay_in_use_elsewhere_overlay_merged "$O/merged/img.img: backs loop device $(basename "$E")" \
		"$O/upper/img.img" --target "$O/merged/img.img"
	umount "$T/ovmnt"
	losetup -d "$E"
	clean replay_in_use_elsewhere_overlay_fsck e2fsck -fn "$O/upper/img.img"
	# The other way round: loop-mounted from upper/, written through merged/.
	rp_loop_on F "$O/upper/img.img"
	mount "$F" "$T/ovmnt"
	refused replay_in_use_elsewhere_overlay_reverse "$O/merged/img.img: an overlay's file whose layer file backs loop device $(basename "$F")" \
		"$O/upper/img.img" --target "$O/merged/img.img"
	umount "$T/ovmnt"
	clean replay_in_use_elsewhere_overlay_reverse_fsck e2fsck -fn "$O/upper/img.img"
else
	fail replay_in_use_elsewhere_overlay "cannot mount an overlay on $O/merged"
fi

# overlay_namespace: the overlay mounted only in another mount namespace, a
# loop device here over its merged/img.img (reached through /proc/PID/root),
# its ext4 mounted here: --target the image under upper/.
O=$SHM/ov2
mkdir "$T/ovmnt2"
if ! overlay "$O" || ! elsewhere OVHOLDER "$O/merged" "${OVERLAY[@]}"; then
	fail replay_in_use_elsewhere_overlay_namespace "could not mount an overlay in another mount namespace only"
else
	rp_loop_on G "/proc/$OVHOLDER/root$O/merged/img.img"
	mount "$G" "$T/ovmnt2" && at_exit "umount '$T/ovmnt2'"
	refused replay_in_use_elsewhere_overlay_namespace "$O/upper/img.img: backs loop device $(basename "$G") (over $O/merged/img.img, this file through an overlay)" \
		"$O/upper/img.img" --target "$O/upper/img.img"
	umount "$T/ovmnt2"
	clean replay_in_use_elsewhere_overlay_namespace_fsck e2fsck -fn "$O/upper/img.img"
fi
