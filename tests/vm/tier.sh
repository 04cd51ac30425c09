#!/bin/sh
# The guest tier in one boot: each script in turn, stopping at the first
# failure. Device removal (in scenarios.sh) takes rxe0 away and back;
# registered-rw.sh reloads the RDMA stack, so it goes last.
set -e
for t in ioctl.sh install.sh responder.sh unload.sh rdma-kill.sh scenarios.sh \
	registered-rw.sh; do
	echo "== tests/vm/$t"
	sh "tests/vm/$t"
done
