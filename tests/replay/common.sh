# Shared by the st-replay tests: source it after ../lib.sh (and ../record/common.sh
# for rp_requests).

# rp_require NAME: one SKIP and exit when st-replay was not built (no liburing or json-c).
rp_require() {
	if [ ! -x "$ST_BUILD/st-replay" ]; then
		skip "$1" "st-replay not built (no liburing or json-c)"
		exit 0
	fi
}

# rp_requests FILE DEV: "R|W|F|D offset bytes" of every request issued on DEV
# (major:minor) in FILE, sorted: the multiset a replay must reproduce.
rp_requests() {
	rec_issued "$1" dev sector bytes opf nr_sector |
		awk "$AWK_HEX"' $1 == "'"$2"'" { op = hex($4) % 256
			if (op == 0) print "R", $2 * 512, $3
			else if (op == 1) print "W", $2 * 512, $3
			else if (op == 2) print "F", 0, 0
			else print "D", $2 * 512, $5 * 512 }' | sort
}

# rp_json FILE EXPR: a value of st-replay's --report JSON.
rp_json() {
	jq -r "$2" "$1"
}
