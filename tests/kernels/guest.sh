#!/bin/bash
# The second stage of a kernel matrix guest (tests/kernels/boot.sh), on the
# host's userland: mounts what the tools need, runs $st_results/cmd with its
# output in $st_results/out and its status in $st_results/rc, and powers off.
# Mounts with busybox: a static program starts in a fraction of the time
# util-linux's mount takes under emulation (6 of 10 s of a 5.10 boot).
m() {
	/bin/busybox mount "$@"
}
m -t proc proc /proc
m -t sysfs sysfs /sys
m -t tracefs tracefs /sys/kernel/tracing
m -t debugfs debugfs /sys/kernel/debug
m -t bpf bpf /sys/fs/bpf
m -t cgroup2 cgroup2 /sys/fs/cgroup
/bin/busybox mkdir -p /dev/shm /dev/pts
m -t tmpfs tmpfs /dev/shm
m -t devpts devpts /dev/pts
# /tmp stays the overlay's (writable, in its tmpfs): a tmpfs of its own would
# hide a checkout or build under the host's /tmp, CI's clone among them
m -t tmpfs tmpfs /run
m -t 9p -o trans=virtio,version=9p2000.L,msize=512000 results "$st_results"
read -r up _ </proc/uptime
echo "guest: $(</proc/sys/kernel/osrelease) up in $up s"
bash "$st_results/cmd" >"$st_results/out" 2>&1
echo $? >"$st_results/rc"
read -r up _ </proc/uptime
echo "guest: done in $up s"
/bin/busybox umount "$st_results"
/bin/busybox sync
echo o >/proc/sysrq-trigger
sleep 10
