#!/bin/sh
# The responder CLI against the module, without a peer: it takes the master's
# roles, says so, and on SIGTERM stops with its summary and exit code 0.
set -e
log=$(mktemp)
"$SMBD_BUILD/tools/responder/smbdirect-responder" --register 0x1234 \
	--accept-timeout 2000 --dialects 0x0302-0x0311 >"$log" 2>&1 &
pid=$!
i=0
until grep -q "REGISTER_SESSION 0x1234" "$log"; do
	i=$((i + 1))
	[ $i -lt 100 ] || { cat "$log"; echo "responder did not start" >&2; exit 1; }
	sleep 0.1
done
kill -TERM $pid
wait $pid
cat "$log"
grep -q "LISTEN: new sessions" "$log"
grep -q "accept 2000 ms, dialects 0x0302..0x0311" "$log"
grep -q "summary: 0 connections offered" "$log"
