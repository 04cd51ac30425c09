#!/bin/sh
# Faults of the network between two hosts, under real cifs I/O
# (tools/e2e/run.sh with SMBD_E2E_PAIR=1): in the server guest the patched
# smbd serves the share through smbdirect.ko; in the client guest the Linux
# cifs client mounts it over its own soft-RoCE device, background workers
# write and read back files, and tc netem on both ends of the link (so
# each way) strikes in the middle:
#   loss-1, loss-10  1 % or 10 % of the packets lost, for E2E_NET_SECONDS
#   delay            20 ms of delay with 10 ms of jitter (which reorders)
#   reorder          a quarter of the packets sent 10 ms ahead of the rest
#   partition-10     every packet lost for 10 s
#   partition-200    and for 200 s, longer than either end waits for the
#                    other: the client must reconnect once the link is back
#   mtu              the link's MTU lowered on both hosts, from 1500 to
#                    1000, below soft-RoCE's packets, then raised again
# After each: every file the workers completed and files written before
# the fault read back right on the client and on the server's disk, the
# server's driver holds no connection and no RDMA operation once the
# client unmounted, and the next fault runs on the same loaded module and
# smbd; kmemleak (on the debug kernel) checks both hosts after the soak and
# after the unload. One line each:
#   NETEM <name> PASS|FAIL <detail>
# then the soak: E2E_SOAK_SECONDS of the same workers with one of the
# shorter faults every E2E_SOAK_EVERY seconds, in turn, and one line:
#   NETEM soak PASS|FAIL seconds=… faults=… ops=… verified_bytes=… mismatches=…
# and NETEM summary. The client's exit code is the number of failures.
set -u
. "$SMBD_REPO/tests/e2e/lib.sh"
. "$SMBD_REPO/tests/e2e/workers.sh"

SECONDS_EACH=${E2E_NET_SECONDS:-30}

# netem <options>: the same impairment on both hosts' side of the link
netem() {
	tc qdisc replace dev smbd0 root netem "$@" ||
		fail "tc netem $* failed" || return 1
	out=$(on_server "tc qdisc replace dev smbd0 root netem $*") ||
		fail "tc netem $* failed on the server: $out"
}

# the link as it was on both hosts: no impairment, MTU 1500, and the IPv6
# address an MTU below IPv6's minimum took away
LINK_CLEAR='tc qdisc del dev smbd0 root 2>/dev/null
	ip link set smbd0 mtu 1500
	ip -6 addr replace "$SMBD_OWN_ADDR6/64" dev smbd0 nodad'
link_clear() {
	eval "$LINK_CLEAR"
	on_server "$LINK_CLEAR" >/dev/null
	true
}

# impair <seconds> <netem options>
impair() {
	t=$1
	shift
	netem "$@" || return 1
	sleep "$t"
	link_clear
	FAULT_DID="netem $* for $t s"
}

fault_loss_1() { impair "$SECONDS_EACH" loss 1%; }
fault_loss_10() { impair "$SECONDS_EACH" loss 10%; }
fault_delay() { impair "$SECONDS_EACH" delay 20ms 10ms distribution normal; }
fault_reorder() { impair "$SECONDS_EACH" delay 10ms reorder 25% 50%; }
fault_partition_10() { impair 10 loss 100%; }
fault_partition_200() { impair 200 loss 100%; }

# Soft-RoCE's packets of a 1024-byte path MTU (about 1090 bytes of IP,
# sent with DF) no longer fit the link: what the queue pairs made before
# send in full-sized packets is lost until the MTU is back.
fault_mtu() {
	ip link set smbd0 mtu 1000 || fail "setting the MTU failed" || return 1
	out=$(on_server "ip link set smbd0 mtu 1000") ||
		fail "setting the server's MTU failed: $out" || return 1
	sleep "$SECONDS_EACH"
	link_clear
	FAULT_DID="MTU 1000 on both hosts for $SECONDS_EACH s"
}

# Nothing stays in either kernel: kmemleak (on the debug kernel) clean on
# both hosts.
hosts_clean() {
	on_server "no_leaks net-$1" && no_leaks "client-$1"
}

net_fault() {
	name=$1
	E2E_WHY=
	client_usable "NETEM $name" || return
	FAULT_DID=
	before=$(on_server disconnects)
	if net_round "fault_$(echo "$name" | tr - _)"; then
		echo "NETEM $name PASS $FAULT_DID; server disconnects: $(reasons_delta "$before" "$(on_server disconnects)")$WORK_DETAIL"
	else
		FAILED=$((FAILED + 1))
		echo "NETEM $name FAIL $E2E_WHY"
		net_diagnose
	fi
	net_cleanup
}

net_diagnose() {
	on_server 'tail -n 20 "$E2E_DIR/log/smbd.out"
		cat /sys/kernel/debug/smbdirect/connections
		rdma res show qp; rdma statistic show' |
		sed 's/^/  server: /'
	tc qdisc show dev smbd0 | sed 's/^/  tc: /'
	client_state | sed 's/^/  client: /'
	dmesg | tail -n 40 | sed 's/^/  kernel: /'
}

