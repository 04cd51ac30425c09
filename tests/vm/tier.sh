#!/bin/sh
# The guest tier in one boot: each script in turn, stopping at the first
# failure. Device removal goes last: it takes rxe0 away and back.
set -e
for t in ioctl.sh responder.sh unload.sh scenarios.sh; do
	echo "== tests/vm/$t"
	sh "tests/vm/$t"
done
