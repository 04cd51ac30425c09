#!/bin/sh
# An smbd child killed while its RDMA READs are in flight: the connection
# ends as OWNER_CLOSED, every operation is accounted for (none left in
# flight), the client learns of the disconnect, and the same master serves
# a verified write-read right after, without reloading anything.
set -eu
bin=$SMBD_BUILD/tools
counters=/sys/class/misc/smbd/counters
log=$(mktemp)
out=$(mktemp)
responder=
client=
cleanup() {
	for p in $client $responder; do kill -9 "$p" 2>/dev/null || true; done
	rm -f "$log" "$out"
}
trap cleanup EXIT
fail() {
	echo "rdma-kill: $*" >&2
	cat "$log" "$out" >&2
	exit 1
}
count() { cat "$counters/$1"; }
wait_for() { # seconds, condition
	i=0
	until eval "$2"; do
		i=$((i + 1))
		[ $i -lt $(($1 * 10)) ] || return 1
		sleep 0.1
	done
}

owner_closed=$(count disconnect_owner_closed)
"$bin/responder/smbdirect-responder" --no-io-log >"$log" 2>&1 &
responder=$!
wait_for 10 'grep -q "LISTEN: new sessions" "$log"' || fail "the responder did not start"

# 8 MiB SMB2 WRITEs, eight in flight: the child pulls them by RDMA READ.
# The client waits for its answers as long as the bench runs: eight of them
# take more than the default 10 s on a debug kernel.
"$bin/client/smbdirect-client" --addr "$SMBD_ADDR" --bench write \
	--size 8388608 --depth 8 --seconds 60 --timeout 60 >"$out" 2>&1 &
client=$!
wait_for 30 '[ "$(count rdma_inflight)" -gt 0 ]' ||
	fail "no RDMA operation in flight"
child=$(pgrep -P "$responder" | head -n 1)
[ -n "$child" ] || fail "the responder has no child"
inflight=0
wait_for 30 'inflight=$(count rdma_inflight); [ "$inflight" -gt 0 ]' ||
	fail "no RDMA operation in flight"
kill -9 "$child"
echo "killed smbd child $child with $inflight RDMA operations in flight"

if wait "$client"; then
	client=
	fail "the client's bench went on after its server died"
fi
client=
grep -q "FAILED" "$out" || fail "the client did not report the failure"
wait_for 10 '[ "$(count conn_active)" -eq 0 ]' || fail "the connection stayed"
[ "$(count rdma_inflight)" -eq 0 ] || fail "RDMA operations left in flight"
[ "$(count disconnect_owner_closed)" -eq $((owner_closed + 1)) ] ||
	fail "not counted as owner_closed"
echo "connection gone (owner_closed), no RDMA operation in flight"

"$bin/client/smbdirect-client" --addr "$SMBD_ADDR" --write-read 3000000 \
	--descriptors 2 --quiet >"$out" 2>&1 || fail "the next client failed"
echo "the same master served a verified write-read afterwards"
kill -TERM "$responder"
wait "$responder" || fail "the responder did not stop cleanly"
responder=
