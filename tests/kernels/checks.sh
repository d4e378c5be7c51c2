#!/usr/bin/env bash
# checks.sh K TABLE: the kernel matrix's checks on the running kernel (a
# guest of tests/kernels/boot.sh, or this machine's own), its check names
# prefixed kernels.K; appends a markdown row per preset to TABLE. The
# recorder is $ST_RECORD (default: st-record on PATH).
#
# - kernels.K.preset.P: `st-record -e P` loads and records, for each preset
#   `st-record --help` names, a fio run on ext4 over a loop device: one job
#   of io_uring direct reads, one of buffered writes with an fsync every 4.
#   TABLE's row: how many events of which types, and the probes st-record
#   skipped.
# - kernels.K.counts.loop, .nvme: `-e block -d DEV` of dd and fio direct I/O
#   on the raw device (merges off): st-analyze's I/Os and the sectors of its
#   --sizes, per read and write, equal the requests and sectors the kernel
#   counted in /sys/block/DEV/stat over the recording. The NVMe disk is the
#   guest's emulated one; outside qemu there is none (SKIP).
# - kernels.K.fsync: in the fsync preset's recording, fsyncs of the written
#   file show the jnl stage (the journal commit they waited for), and the
#   device's cache flush is recorded: as the flush stage of an fsync or of
#   jbd2's commit write (its PREFLUSH/FUA sequence), or as a flush I/O of its
#   own where kblockd issued the flush request. Which of these a run shows
#   varies from run to run on 6.1 and 6.12 (tests/kernels/README.md).
# - kernels.K.uring: in the uring preset's recording, st-analyze's reads by
#   fio (all of them io_uring's) equal fio's read total_ios (its JSON).
# - kernels.K.why: `st-analyze --why` of the all preset's recording shows
#   the causes.
# - kernels.K.cgroup_v1: `--cgroup` naming a cgroup v1 blkio group (the
#   machine's, or one mounted for the check) loads, and of two dd runs under
#   `-- CMD` records the reads of the one in the group alone: as many as dd
#   read. SKIP where v2 holds the io controller (no v1 blkio to mount).
# Exits 0; the FAIL lines say what failed.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../record/common.sh"

K=$1
TABLE=$2
tag=kernels.$K
REC=${ST_RECORD:-st-record}

why=$(bpf_unavailable)
[ -z "$why" ] || { fail "$tag" "$why"; exit 0; }
for tool in fio jq mkfs.ext4; do
	command -v $tool >/dev/null || { fail "$tag" "$tool not installed"; exit 0; }
done

st_tmpdir T
st_loopdev L 256
rec_ext4 "$tag.mkfs" "$L" "$T/mnt" -E lazy_itable_init=0,lazy_journal_init=0
fio --name=layout --directory="$T/mnt" --filename=ur --size=8M --create_only=1 >/dev/null 2>&1 ||
	{ fail "$tag.layout" "fio could not lay out its file"; exit 0; }
sync

# the presets' fio run; its JSON in the file its argument names
cat >"$T/workload" <<EOF
exec fio --directory="$T/mnt" --size=8M --output-format=json --output="\$1" \\
	--name=ur --filename=ur --ioengine=io_uring --direct=1 --rw=randread --bs=4k \\
	--iodepth=4 --number_ios=64 \\
	--name=fs --filename=fs --ioengine=psync --rw=write --bs=4k --fsync=4 --number_ios=32
EOF

# ios_csv TRACE: st-analyze's per-I/O list of TRACE (CSV), every I/O.
ios_csv() {
	st-analyze --csv --quantile 0.0001 --top 100000 "$1" 2>/dev/null
}

