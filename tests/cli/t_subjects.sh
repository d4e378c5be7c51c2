#!/usr/bin/env bash
# Commit subjects under 72 characters (scripts/check-subjects.sh), from the
# commit the rule starts at: the history passes, and a crafted repository
# with one long subject fails and names it.
. "$(dirname "$0")/../lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
checker=$root/scripts/check-subjects.sh
if ! git -C "$root" rev-parse --verify -q 60dbda2^{commit} >/dev/null; then
	skip subjects_history "no git history here (a tarball or a shallow clone)"
else
	out=$(cd "$root" && "$checker" 2>&1)
	rc=$?
	[ $rc -eq 0 ] && pass subjects_history || fail subjects_history "$(echo "$out" | head -3)"
fi

st_tmpdir T
git init -q "$T/repo"
commit() { git -C "$T/repo" -c user.name=t -c user.email=t@t commit -q --allow-empty -m "$1"; }
commit "base"
commit "short subject"
commit "$(printf 'x%.0s' $(seq 72))"
out=$(cd "$T/repo" && "$checker" HEAD~2 2>&1)
rc=$?
if [ $rc -eq 1 ] && [ "$(echo "$out" | wc -l)" -eq 1 ] && echo "$out" | grep -q "72 characters"; then
	pass subjects_long_fails
else
	fail subjects_long_fails "exit $rc: $out"
fi
out=$(cd "$T/repo" && "$checker" HEAD~2 HEAD~1 2>&1)
check subjects_short_passes test $? -eq 0 -a -z "$out"
