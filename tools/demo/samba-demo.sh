#!/bin/sh
# The demo, run in the e2e guest by `make demo`: Samba's smbd, patched by
# samba-patches/, serves a share through smbdirect.ko, and the unmodified
# Linux cifs client mounts it over soft-RoCE. File data moves by RDMA.
set -eu
. "$SMBD_REPO/tests/e2e/lib.sh"
E2E_BIG_MB=16
say() { printf '\n== %s\n' "$*"; }
c() { cat "$COUNTERS/$1"; }

say "smbdirect.ko listens for RDMA on port $(cat /sys/module/smbdirect/parameters/ib_port) (InfiniBand, RoCE) and $(cat /sys/module/smbdirect/parameters/iwarp_port) (iWARP) once an smbd registers; soft-RoCE:"
rdma link show
e2e_setup || { echo "setup failed: $E2E_WHY"; exit 1; }

say "smbd starts with 'server smb direct = yes': it registers its NEGOTIATE policy with the driver and listens"
start_smbd auto || { echo "$E2E_WHY"; exit 1; }
cat /sys/kernel/debug/smbdirect/sessions

say "mount -t cifs //$SMBD_ADDR/e2e -o rdma,vers=3.1.1,multichannel,max_channels=2"
mount -t cifs "//$SMBD_ADDR/e2e" "$E2E_MNT" \
	-o "rdma,vers=3.1.1,multichannel,max_channels=2,username=$E2E_USER,password=$E2E_PASS"
i=0
while [ "$(client_channels)" -lt 2 ] && [ $i -lt 100 ]; do i=$((i + 1)); sleep 0.1; done
echo "the client has $(client_channels) RDMA channels; the driver carries:"
sed 's/ pdus_queued.*rdma_reads=/ ... rdma_reads=/; s/ rdma_read_bytes.*//' \
	/sys/kernel/debug/smbdirect/connections

r0=$(c rdma_read_bytes) w0=$(c rdma_write_bytes)
say "write ${E2E_BIG_MB} MiB, drop the client's cache, read it back"
cp "$E2E_DIR/big" "$E2E_MNT/file"
sync
echo 3 >/proc/sys/vm/drop_caches
md5sum "$E2E_DIR/big" "$E2E_MNT/file" "$E2E_DIR/share/file"
echo "RDMA READ by the driver (the client's writes): $(( $(c rdma_read_bytes) - r0 )) bytes"
echo "RDMA WRITE by the driver (the client's reads): $(( $(c rdma_write_bytes) - w0 )) bytes"
ls -l "$E2E_MNT"

say "unmount; smbd stops"
umount "$E2E_MNT"
stop_smbd
echo "connections ended, by reason:"
for f in "$COUNTERS"/disconnect_*; do
	n=$(cat "$f")
	[ "$n" = 0 ] || echo "  ${f##*/disconnect_}: $n"
done
