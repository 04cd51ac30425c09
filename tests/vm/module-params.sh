#!/bin/sh
# The module's parameters are checked at load: each bad value refuses the
# load and says why in the kernel log; a valid other set loads and is what
# GET_INFO and sysfs report. Leaves the module loaded with its defaults.
set -eu
params=/sys/module/smbdirect/parameters
fail() { echo "module-params: $*" >&2; exit 1; }

rmmod smbdirect
for args in "ib_port=5445" "ib_port=0 iwarp_port=0" "iwarp_port=70000" \
	"ib_port=65536" "pool_buffers=0" "pool_buffers=1025" \
	"buffer_size=1000" "buffer_size=33554432"; do
	# shellcheck disable=SC2086 # one word per parameter
	if insmod "$SMBD_DRIVER" $args 2>/dev/null; then
		rmmod smbdirect
		fail "loaded with $args"
	fi
	dmesg | tail -n 1 | grep -q 'smbdirect: .*\(ib_port\|pool_buffers\|buffer_size\)' ||
		fail "no reason logged for $args: $(dmesg | tail -n 1)"
done
echo "module-params: 8 bad sets refused, each with its reason"

# iWARP only, on other ports: loads, and says so
insmod "$SMBD_DRIVER" ib_port=0 iwarp_port=15445 ib_on_iwarp_port=N
[ "$(cat $params/ib_port) $(cat $params/iwarp_port) $(cat $params/ib_on_iwarp_port)" = "0 15445 N" ] ||
	fail "parameters read back as $(cat $params/ib_port) $(cat $params/iwarp_port) $(cat $params/ib_on_iwarp_port)"
rmmod smbdirect
insmod "$SMBD_DRIVER"
echo "module-params: ib_port=0 iwarp_port=15445 loads"
