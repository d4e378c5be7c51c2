#!/usr/bin/env bash
# boot.sh [-t SECONDS] [-o DIR] K CMD [ARG...]: CMD run as root in a qemu
# guest booted on Debian's kernel K (5.10, 6.1 or 6.12, fetched by
# tests/kernels/fetch.sh); its output printed here, its exit status ours.
#
# The guest (software emulation: no /dev/kvm needed) boots a busybox
# initramfs made here, loads the kernel's own modules (fetch.sh's
# load.list), mounts this machine's / read-only over 9p under a tmpfs
# overlay and runs CMD there (tests/kernels/guest.sh) in the current
# directory, with this machine's programs and $ST_BUILD first on PATH; the
# package's config is /boot/config-$(uname -r), where libbpf reads it. DIR
# (default $ST_BUILD/kernels/K/run.N, a new N each boot) is shared with the
# guest read-write at the same path: CMD may leave files there; boot.sh
# leaves console.log (the kernel's and init's messages), out (CMD's output)
# and rc in it. An emulated NVMe disk of 256 MB (a file in /dev/shm,
# removed after) is the guest's /dev/nvme0n1.
# Exit status: CMD's; 124 when the guest ran past SECONDS (default 600);
# 125 when it did not run CMD (console.log says why).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ST_BUILD=${ST_BUILD:-$(cd "$HERE/../.." && pwd)/build}
CACHE=${ST_KERNEL_CACHE:-/var/cache/sttrace-kernels}
secs=600 dir=
while getopts t:o: opt; do
	case $opt in
	t) secs=$OPTARG ;;
	o) dir=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || { echo "usage: boot.sh [-t SECONDS] [-o DIR] K CMD [ARG...]" >&2; exit 2; }
k=$1
shift
kdir=$CACHE/$k
[ -s "$kdir/load.list" ] && [ -s "$kdir/vmlinux" ] || { echo "boot.sh: kernel $k not fetched ($kdir): run tests/kernels/fetch.sh $k" >&2; exit 125; }
command -v qemu-system-x86_64 >/dev/null || { echo "boot.sh: qemu-system-x86_64 not installed" >&2; exit 125; }
case $(ldd /bin/busybox 2>&1) in
*"not a dynamic executable"*) ;;
*) echo "boot.sh: /bin/busybox is not busybox-static" >&2; exit 125 ;;
esac

if [ -z "$dir" ]; then
	mkdir -p "$ST_BUILD/kernels/$k"
	dir=$(mktemp -d "$ST_BUILD/kernels/$k/run.XXXX")
fi
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
rm -f "$dir/rc" "$dir/out" "$dir/console.log"

# CMD, as the guest runs it: here's directory and PATH, its words quoted.
{
	printf 'cd %q || exit 125\n' "$PWD"
	printf 'export ST_BUILD=%q PATH=%q:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n' \
		"$ST_BUILD" "$ST_BUILD"
	printf 'exec'
	printf ' %q' "$@"
	printf '\n'
} >"$dir/cmd"

scratch=$(mktemp -d "${TMPDIR:-/tmp}/sttrace-boot.XXXXXX")
nvme=$(mktemp /dev/shm/sttrace-nvme.XXXXXX)
trap 'rm -rf "$scratch" "$nvme"' EXIT
truncate -s 256M "$nvme"

# The initramfs: busybox, the modules, their order, the config and /init.
root=$scratch/root
mkdir -p "$root/bin" "$root/ko" "$root/proc" "$root/sys" "$root/dev" "$root/lower" "$root/rw" "$root/newroot"
cp /bin/busybox "$root/bin/"
cp "$kdir"/ko/*.ko "$root/ko/"
cp "$kdir/load.list" "$root/"
cp "$kdir/config" "$root/config"
cp "$HERE/initramfs-init" "$root/init"
(cd "$root" && find . | /bin/busybox cpio -o -H newc 2>/dev/null) >"$scratch/initramfs.cpio"

start=$EPOCHREALTIME
set +e
timeout "$secs" qemu-system-x86_64 -accel tcg,thread=single -cpu max -m 2G -smp 2 \
	-nodefaults -display none -no-reboot -monitor none \
	-serial "file:$dir/console.log" \
	-kernel "$kdir/vmlinux" -initrd "$scratch/initramfs.cpio" \
	-append "console=ttyS0 panic=-1 loglevel=4 mitigations=off no_timer_check st_stage2=$HERE/guest.sh st_results=$dir" \
	-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap" \
	-virtfs "local,path=$dir,mount_tag=results,security_model=none" \
	-drive "file=$nvme,if=none,id=nv,format=raw,cache=unsafe" -device nvme,serial=sttrace,drive=nv \
	>"$dir/qemu.log" 2>&1
qrc=$?
set -e
awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f\n", b - a }' >"$dir/seconds"
[ -f "$dir/out" ] && cat "$dir/out"
if [ "$qrc" = 124 ]; then
	echo "boot.sh: kernel $k: guest stopped after ${secs}s; log: $dir/console.log" >&2
	exit 124
fi
if [ ! -s "$dir/rc" ]; then
	echo "boot.sh: kernel $k: guest did not run the command (qemu status $qrc): $(cat "$dir/qemu.log") $(tail -5 "$dir/console.log")" >&2
	echo "boot.sh: log: $dir/console.log" >&2
	exit 125
fi
exit "$(cat "$dir/rc")"
