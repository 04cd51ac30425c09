#!/bin/sh
# Second stage in the guest (Debian's userland from the host): soft-RoCE on a
# dummy netdev, smbdirect.ko loaded, then the scenario. The result share
# receives the scenario's output, its exit code and the kernel log.
arg() {
	for kv in $(cat /proc/cmdline); do
		case $kv in "$1="*) echo "${kv#*=}" ;; esac
	done
}
repo=$(arg smbd.repo)
out=$(arg smbd.out)
scenario=$(arg smbd.scenario)
role=$(arg smbd.role)
# one guest: soft-RoCE on a dummy netdev, the peers in the same guest; a
# pair (tools/vm/pair.sh): each guest's own soft-RoCE on the link between
# them, SMBD_ADDR the server's
case $role in
server) own=1 ;;
client) own=2 ;;
*) own=1 ;;
esac
export SMBD_ROLE="$role" SMBD_SHARED="$(arg smbd.shared)" \
	SMBD_OWN_ADDR=10.55.0.$own SMBD_OWN_ADDR6=fd55::$own
export SMBD_REPO="$repo" SMBD_BUILD="$(arg smbd.build)" SMBD_ADDR=10.55.0.1 \
	SMBD_ADDR6=fd55::1 SMBD_SIW="$(arg smbd.siw)" \
	SMBD_SAMBA="$(arg smbd.samba)" SMBD_DRIVER="$(arg smbd.driver)" \
	SMBD_TIER="$(arg smbd.tier | tr , ' ')" \
	SMBD_FUZZ_CONVERSATIONS="$(arg smbd.fuzz_conversations)" \
	SMBD_FUZZ_IOCTL_OPS="$(arg smbd.fuzz_ioctl_ops)" \
	E2E_BIG_MB="$(arg smbd.e2e_big_mb)" \
	E2E_NET_FAULTS="$(arg smbd.net_faults | tr , ' ')" \
	E2E_NET_SECONDS="$(arg smbd.net_seconds)" \
	E2E_SOAK_SECONDS="$(arg smbd.soak_seconds)" \
	E2E_SERVER="$(arg smbd.e2e_server)"
kmemleak=/sys/kernel/debug/kmemleak

link() {
	if [ -z "$role" ]; then
		modprobe dummy &&
		ip link add smbd0 type dummy &&
		ip link set smbd0 mtu 9000 up
	else
		modprobe virtio_net &&
		ip link set eth0 name smbd0 &&
		ip link set smbd0 up
	fi
}

setup() {
	ip link set lo up &&
	link &&
	ip addr add "$SMBD_OWN_ADDR/24" dev smbd0 &&
	ip -6 addr add "$SMBD_OWN_ADDR6/64" dev smbd0 nodad &&
	modprobe crc32_generic &&
	modprobe rdma_rxe &&
	rdma link add rxe0 type rxe netdev smbd0 &&
	modprobe rdma_cm &&
	{ mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug; } &&
	# "none": the scenario installs and loads it (tests/e2e/packages.sh)
	{ [ "$SMBD_DRIVER" = none ] || insmod "$SMBD_DRIVER"; } &&
	# a debug kernel: what boot left unreferenced is not ours
	{ [ ! -w $kmemleak ] || { echo scan >$kmemleak && echo clear >$kmemleak; }; }
}

if setup >"$out/setup.log" 2>&1; then
	(cd "$repo" && sh "$scenario") >"$out/scenario.log" 2>&1
	rc=$?
	# every scenario ends with the module unloading cleanly
	if [ $rc = 0 ] && ! rmmod smbdirect >>"$out/scenario.log" 2>&1; then
		echo "vm: rmmod smbdirect failed" >>"$out/scenario.log"
		rc=rmmod
	fi
	echo $rc >"$out/rc"
	# with the module gone, whatever it allocated and lost is unreferenced
	sh "$repo/tools/vm/kmemleak.sh" unload >>"$out/scenario.log" 2>&1 ||
		cat $kmemleak >"$out/kmemleak"
else
	echo setup >"$out/rc"
fi
dmesg >"$out/dmesg"
sync
poweroff -f
