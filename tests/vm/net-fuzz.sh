#!/bin/sh
# The network fuzzer against the module: the responder takes smbd's roles
# (and registers session 0x1234 for bindings), the client plays 300 (the
# guest parameter smbd.fuzz_conversations=N: N) randomized conversations
# of seed 1, each breaking one stage of a valid
# one, with a fully valid conversation every 50 (smbdirect-client --fuzz).
# Afterwards every connection must be gone; the runner checks the kernel
# log and that the module unloads.
set -eu
bin=$SMBD_BUILD/tools
counters=/sys/class/misc/smbd/counters
log=$(mktemp)
responder=
trap '[ -z "$responder" ] || kill -9 "$responder" 2>/dev/null; rm -f "$log"' EXIT
fail() {
	echo "net-fuzz: $*" >&2
	echo "net-fuzz: the responder's last lines:" >&2
	tail -n 40 "$log" >&2
	exit 1
}

"$bin/responder/smbdirect-responder" --register 0x1234 >"$log" 2>&1 &
responder=$!
i=0
until grep -q "REGISTER_SESSION 0x1234" "$log"; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "the responder did not start"
	sleep 0.1
done

start=$(date +%s)
"$bin/client/smbdirect-client" --addr "$SMBD_ADDR" --fuzz 1 \
	--conversations "${SMBD_FUZZ_CONVERSATIONS:-300}" --quiet ||
	fail "the fuzzer failed"
echo "net-fuzz: $(($(date +%s) - start)) s"

kill -TERM "$responder"
wait "$responder" || fail "the responder did not stop cleanly"
responder=
# the responder names what only a driver bug can cause
! grep "driver bug" "$log" || fail "the responder saw a driver bug"
i=0
until [ "$(cat $counters/conn_active)" -eq 0 ]; do
	i=$((i + 1))
	[ $i -lt 50 ] || fail "$(cat $counters/conn_active) connection(s) still active"
	sleep 0.1
done
echo "net-fuzz: every connection is gone"
