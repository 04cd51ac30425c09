#!/bin/sh
# The ioctl-level harness against the module loaded in the guest.
set -e
exec "$SMBD_BUILD/tests/guest_tests" --gtest_brief=1
