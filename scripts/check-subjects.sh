#!/bin/sh
# check-subjects.sh [BASE [HEAD]]: every commit in BASE..HEAD has a subject
# under 72 characters (issue 43: the reasons and the figures go in the body).
# BASE defaults to 60dbda2, the last commit before the rule was enforced.
# Prints one line per offending commit; exits 1 if there is any, 0 if none.
base=${1:-60dbda2}
head=${2:-HEAD}
git log --format='%h %s' "$base..$head" | awk '
	{ subject = $0; sub(/^[^ ]+ /, "", subject) }
	length(subject) >= 72 { printf "%s: subject of %d characters: %s\n", $1, length(subject), subject; bad = 1 }
	END { exit bad }'