net_cleanup() {
	# the link first: workers finish their step only on a working link
	link_clear
	workers_stop
	unmount_share
	on_server 'rm -rf "${E2E_DIR:?}/share/"*' >/dev/null
}

# data_moves: a worker completed a write and its read back
data_moves() {
	wait_until 120 'cat "$WORK_DIR"/log* | grep -q "^ok "' ||
		fail "the workers moved no data"
}

net_round() {
	mount_share || return 1
	kept_write || return 1
	workers_start 2 || return 1
	data_moves || return 1
	"$1" || return 1
	INJECTED=$((INJECTED + 1))
	KINDS="$KINDS $name"
	# the client comes back by itself (a reconnect when RDMA gave up)
	mount_recovers 300 || return 1
	sleep 5
	work_verified || return 1
	on_server driver_idle || return 1
	VERIFIED=$((VERIFIED + WORK_VERIFIED + KEPT_BYTES))
	WORK_DETAIL="; workers ops=$WORK_OPS errors=$WORK_ERRORS verified=$WORK_VERIFIED"
}

soak() {
	E2E_WHY=
	mount_share || return 1
	kept_write || return 1
	workers_start 3 || return 1
	data_moves || return 1
	soak_faults "NETEM soak" \
		"loss-1 delay partition-10 reorder mtu loss-10" || return 1
	work_verified || return 1
	on_server driver_idle && hosts_clean soak || return 1
	VERIFIED=$((VERIFIED + WORK_VERIFIED + KEPT_BYTES))
	SOAK_DETAIL="seconds=$(($(date +%s) - SOAK_START)) faults=$SOAK_N ops=$WORK_OPS errors=$WORK_ERRORS verified_bytes=$WORK_VERIFIED mismatches=$WORK_MISMATCHES"
}

case ${SMBD_ROLE:-} in
server)
	e2e_setup || { echo "NETEM server setup FAIL $E2E_WHY"; exit 1; }
	start_server auto || { echo "NETEM server setup FAIL $E2E_WHY"; exit 1; }
	rc=0
	serve_client || rc=1
	! grep -q PANIC "$E2E_DIR/log/smbd.out" ||
		{ echo "smbd panicked"; grep -m1 -A12 PANIC "$E2E_DIR/log/smbd.out"; rc=1; }
	stop_server
	driver_idle && no_leaks net-faults-end ||
		{ echo "after smbd stopped: $E2E_WHY"; rc=1; }
	exit $rc
	;;
client) ;;
*)
	echo "net-faults.sh runs in a pair of guests (SMBD_E2E_PAIR=1)" >&2
	exit 1
	;;
esac

trap 'touch "$SMBD_SHARED/client-exit"' EXIT
# The client is Debian's 6.1 cifs over soft-RoCE. In a partition the
# server's disconnect never reaches it: unless its queue pair fails first
# (as it does once soft-RoCE's retries run out; before the test kernels'
# tools/e2e/kernel-patches/0006 they could stall for good), its
# writers wait in smbd_send() until the client's own keepalive gives up,
# 2 x 120 s after its last receive, longer than the hung task detector's
# 120 s (in partition-200 a writer blocked past it panicked the debug
# kernel's client). The server, whose driver is under test, keeps 120 s.
[ ! -w /proc/sys/kernel/hung_task_timeout_secs ] ||
	echo 600 >/proc/sys/kernel/hung_task_timeout_secs
{ await_server && test_data; } || { echo "NETEM setup FAIL $E2E_WHY"; exit 1; }
warm_up_mount
workers_setup
for f in ${E2E_NET_FAULTS:-loss-1 loss-10 delay reorder mtu partition-10 partition-200}; do
	net_fault "$f"
done
if [ "$SOAK_SECONDS" -gt 0 ] && client_usable "NETEM soak"; then
	if soak; then
		echo "NETEM soak PASS $SOAK_DETAIL"
	else
		FAILED=$((FAILED + 1))
		echo "NETEM soak FAIL $E2E_WHY"
		net_diagnose
	fi
	net_cleanup
fi
# the same module and smbd serve once more
E2E_WHY=
if ! client_usable "NETEM after-all"; then
	:
elif mount_share && rdma_files; then
	echo "NETEM after-all PASS the same module serves: $E2E_WORK"
else
	FAILED=$((FAILED + 1))
	echo "NETEM after-all FAIL $E2E_WHY"
fi
net_cleanup
by_kind=$(echo "$KINDS" | tr ' ' '\n' | sed '/^$/d' | sort | uniq -c |
	awk '{printf "%s%s:%s", sep, $2, $1; sep = ","}')
echo "NETEM summary faults_injected=$INJECTED by_kind=${by_kind:-none} data_verified_bytes=$VERIFIED failed=$FAILED"
on_server end >/dev/null
exit "$FAILED"
