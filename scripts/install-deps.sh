#!/bin/sh
# Installs the Debian packages sttrace needs to build, test and benchmark.
# Does nothing when they are all present; needs root otherwise.
set -eu
PKGS="make gcc pkg-config libelf-dev zlib1g-dev libzstd-dev libxxhash-dev liblz4-dev
libjson-c-dev liburing-dev libbpf-dev clang llvm bpftool gnuplot-nox fio zstd
e2fsprogs xfsprogs btrfs-progs util-linux bsdutils blktrace bpftrace jq mandoc groff-base libssl-dev python3
chromium libmicrohttpd-dev prometheus python3-prometheus-client curl qemu-system-x86 busybox-static xz-utils kmod"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages:$missing (run as root: apt-get install -y$missing)" >&2
	exit 1
fi
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq $missing >/dev/null
