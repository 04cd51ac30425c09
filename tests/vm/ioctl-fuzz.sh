#!/bin/sh
# The ioctl fuzzer with a fixed seed while SMB Direct clients keep
# connecting: new sessions (NEW_CONNECTION for whichever file listens, ACCEPT
# by token) and bindings to session 0x1234, which the fuzzer's files register
# now and then (NEW_CHANNEL). The fuzzer mostly answers their SESSION_SETUP,
# echoes their PDUs and serves their SMB2 WRITEs and READs with RDMA_RW, and
# just as well sends garbage, bad descriptors and disconnects: the clients'
# own outcome does not matter. Guest parameter smbd.fuzz_ioctl_ops=N: N
# operations per thread (default 250).
set -eu
client=$SMBD_BUILD/tools/client/smbdirect-client
running=$(mktemp)
trap 'rm -f "$running"' EXIT
clients() {
	i=$1
	while [ -e "$running" ]; do
		case $((i % 4)) in
		0) mode="--new --pdus 20" ;;
		1) mode="--new --write-read 300000 --io-count 20 --descriptors 2" ;;
		2) mode="--bind 0x1234 --pdus 20" ;;
		*) mode="--new --write-read 65536 --io-count 20 --channel rdma" ;;
		esac
		# shellcheck disable=SC2086
		"$client" --addr "$SMBD_ADDR" $mode --timeout 10 --wait 2 --quiet \
			>/dev/null 2>&1 || true
		i=$((i + 1))
		sleep 0.2
	done
}
clients 0 &
c1=$!
clients 1 &
c2=$!
clients 3 &
c3=$!
rc=0
# the clients get the CPU they need to connect at all
nice -n 10 "$SMBD_BUILD/tests/smbdirect-ioctl-fuzz" --seed 1 \
	--ops "${SMBD_FUZZ_IOCTL_OPS:-250}" || rc=$?
rm -f "$running"
wait "$c1" "$c2" "$c3"
exit $rc
