#!/usr/bin/env bash
# A tracepoint the kernel lacks: a preset that includes it records without it
# and says so; naming it is an error. This kernel has every tracepoint of the
# presets, so the test hides the xfs ones from st-record: in a mount namespace
# of its own, an empty directory covers tracefs's events/xfs (where a kernel
# without xfs has nothing either).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
rec_require_bpf record_missing_tracepoint

st_tmpdir T
XFS_EVENTS=/sys/kernel/tracing/events/xfs

# without_xfs CMD ARGS...: runs CMD where the xfs tracepoints do not exist
without_xfs() {
	rec_in_namespace "[ ! -d $XFS_EVENTS ] || mount -t tmpfs -o ro none $XFS_EVENTS" "$@"
}

without_xfs st-record -o "$T/p.sttrace" -e fsync -- \
	dd if=/dev/zero of="$T/data" bs=4k count=8 conv=fsync status=none 2>"$T/plog"
rc=$?
if [ $rc -eq 0 ] && grep -qx "st-record: tracepoint xfs/xfs_file_fsync not on this kernel, skipped" "$T/plog"; then
	pass record_missing_in_preset_skipped
else
	fail record_missing_in_preset_skipped "exit $rc, want 0 and a line that says so: $(tr '\n' ' ' <"$T/plog")"
fi
# the file says what the kernel could not give, and st-format info shows it
want="tracepoint xfs/xfs_file_fsync not on this kernel"
if st-format info "$T/p.sttrace" >"$T/pinfo" && grep -qxF "  missing.xfs_file_fsync = $want" "$T/pinfo" &&
   grep -qxF "not recorded  xfs_file_fsync: $want" "$T/pinfo"; then
	pass record_missing_in_metadata
else
	fail record_missing_in_metadata "no missing.xfs_file_fsync and its line in st-format info: $(grep -i "missing\|not rec" "$T/pinfo" | tr '\n' ' ')"
fi
# dd's one fsync is there: the rest of the preset was recorded
n=$(rec_count "$T/p.sttrace" sys_enter_fsync)
if [ "$n" = 1 ]; then pass record_missing_rest_recorded; else fail record_missing_rest_recorded "$n fsync calls, want 1"; fi

without_xfs st-record -o "$T/n.sttrace" -e sys_enter_fsync,xfs_file_fsync -t 1 2>"$T/nlog"
rc=$?
if [ $rc -eq 1 ] && grep -q "tracepoint xfs/xfs_file_fsync does not exist on this kernel" "$T/nlog"; then
	pass record_missing_by_name_fails
else
	fail record_missing_by_name_fails "exit $rc, want 1 and a line naming it: $(tr '\n' ' ' <"$T/nlog")"
fi

# the same with the tracepoints present: neither message
if [ ! -d "$XFS_EVENTS" ]; then
	skip record_present_not_skipped "this kernel has no xfs tracepoints"
	exit 0
fi
st-record -o "$T/a.sttrace" -e fsync -t 100ms 2>"$T/alog"
rc=$?
if [ $rc -eq 0 ] && ! grep -q "xfs_file_fsync" "$T/alog" && ! st-format info "$T/a.sttrace" | grep -q "missing\."; then
	pass record_present_not_skipped
else
	fail record_present_not_skipped "exit $rc: $(tr '\n' ' ' <"$T/alog")"
fi
