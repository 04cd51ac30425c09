#!/bin/sh
# The guest tier in one boot: each script in turn, stopping at the first
# failure. Device removal (in scenarios.sh) takes rxe0 away and back;
# iwarp.sh runs the scenarios again on soft-iWARP; registered-rw.sh
# reloads the RDMA stack, so it goes last. The guest
# parameter smbd.tier=a.sh,b.sh names other scripts of tests/vm/ instead.
# On the debug kernel kmemleak scans after each. Each script's seconds
# (with the scan) follow its output, and its gtest cases' (the slowest).
set -e
for t in ${SMBD_TIER:-ioctl.sh install.sh responder.sh unload.sh \
	module-params.sh rdma-kill.sh \
	net-fuzz.sh ioctl-fuzz.sh scenarios.sh iwarp.sh registered-rw.sh}; do
	echo "== tests/vm/$t"
	start=$(date +%s)
	times=$(mktemp -d)
	GTEST_OUTPUT=json:$times/ sh "tests/vm/$t"
	sh tools/vm/kmemleak.sh "$t"
	echo "== tests/vm/$t: $(($(date +%s) - start)) s"
	sh tools/vm/gtest-slowest.sh "$times" | sed 's/^/   /'
	rm -rf "$times"
done