# column NAME...: the named columns of the CSV on stdin, space separated,
# quotes removed, an empty field as "." (rec_csv_columns leaves it empty).
column() {
	awk -F, -v cols="$*" '
		NR == 1 { n = split(cols, c, " "); for (i = 1; i <= NF; i++) idx[$i] = i; next }
		{ s = ""; for (j = 1; j <= n; j++) { v = $(idx[c[j]]); gsub(/"/, "", v)
			s = s (j > 1 ? " " : "") (v == "" ? "." : v) } print s }'
}

# libbpf_says PRESET: what libbpf and the verifier said when the preset did
# not load (st-record -v): libbpf's first failure, and the verifier log's
# last line before its summary.
libbpf_says() {
	"$REC" -v -o "$T/v.sttrace" -e "$1" -- true >"$T/v.log" 2>&1
	rm -f "$T/v.sttrace"
	awk '/^libbpf: .*(failed|not found|[Ee]rror|invalid|unknown)/ && !first { first = $0 }
		/BEGIN PROG LOAD LOG/ { inlog = 1; next }
		/END PROG LOAD LOG/ { inlog = 0 }
		inlog && !/^processed / && NF { last = $0 }
		END { print first (last != "" ? "; verifier: " last : "") }' "$T/v.log"
}

command -v "$REC" >/dev/null || { fail "$tag" "no recorder $REC"; exit 0; }
presets=$("$REC" --help 2>&1 | awk '/presets:/ { on = 1; sub(/.*presets:/, "") }
	on { for (i = 1; i <= NF; i++) { if ($i ~ /^\(/) exit; print $i } }')
[ -n "$presets" ] || { fail "$tag.presets" "st-record --help names no preset"; exit 0; }

for p in $presets; do
	trace=$T/$p.sttrace
	if ! "$REC" -o "$trace" -e "$p" -- sh "$T/workload" "$T/$p.json" \
		>"$T/$p.log" 2>&1; then
		err=$(grep -v ': recording\|not on this kernel' "$T/$p.log" | head -1)
		why=$(libbpf_says "$p")
		why=${why:-${err:-st-record failed}}
		fail "$tag.preset.$p" "$why"
		echo "| $(uname -r) | $p | no | | | ${why//|/\\|} |" >>"$TABLE"
		rm -f "$trace"
		continue
	fi
	st-format cat --csv "$trace" 2>/dev/null | column type | sort | uniq -c |
		awk '{ n += $1; t = t (t ? ", " : "") $2 " " $1 } END { print n + 0; print t }' >"$T/$p.types"
	n=$(sed -n 1p "$T/$p.types")
	skipped=$(sed -n 's/.*tracepoint \(.*\) not on this kernel.*/\1/p' "$T/$p.log" | paste -sd' ')
	if [ "$n" -gt 0 ]; then pass "$tag.preset.$p"; else fail "$tag.preset.$p" "no event recorded"; fi
	echo "| $(uname -r) | $p | yes | $n | $(sed -n 2p "$T/$p.types") | ${skipped:+skipped: $skipped} |" >>"$TABLE"
done

# counts NAME DEV: the dd and fio direct I/O on DEV recorded with -e block
# -d DEV; st-analyze's I/Os and sectors per op against DEV's diskstats.
counts() {
	local name=$1 dev=$2 d trace=$T/counts.$1.sttrace s0 s1 want got
	d=$(basename "$dev")
	st_nomerges "$dev"
	s0=$(cat "/sys/block/$d/stat")
	"$REC" -o "$trace" -e block -d "$dev" -- sh -c "
		dd if=/dev/zero of=$dev bs=64k count=32 oflag=direct 2>/dev/null &&
		dd if=$dev of=/dev/null bs=16k count=64 iflag=direct 2>/dev/null &&
		fio --name=counts --filename=$dev --direct=1 --ioengine=psync --rw=randrw \
			--bssplit=4k/50:16k/30:64k/20 --number_ios=200 --size=32M --randrepeat=1 \
			--output=/dev/null" >"$T/counts.$name.log" 2>&1 ||
		{ fail "$tag.counts.$name" "$(grep -v ': recording' "$T/counts.$name.log" | head -1)"; return; }
	s1=$(cat "/sys/block/$d/stat")
	# read: requests, sectors; write: requests, sectors (fields 1, 3, 5, 7)
	want=$(echo "$s0 $s1" | awk '{ printf "read %d %d write %d %d", $18 - $1, $20 - $3, $22 - $5, $24 - $7 }')
	got=$(st-analyze --sizes --csv "$trace" 2>/dev/null | awk -F, -v d="$d" '
		$2 == "size" { split($1, g, " "); if (g[1] != d) next
			n[g[2]] += $5; s[g[2]] += $5 * $3 / 512 }
		END { printf "read %d %d write %d %d", n["read"], s["read"], n["write"], s["write"] }')
	if [ "$want" = "$got" ]; then pass "$tag.counts.$name"; else
		fail "$tag.counts.$name" "diskstats: $want; st-analyze: $got"; fi
}
# a device of its own: nothing else does I/O on it (not the ext4 on $L)
st_loopdev C 64
counts loop "$C"
if [ -b /dev/nvme0n1 ]; then
	counts nvme /dev/nvme0n1
else
	skip "$tag.counts.nvme" "no emulated NVMe disk outside qemu"
fi

if [ -s "$T/fsync.sttrace" ]; then
	ios_csv "$T/fsync.sttrace" >"$T/fsync.csv"
	column op file jnl_us flush_us dev <"$T/fsync.csv" |
		awk -v f="$T/mnt/fs" -v d="${L#/dev/}" '$1 == "fsync" && $2 == f { n++; j += $3 != "." }
			$5 == d && ($1 == "flush" || $4 != ".") { fl++ }
			END { print n + 0, j + 0, fl + 0 }' >"$T/fsync.n"
	read -r n jnl flush <"$T/fsync.n"
	if [ "$jnl" -gt 0 ] && [ "$flush" -gt 0 ]; then pass "$tag.fsync"; else
		fail "$tag.fsync" "of $n fsyncs, $jnl with jnl; flushes (stages and I/Os): $flush"; fi
else
	fail "$tag.fsync" "the fsync preset recorded nothing"
fi

if [ -s "$T/uring.sttrace" ]; then
	want=$(jq '.jobs[] | select(.jobname == "ur") | .read.total_ios' "$T/uring.json")
	# the preset records no openat: fio's reads, all through io_uring
	got=$(ios_csv "$T/uring.sttrace" | column op comm |
		awk '$1 == "read" && $2 == "fio" { n++ } END { print n + 0 }')
	if [ "$want" = "$got" ]; then pass "$tag.uring"; else
		fail "$tag.uring" "fio read $want, st-analyze $got"; fi
else
	fail "$tag.uring" "the uring preset recorded nothing"
fi

if [ -s "$T/all.sttrace" ]; then
	if st-analyze --why "$T/all.sttrace" >"$T/why.out" 2>&1 && grep -q '^  cause ' "$T/why.out"; then
		pass "$tag.why"
	else
		fail "$tag.why" "st-analyze --why: $(grep -v '^ ' "$T/why.out" | tail -1)"
	fi
else
	fail "$tag.why" "the all preset recorded nothing"
fi
# v1_blkio VAR: a cgroup v1 blkio hierarchy, mounted for the check if the
# machine has none; fails where cgroup v2 holds the io controller.
v1_blkio() {
	local m
	m=$(findmnt -n -t cgroup -o TARGET,OPTIONS | awk '$2 ~ /(^|,)blkio(,|$)/ { print $1; exit }')
	if [ -z "$m" ]; then
		m=$T/blkio
		mkdir -p "$m" && mount -t cgroup -o blkio none "$m" 2>/dev/null || return 1
		at_exit "umount '$m'"
	fi
	printf -v "$1" '%s' "$m"
}
if v1_blkio B; then
	G=$B/sttrace-kcheck.$$
	mkdir "$G" && at_exit "rmdir '$G'"
	"$REC" -o "$T/v1.sttrace" -e block -d "$C" --cgroup "$G" -- sh -c "
		dd if=$C of=/dev/null bs=4k count=20 skip=4096 iflag=direct 2>/dev/null &&
		echo \$\$ >$G/cgroup.procs &&
		dd if=$C of=/dev/null bs=4k count=50 iflag=direct 2>/dev/null" >"$T/v1.log" 2>&1
	got=$(st-analyze --csv "$T/v1.sttrace" 2>/dev/null | awk -F, -v g="$(basename "$C") read" \
		'$1 == g && $7 == "total" { print $8 }')
	if [ "${got:-0}" = 50 ]; then pass "$tag.cgroup_v1"; else
		fail "$tag.cgroup_v1" "dd in the group read 50 blocks, st-analyze: ${got:-none} ($(grep -v -m1 ": recording" "$T/v1.log"))"; fi
else
	skip "$tag.cgroup_v1" "no cgroup v1 blkio: cgroup v2 holds the io controller"
fi
exit 0
