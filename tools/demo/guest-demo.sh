#!/bin/sh
# The demo, run in the guest by `make demo`: the smbd-side responder drives
# /dev/smbd as patched Samba will, through libsmbd on a tevent loop, and the
# SMB Direct client tool connects over soft-RoCE through both flows the
# driver routes.
set -eu
bin=$SMBD_BUILD/tools
log=$(mktemp)

say() { printf '\n== %s\n' "$*"; }
client() { "$bin/client/smbdirect-client" --addr "$SMBD_ADDR" "$@"; }

say "smbdirect.ko is loaded; it listens for RDMA on port $(cat /sys/module/smbdirect/parameters/ib_port) (InfiniBand, RoCE) and $(cat /sys/module/smbdirect/parameters/iwarp_port) (iWARP) once an smbd registers; soft-RoCE:"
rdma link show

say "The smbd side starts on libsmbd and its tevent glue: SET_PARAMS (transport limits and the SMB2 NEGOTIATE policy), LISTEN for new sessions, and registers session 0x1234 as an smbd with a session would"
"$bin/responder/smbdirect-responder" --tevent --register 0x1234 >"$log" 2>&1 &
responder=$!
i=0
until grep -q "REGISTER_SESSION 0x1234" "$log"; do
	i=$((i + 1))
	[ $i -lt 100 ] || { cat "$log"; exit 1; }
	sleep 0.1
done

say "Flow 2: a new session over RDMA (what 'mount -t cifs -o rdma' does). The driver answers the SMB2 NEGOTIATE itself, then offers the connection to the listening smbd, whose forked child claims it by token"
client --new --pdus 8 --size 65536

say "Flow 1: a channel bound to the existing session 0x1234 (Windows multichannel). The driver routes it to the smbd that registered the session; the PDUs are 1 MiB, sent in hundreds of SMB Direct fragments each way"
client --bind 0x1234 --pdus 4 --size 1048576

say "The data path: SMB2 WRITE then READ of 3 MB over RDMA, 3 descriptors per request, each a memory window the server invalidates with its answer. The smbd side moves the data with RDMA_RW through its pool of 1 MiB buffers; the client checks every byte read back"
client --new --write-read 3000000 --io-count 2 --descriptors 3

say "A channel that binds to a session nobody registered is refused"
client --bind 0x5678 --expect-status 0xc0000203

say "A hostile peer: its message claims more data than it carries. The driver disconnects it and counts the reason"
client --hostile offset-past-buffer --quiet

kill -TERM "$responder"
wait "$responder" || true
say "What the smbd side saw"
cat "$log"

say "The driver's view (smbdctl: parameters, counters, open connections)"
"$bin/smbdctl/smbdctl"
