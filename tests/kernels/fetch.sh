#!/usr/bin/env bash
# fetch.sh [--update] [K...]: Debian's kernels for the kernel matrix
# (tests/kernels/boot.sh), K one of 5.10 (bullseye), 6.1 (bookworm),
# 6.12 (trixie); all three without K.
#
# Each kernel is the newest linux-image-*-amd64 its release's
# linux-image-amd64 depends on (the release and its security suite),
# downloaded with apt into a cache of its own (ST_KERNEL_CACHE, default
# /var/cache/sttrace-kernels): its own sources list, lists, archives and
# package cache per release, signed by debian-archive-keyring; the host's
# apt configuration is left as it was (only its proxy and acquire settings
# in apt.conf.d apply). Unpacked into $CACHE/K/:
#   vmlinuz, vmlinux (its ELF image, which qemu boots through the PVH entry
#   without the minutes of decompression under emulation), config (the
#   package's /boot/config-*), release (uname -r),
#   ko/*.ko (decompressed) the modules the guest loads, and load.list, the
#   order to insmod them in (each after the modules it depends on, from the
#   package's modules.dep; those built into the kernel are left out).
# A kernel already unpacked with these modules is not fetched again (nothing
# is downloaded; with other modules, unpacked again from the package kept in
# the cache); --update fetches the newest again.
set -euo pipefail

CACHE=${ST_KERNEL_CACHE:-/var/cache/sttrace-kernels}
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
# The modules the guest needs: virtio and 9p for the root, overlay for its
# writable layer, and for the checks loop, nvme, ext4 and xfs (whose
# tracepoints exist only once it is loaded); crc32c_generic: ext4 asks the
# crypto API for it, no module dependency names it.
MODULES="virtio_pci 9pnet_virtio 9p overlay loop nvme ext4 xfs crc32c_generic"

update=0
if [ "${1:-}" = --update ]; then
	update=1
	shift
fi
[ $# -gt 0 ] || set -- 5.10 6.1 6.12

release_of() {
	case $1 in
	5.10) echo bullseye ;;
	6.1) echo bookworm ;;
	6.12) echo trixie ;;
	*) echo "fetch.sh: unknown kernel '$1' (5.10, 6.1 or 6.12)" >&2; return 1 ;;
	esac
}

# apt_in REL ARGS...: apt-get or apt-cache (the first of ARGS) with REL's own
# sources, lists and archives under $CACHE/apt/REL.
apt_in() {
	local rel=$1 tool=$2 d=$CACHE/apt/$1
	shift 2
	"$tool" -o Dir::Etc::SourceList="$d/sources.list" -o Dir::Etc::SourceParts="$d/empty" \
		-o Dir::Etc::Preferences="$d/empty/none" -o Dir::Etc::PreferencesParts="$d/empty" \
		-o Dir::State::Lists="$d/lists" -o Dir::State::Status="$d/status" \
		-o Dir::Cache="$d/cache" -o Dir::Cache::Archives="$d/archives" \
		-o Dir::Cache::pkgcache="$d/cache/pkgcache.bin" -o Dir::Cache::srcpkgcache="$d/cache/srcpkgcache.bin" \
		-o APT::Architecture=amd64 -o APT::Architectures=amd64 -o Debug::NoLocking=1 -o APT::Sandbox::User=root "$@"
}

apt_setup() {
	local rel=$1 d=$CACHE/apt/$1
	mkdir -p "$d/lists/partial" "$d/cache" "$d/archives/partial" "$d/empty"
	: >"$d/status"
	cat >"$d/sources.list" <<-EOF
	deb [signed-by=$KEYRING] http://deb.debian.org/debian $rel main
	deb [signed-by=$KEYRING] http://deb.debian.org/debian-security $rel-security main
	EOF
	apt_in "$rel" apt-get update -qq
}

