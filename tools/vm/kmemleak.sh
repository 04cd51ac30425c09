#!/bin/sh
# kmemleak.sh <label>: on a kernel with kmemleak (the debug kernel), scan
# for unreferenced objects and print "KMEMLEAK <label> clean seconds=<s>"
# (what the two scans took, for check-debug's figures), or
# the reports and fail. Two scans: an object must stay unreferenced across
# both (and be older than kmemleak's five seconds) to count.
k=/sys/kernel/debug/kmemleak
[ -w $k ] || exit 0
start=$(date +%s)
echo scan >$k && echo scan >$k || { echo "KMEMLEAK $1 scan failed"; exit 1; }
n=$(grep -c '^unreferenced object' $k)
took=$(($(date +%s) - start))
if [ "$n" = 0 ]; then
	echo "KMEMLEAK $1 clean seconds=$took"
	exit 0
fi
echo "KMEMLEAK $1 $n unreferenced objects (seconds=$took):"
head -n 60 $k
exit 1
