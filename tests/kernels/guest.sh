#!/bin/bash
# The second stage of a kernel matrix guest (tests/kernels/boot.sh), on the
# host's userland: mounts what the tools need, runs $st_results/cmd with its
# output in $st_results/out and its status in $st_results/rc, and powers off.
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t tracefs tracefs /sys/kernel/tracing
mount -t debugfs debugfs /sys/kernel/debug
mount -t bpf bpf /sys/fs/bpf
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mkdir -p /dev/shm /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 results "$st_results"
echo "guest: $(uname -r) up in $(cut -d' ' -f1 /proc/uptime) s"
bash "$st_results/cmd" >"$st_results/out" 2>&1
echo $? >"$st_results/rc"
echo "guest: done in $(cut -d' ' -f1 /proc/uptime) s"
umount "$st_results"
sync
echo o >/proc/sysrq-trigger
sleep 10
