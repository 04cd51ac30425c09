#!/bin/sh
# The scenarios with a peer, both sides asserted (on soft-RoCE: iwarp.sh
# runs IwarpPorts on soft-iWARP). Device removal runs last
# and in a process of its own: it deletes and re-adds rxe0.
set -e
"$SMBD_BUILD/tests/guest_scenarios" --gtest_brief=1 \
	--gtest_filter='-DeviceRemoval.*:IwarpPorts.*'
sh tests/vm/device-removal.sh
