#!/bin/sh
# RDMA device removal under an open connection, then rxe0 re-added.
set -e
exec "$SMBD_BUILD/tests/guest_scenarios" --gtest_brief=1 \
	--gtest_filter='DeviceRemoval.*'
