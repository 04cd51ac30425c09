#!/bin/sh
# make e2e: the patched smbd serves a share through smbdirect.ko to the
# unmodified Linux cifs client, over soft-RoCE in a guest running the e2e
# kernel (SMBD_E2E_KERNEL=debug: the debug kernel). Builds (or takes from
# the caches) what prepare.sh does, then runs tests/e2e/guest.sh, or the
# scenario given, there; with SMBD_E2E_PAIR=1, in the two guests of
# tools/vm/pair.sh, the server's and the client's.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
paths=$("$here/prepare.sh" ${SMBD_E2E_KERNEL:-})
kernel=$(echo "$paths" | sed -n 1p)
samba=$(echo "$paths" | sed -n 2p)
driver=$(echo "$paths" | sed -n 3p)
runner=run.sh
if [ -n "${SMBD_E2E_PAIR:-}" ]; then
	[ $# -eq 1 ] || { echo "SMBD_E2E_PAIR: name a scenario for two hosts (tests/e2e/pair.sh)" >&2; exit 2; }
	runner=pair.sh
fi
# SMBD_E2E_DRIVER=none: the scenario loads the module itself
SMBD_VM_KERNEL=$kernel SMBD_VM_DRIVER=${SMBD_E2E_DRIVER:-$driver} \
	SMBD_VM_ARGS="smbd.samba=$samba ${SMBD_E2E_ARGS:-}" \
	SMBD_VM_TIMEOUT=${SMBD_VM_TIMEOUT:-1800} SMBD_VM_MEM=3072 \
	"$repo/tools/vm/$runner" "${1:-tests/e2e/guest.sh}"
