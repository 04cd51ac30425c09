#!/bin/sh
# Boot two guests joined by a virtual Ethernet link (QEMU's socket netdev)
# and run one scenario in both, as tools/vm/run.sh runs it in one: each
# guest has its own soft-RoCE device on the link, so teardown, device
# removal and faults are seen from a real remote peer. $SMBD_ROLE tells
# the scenario its side: server (10.55.0.1, $SMBD_ADDR) or client
# (10.55.0.2); $SMBD_SHARED is a directory both write, to wait for each
# other. Passes when both do; prints both outputs.
set -eu
[ $# -eq 1 ] || { echo "usage: $0 <scenario.sh>" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
shared=$(mktemp -d)
logs=$(mktemp -d)
server= client=
# each side in a process group of its own: its QEMU goes with it
stop() {
	# (dash's kill takes no "--": a negative PID names the group)
	for p in $server $client; do kill -TERM "-$p" 2>/dev/null || true; done
	rm -rf "$shared" "$logs"
}
trap stop EXIT
# a signal ends the script through its EXIT trap (sh runs it on exit only)
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
listening() {
	hex=$(printf '%04X' "$1")
	awk -v p=":$hex" '$2 ~ p"$" && $4 == "0A"' /proc/net/tcp | grep -q .
}
# the link's port on the loopback, below the ephemeral range, free
port=$((10000 + $$ % 20000))
while listening $port; do port=$((port + 1)); done
nic() {
	echo "-netdev socket,id=link,$1=127.0.0.1:$port" \
		"-device virtio-net-pci,netdev=link,mac=52:54:00:55:00:0$2"
}

SMBD_VM_ROLE=server SMBD_VM_SHARED=$shared SMBD_VM_NIC=$(nic listen 1) \
	setsid "$here/run.sh" "$1" >"$logs/server" 2>&1 &
server=$!
# run.sh prepares the kernel (fetched on a cold cache) before QEMU starts
i=0
until listening $port; do
	i=$((i + 1))
	if [ $i -ge 6000 ] || ! kill -0 $server 2>/dev/null; then
		cat "$logs/server"
		echo "vm: the server guest's QEMU never listened on port $port" >&2
		exit 1
	fi
	sleep 0.1
done
SMBD_VM_ROLE=client SMBD_VM_SHARED=$shared SMBD_VM_NIC=$(nic connect 2) \
	setsid "$here/run.sh" "$1" >"$logs/client" 2>&1 &
client=$!
rc=0
# the server serves until the client's end, which the client's guest
# signals on its way out, but not when it died (a panic runs no trap): then
# the server would wait out its whole time limit
wait $client || rc=1
touch "$shared/client-exit"
wait $server || rc=1
server= client=
for side in server client; do
	echo "=== $side"
	cat "$logs/$side"
done
exit $rc
