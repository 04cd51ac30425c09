#!/bin/sh
# Two hosts (tools/vm/pair.sh), each on its own soft-RoCE device: the
# responder in the server guest, the client tool in the client guest.
# Echoes and RDMA write-read rounds across the link; then the client's
# device goes away under a running benchmark, which the server sees as its
# peer's end (peer, or rdma_error for what was in flight), never as a
# removal of its own device, as one guest with one device for both ends
# does; the client adds its device again and the server, without a
# reload, serves it. Then the server's own device goes away under a second
# benchmark: the server sees device_removed, the client its connection
# end, and once the server adds its device again the client is served.
set -eu
bin=$SMBD_BUILD
shared=$SMBD_SHARED
# waits up to 120 s for @1 in the shared directory
await() {
	i=0
	until [ -e "$shared/$1" ]; do
		i=$((i + 1))
		[ $i -lt 1200 ] || { echo "no $1 from the other guest" >&2; exit 1; }
		sleep 0.1
	done
}

# the responder's <n>th connection (server)
nth_connection() {
	grep "NEW_CONNECTION" "$log" |
		sed -n "$1"'s/^.*conn \([0-9]*\): NEW_CONNECTION.*$/\1/p'
}
# a WRITE of connection <id> succeeded (server)
moved() {
	grep -q "conn $1: WRITE .*status 0x00000000" "$log"
}

case $SMBD_ROLE in
server)
	log=$(mktemp)
	"$bin/tools/responder/smbdirect-responder" --no-fork --connections 6 \
		>"$log" 2>&1 &
	pid=$!
	i=0
	until grep -q "LISTEN: new sessions" "$log"; do
		i=$((i + 1))
		[ $i -lt 100 ] || { cat "$log"; exit 1; }
		sleep 0.1
	done
	touch "$shared/server-ready"
	# the third connection, the first benchmark's, moves data: the
	# client may take its device away; the fifth, the second
	# benchmark's: the server takes its own away
	bench= bench2=
	until ! kill -0 $pid 2>/dev/null || [ -e "$shared/client-exit" ]; do
		if [ -z "$bench" ]; then
			bench=$(nth_connection 3)
		elif [ ! -e "$shared/bench-running" ] && moved "$bench"; then
			touch "$shared/bench-running"
		elif [ -z "$bench2" ]; then
			bench2=$(nth_connection 5)
		elif [ ! -e "$shared/server-device-back" ] && moved "$bench2"; then
			rdma link delete rxe0
			i=0
			until grep -q "conn $bench2: DISCONNECTED" "$log"; do
				i=$((i + 1))
				[ $i -lt 600 ] || break
				sleep 0.1
			done
			rdma link add rxe0 type rxe netdev smbd0
			touch "$shared/server-device-back"
		fi
		sleep 0.2
	done
	if kill -0 $pid 2>/dev/null; then
		kill -TERM $pid
		wait $pid || true
		tail -n 40 "$log"
		echo "the client stopped before its six connections ended" >&2
		exit 1
	fi
	touch "$shared/server-done"
	rc=0
	wait $pid || rc=$?
	grep summary "$log"
	[ $rc = 0 ] || { tail -n 40 "$log"; exit 1; }
	grep -q "summary: 6 connections offered" "$log"
	grep -q "summary: [1-9][0-9]* READs and [1-9][0-9]* WRITEs answered" "$log"
	if ! grep -q "conn $bench: DISCONNECTED (\(peer\|rdma_error\))" "$log"; then
		grep "conn $bench: DISCONNECTED" "$log" >&2 || true
		echo "the benchmark's connection did not end by its peer" >&2
		exit 1
	fi
	if ! grep -q "conn $bench2: DISCONNECTED (device_removed)" "$log"; then
		grep "conn $bench2: DISCONNECTED" "$log" >&2 || true
		echo "the second benchmark's connection did not end with the server's device" >&2
		exit 1
	fi
	;;
client)
	# the server gives up on a client that stopped early
	trap 'touch "$shared/client-exit"' EXIT
	await server-ready
	client="$bin/tools/client/smbdirect-client --addr $SMBD_ADDR --new"
	$client --pdus 200 --size 65536 --quiet
	$client --write-read 8388608 --io-count 4 --timeout 60 --quiet
	$client --bench write --size 1048576 --depth 4 --seconds 120 \
		--timeout 60 --quiet >/dev/null 2>&1 &
	bench=$!
	await bench-running
	rdma link delete rxe0
	if wait $bench; then
		echo "the benchmark outlived its device" >&2
		exit 1
	fi
	rdma link add rxe0 type rxe netdev smbd0
	$client --pdus 20 --size 4096 --quiet
	$client --bench write --size 1048576 --depth 4 --seconds 120 \
		--timeout 60 --quiet >/dev/null 2>&1 &
	bench=$!
	await server-device-back
	if wait $bench; then
		echo "the benchmark outlived the server's device" >&2
		exit 1
	fi
	$client --pdus 20 --size 4096 --quiet
	await server-done
	;;
*)
	echo "two-hosts.sh runs in a pair of guests (tools/vm/pair.sh)" >&2
	exit 1
	;;
esac
