#!/usr/bin/env bash
# Packaging: `make install` into a DESTDIR (programs, man pages, libsttrace
# with its headers and sttrace.pc), man pages that render without warnings,
# bash completion of subcommands and options, `make check T=NAME`, and
# st-record built without kernel BTF.
. "$(dirname "$0")/../lib.sh"
st_tmpdir T
root=$(cd "$(dirname "$0")/../.." && pwd)

# --- man pages: mandoc's linter and groff's warnings find nothing
for page in record/st-record.8 analyze/st-analyze/st-analyze.1 format/st-format/st-format.1 replay/st-replay.1; do
	name=$(basename "$page")
	check "man_${name}_mandoc_lint" test -z "$(mandoc -T lint -W warning "$root/$page" 2>&1)"
	check "man_${name}_groff_clean" test -z "$(groff -ww -man -z "$root/$page" 2>&1)"
	# an option left alone as a sentence of its own ("... FILE.  --save-summary OUT.")
	stray=$(mandoc -T ascii "$root/$page" | col -b | grep -E '(^ *|\.  )-?-[a-z0-9-]+( [A-Z:]+)?\.$')
	[ -z "$stray" ] && pass "man_${name}_no_stray_option" || fail "man_${name}_no_stray_option" "$stray"
done
# Every long option a program's --help names is in its man page.
man_covers() {
	local page=$1 missing
	shift
	missing=$("$@" --help | grep -o -- '--[a-z][a-z0-9-]*' | sort -u | while read -r opt; do
		grep -q -- "$(printf '%s' "$opt" | sed 's/-/\\\\-/g')" "$root/$page" || echo "$opt"
	done)
	[ -z "$missing" ] || { echo "not in $page: $missing" >&2; return 1; }
}
check man_st-analyze_options man_covers analyze/st-analyze/st-analyze.1 st-analyze
check man_st-analyze_diff_options man_covers analyze/st-analyze/st-analyze.1 st-analyze diff
if [ -x "$ST_BUILD/st-record" ]; then
	check man_st-record_options man_covers record/st-record.8 st-record
fi
if [ -x "$ST_BUILD/st-replay" ]; then
	check man_st-replay_options man_covers replay/st-replay.1 st-replay
fi
for sub in $(st-format --help | awk '/^Subcommands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }'); do
	check "man_st-format_${sub}" grep -q "^\.BR $sub " "$root/format/st-format/st-format.1"
done

# --- bash completion, as bash would call it
complete_words() {
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _sttrace; printf "%s\n" "${COMPREPLY[@]}"' \
		_ "$root/scripts/bash-completion" "$@"
}
check completion_subcommands test "$(complete_words st-format "" | sort | tr '\n' ' ')" = \
	"$(st-format --help | awk '/^Subcommands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }' | sort | tr '\n' ' ')"
check completion_subcommand_options grep -qx -- --chunks <(complete_words st-format info --c)
check completion_analyze_options grep -qx -- --quantile <(complete_words st-analyze --qu)
check completion_diff_options grep -qx -- --threshold <(complete_words st-analyze diff --thr)
check completion_by_values test "$(complete_words st-analyze --by c | tr '\n' ' ')" = "comm "
if [ -x "$ST_BUILD/st-replay" ]; then
	check completion_replay_options grep -qx -- --allow-write <(complete_words st-replay --allow)
fi
check completion_timing_values test "$(complete_words st-replay --timing a | tr '\n' ' ')" = "afap "
touch "$T/run.sttrace" "$T/notes.txt"
check completion_trace_files test "$(cd "$T" && complete_words st-analyze r)" = run.sttrace

# --- make install into a DESTDIR, and a program built against the installed library
make -C "$root" --no-print-directory -s install DESTDIR="$T/root" PREFIX=/usr >"$T/install.log" 2>&1 ||
	fail install "make install failed: $(tail -3 "$T/install.log")"
for f in bin/st-format bin/st-analyze share/man/man1/st-format.1 share/man/man1/st-analyze.1 \
	lib/libsttrace.a include/sttrace/sttrace.h include/sttrace/sttrace_events.h \
	lib/pkgconfig/sttrace.pc share/bash-completion/completions/st-analyze; do
	check "install_$(basename "$f")" test -s "$T/root/usr/$f"
done
if [ -x "$ST_BUILD/st-record" ]; then
	check install_st-record test -x "$T/root/usr/sbin/st-record"
	check install_st-record.8 test -s "$T/root/usr/share/man/man8/st-record.8"
fi
if [ -x "$ST_BUILD/st-replay" ]; then
	for f in bin/st-replay share/man/man1/st-replay.1 share/bash-completion/completions/st-replay; do
		check "install_$(basename "$f")" test -s "$T/root/usr/$f"
	done
fi
check install_man_renders grep -qi "stage latencies" <(mandoc -T utf8 "$T/root/usr/share/man/man1/st-analyze.1")
cat >"$T/user.c" <<'C'
#include <stdio.h>
#include <sttrace.h>
int main(int argc, char **argv)
{
	struct st_reader *r;

	if (argc < 2 || st_reader_open(&r, argv[1], 0))
		return 1;
	printf("%llu\n", (unsigned long long)st_reader_info(r)->events);
	st_reader_close(r);
	return 0;
}
C
sed -i "s#^prefix=.*#prefix=$T/root/usr#" "$T/root/usr/lib/pkgconfig/sttrace.pc"
# shellcheck disable=SC2046
if cc -o "$T/user" "$T/user.c" $(PKG_CONFIG_PATH="$T/root/usr/lib/pkgconfig" pkg-config --cflags --libs sttrace) 2>"$T/cc.err"; then
	check install_library_usable test "$("$T/user" "$root/spec/golden/synth-60.sttrace")" = \
		"$(st-format info --json "$root/spec/golden/synth-60.sttrace" | jq .events)"
else
	fail install_library_usable "cannot build against the installed library: $(head -2 "$T/cc.err")"
fi

# --- make check T=NAME runs only the matching tests
make -C "$root" --no-print-directory -s check T=test_format_writer >"$T/check.log" 2>&1
check check_T_runs_one test "$(grep -c '^== ' "$T/check.log")" -eq 2
check check_T_named grep -q "== .*test_format_writer" "$T/check.log"

# --- st-record builds without kernel BTF (a build server): the committed header
if command -v clang >/dev/null && command -v bpftool >/dev/null; then
	make -C "$root" --no-print-directory -s B="$T/nobtf" VMLINUX_BTF=/nonexistent \
		"$T/nobtf/st-record" >"$T/nobtf.log" 2>&1
	check build_without_btf test -x "$T/nobtf/st-record"
	check build_without_btf_same_probes cmp -s <(strings "$T/nobtf/st-record" | grep -c '^tp_btf/\|^tracepoint/') \
		<(strings "$ST_BUILD/st-record" | grep -c '^tp_btf/\|^tracepoint/')
else
	skip build_without_btf "clang or bpftool not installed"
fi
