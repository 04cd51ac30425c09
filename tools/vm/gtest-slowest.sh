#!/bin/sh
# gtest-slowest.sh <dir> [n]: from the JSON reports gtest wrote into <dir>
# (GTEST_OUTPUT=json:<dir>/), one line with the number of tests, their
# seconds, and the n (8) slowest: where a guest script's time went.
set -eu
dir=$1
n=${2:-8}
ls "$dir"/*.json >/dev/null 2>&1 || exit 0
# a test case is the object whose "classname" follows its "name" and "time"
cat "$dir"/*.json | awk -F'"' '
	$2 == "name" { name = $4 }
	$2 == "time" { time = $4; sub(/s$/, "", time) }
	$2 == "classname" { t = $4 "." name; gsub(/\\\//, "/", t); print time, t }' |
	sort -rn | awk -v n="$n" '
	{ total += $1; count++ }
	count <= n { slow = slow (slow ? ", " : "") $2 " " $1 " s" }
	END { if (count) printf "%d gtest cases, %.1f s; slowest: %s\n", count, total, slow }'