# ko_load_order DIR: the .ko paths (relative to the modules dir DIR) to load
# for $MODULES, each after what it depends on, from DIR/modules.dep.
ko_load_order() {
	awk -v want="$MODULES" '
		function base(p) { sub(/.*\//, "", p); sub(/\.ko(\.[a-z]+)?$/, "", p); gsub(/-/, "_", p); return p }
		function visit(m,   i, n, d) {
			if (m in done || !(m in path)) return
			done[m] = 1
			n = split(deps[m], d, " ")
			for (i = 1; i <= n; i++) visit(base(d[i]))
			print path[m]
		}
		{ p = $1; sub(/:$/, "", p); m = base(p); path[m] = p; $1 = ""; deps[m] = $0 }
		END { n = split(want, w, " "); for (i = 1; i <= n; i++) visit(w[i]) }' "$1/modules.dep"
}

# vmlinux_of VMLINUZ OUT: the kernel image inside a bzImage (as the kernel's
# scripts/extract-vmlinux finds it: the first xz, zstd or gzip stream that
# decompresses to an ELF file).
vmlinux_of() {
	local magic tool pos
	for magic in 'fd377a585a00:xz -dc --single-stream' '28b52ffd:zstd -qdc' '1f8b08:gzip -dc'; do
		tool=${magic#*:}
		magic=$(echo "${magic%%:*}" | sed 's/../\\x&/g')
		for pos in $(LC_ALL=C grep -obUaP "$magic" "$1" | cut -d: -f1); do
			tail -c +$((pos + 1)) "$1" | $tool 2>/dev/null >"$2" || true
			[ "$(head -c 4 "$2" | od -An -tx1 | tr -d ' ')" = 7f454c46 ] && return 0
		done
	done
	echo "fetch.sh: no kernel image found in $1" >&2
	return 1
}

fetch_one() {
	local k=$1 rel out tmp pkg deb mdir ver f
	rel=$(release_of "$k")
	out=$CACHE/$k
	if [ -s "$out/load.list" ] && [ -s "$out/vmlinux" ] && [ "$update" = 0 ] &&
		[ "$(cat "$out/modules" 2>/dev/null)" = "$MODULES" ]; then
		echo "fetch.sh: $k: $(cat "$out/release") (cached in $out)"
		return 0
	fi
	apt_setup "$rel"
	pkg=$(apt_in "$rel" apt-cache depends linux-image-amd64 |
		awk '$1 == "Depends:" && $2 ~ /^linux-image-.*-amd64$/ { print $2; exit }')
	[ -n "$pkg" ] || { echo "fetch.sh: $k: no linux-image-amd64 in $rel" >&2; return 1; }
	deb=$(ls -t "$CACHE/apt/$rel/archives/${pkg}_"*.deb 2>/dev/null | head -1)
	if [ -z "$deb" ] || [ "$update" = 1 ]; then
		(cd "$CACHE/apt/$rel/archives" && apt_in "$rel" apt-get download -qq "$pkg")
		deb=$(ls -t "$CACHE/apt/$rel/archives/${pkg}_"*.deb | head -1)
	fi
	tmp=$(mktemp -d "$CACHE/unpack.XXXXXX")
	trap 'rm -rf "$tmp"' RETURN
	dpkg-deb -x "$deb" "$tmp/x"
	# the package has no modules.dep (made by depmod at install): make it
	mdir=$(find "$tmp/x" -path '*/lib/modules/*' -name kernel -type d -printf '%h\n' | head -1)
	ver=$(basename "$mdir")
	[ -e "$tmp/x/lib/modules" ] || ln -s usr/lib "$tmp/x/lib"
	depmod -b "$tmp/x" "$ver"
	rm -rf "$out.new"
	mkdir -p "$out.new/ko"
	cp "$tmp/x/boot/vmlinuz-$ver" "$out.new/vmlinuz"
	vmlinux_of "$out.new/vmlinuz" "$out.new/vmlinux"
	cp "$tmp/x/boot/config-$ver" "$out.new/config"
	echo "$ver" >"$out.new/release"
	echo "$MODULES" >"$out.new/modules"
	echo "$pkg $(dpkg-deb -f "$deb" Version)" >"$out.new/package"
	ko_load_order "$mdir" | while read -r f; do
		case $f in
		*.ko.xz) xz -dc "$mdir/$f" >"$out.new/ko/$(basename "$f" .xz)" ;;
		*.ko.zst) zstd -qdc "$mdir/$f" >"$out.new/ko/$(basename "$f" .zst)" ;;
		*.ko) cp "$mdir/$f" "$out.new/ko/" ;;
		esac
		f=$(basename "$f")
		echo "${f%.ko*}.ko"
	done >"$out.new/load.list"
	rm -rf "$out"
	mv "$out.new" "$out"
	echo "fetch.sh: $k: $ver from $pkg ($(wc -l <"$out/load.list") modules) in $out"
}

for k in "$@"; do
	fetch_one "$k"
done
