#!/usr/bin/env bash
# What st-record needs from the machine, and what it shows on a terminal:
# without kernel BTF or BPF it stops with one line saying so (and no output
# file); without tracefs mounted it mounts it and records; on a terminal it
# prints a status line each second, and none into a file. BTF and tracefs are taken away in a mount
# namespace of the test's own and BPF by a seccomp filter (without-bpf), so
# the machine is left as it was.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
rec_require_bpf record_environment

st_tmpdir T

rec_in_namespace 'mount -t tmpfs -o ro none /sys/kernel/btf' \
	st-record -o "$T/b.sttrace" -e block -t 1 2>"$T/blog"
rc=$?
if [ $rc -eq 1 ] && [ "$(wc -l <"$T/blog")" -eq 1 ] && grep -q "no kernel BTF at /sys/kernel/btf/vmlinux" "$T/blog" &&
   [ ! -e "$T/b.sttrace" ]; then
	pass record_no_btf
else
	fail record_no_btf "exit $rc, want 1 and one line naming BTF: $(tr '\n' ' ' <"$T/blog")"
fi

# without the bpf system call, and with BPF forbidden (a seccomp filter says so)
for case in "ENOSYS no bpf system call" "EPERM the kernel refused a BPF map (Operation not permitted"; do
	errno=${case%% *}
	"$ST_BUILD/tests/record/without-bpf" "$errno" st-record -o "$T/e.sttrace" -e block -t 1 2>"$T/elog"
	rc=$?
	if [ $rc -eq 1 ] && [ "$(wc -l <"$T/elog")" -eq 1 ] && grep -qF "${case#* }" "$T/elog" && [ ! -e "$T/e.sttrace" ]; then
		pass "record_no_bpf_$errno"
	else
		fail "record_no_bpf_$errno" "exit $rc, want 1 and one line saying why: $(tr '\n' ' ' <"$T/elog")"
	fi
done

# fsync has classic tracepoints, whose ids libbpf reads from tracefs
# shellcheck disable=SC2016 # $1 belongs to the inner shell
rec_in_namespace 'while umount /sys/kernel/tracing 2>/dev/null; do :; done; [ ! -e /sys/kernel/tracing/events ]' \
	sh -c 'st-record -o "$1" -e fsync -- dd if=/dev/zero of="$2" bs=4k count=1 conv=fsync status=none
	       rc=$?; [ -d /sys/kernel/tracing/events ] && echo "tracefs mounted"; exit $rc' \
	sh "$T/t.sttrace" "$T/data" >"$T/tout" 2>"$T/tlog"
rc=$?
n=$(rec_count "$T/t.sttrace" sys_enter_fsync)
if [ $rc -eq 0 ] && grep -q "tracefs mounted" "$T/tout" && [ "$n" = 1 ]; then
	pass record_mounts_tracefs
else
	fail record_mounts_tracefs "exit $rc, $n fsync calls (want 0, 1): $(cat "$T/tout" "$T/tlog" | tr '\n' ' ')"
fi

# on a terminal (script gives st-record one): a status line each second
script -qec "st-record -o '$T/s.sttrace' -e block -t 3500ms" /dev/null >"$T/tty" 2>&1
n=$(tr '\r' '\n' <"$T/tty" | grep -c "events/s, .* MB written (.*x compressed), 0 lost")
if [ "$n" -ge 3 ]; then pass record_status_line; else fail record_status_line "$n status lines in 3.5 s, want 3"; fi
st-record -o "$T/f.sttrace" -e block -t 1500ms 2>"$T/flog"
if ! grep -q "events/s" "$T/flog"; then pass record_status_not_in_file; else fail record_status_not_in_file "status line in a file"; fi

# a start that fails at load (a ring buffer the kernel refuses: 4 GiB) leaves no file, exits 1
# and says why in one line of libbpf's, pointing at -v for the whole log
rm -f "$T/l.sttrace"
st-record -o "$T/l.sttrace" --ringbuf-size 4G -e block -t 1 2>"$T/llog"
rc=$?
if [ $rc -eq 1 ] && [ ! -e "$T/l.sttrace" ] &&
   grep -q "cannot load the BPF programs: .*map 'events'.* (st-record -v shows libbpf's whole log)" "$T/llog"; then
	pass record_failed_load_leaves_no_file
else
	fail record_failed_load_leaves_no_file "exit $rc, file $(ls "$T/l.sttrace" 2>&1): $(tr '\n' ' ' <"$T/llog")"
fi
