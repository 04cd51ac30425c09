#!/bin/sh
# make e2e: the patched smbd serves a share through smbdirect.ko to the
# unmodified Linux cifs client, over soft-RoCE in a guest running the e2e
# kernel. Builds (or takes from the cache) the kernel, Samba and the
# module for that kernel, then runs tests/e2e/guest.sh there.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=${SMBD_BUILD:-$repo/build}
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

# the guest runs the host's userland: mount.cifs comes from it
if ! dpkg-query -W -f='${Status}\n' cifs-utils 2>/dev/null |
	grep -q '^install ok installed$'; then
	echo "e2e: installing cifs-utils" >&2
	export DEBIAN_FRONTEND=noninteractive
	as_root apt-get update -qq
	as_root apt-get install -y -qq --no-install-recommends cifs-utils >/dev/null
fi

"$here/ksmbd-tools.sh"
kernel=$("$here/kernel.sh")
samba=$("$repo/samba-patches/build.sh")
driver=$("$here/driver.sh" "$kernel" "$build/e2e/driver")
# Debian 6.1's cifs client sizes its receive queue without room for the
# drain marker: tearing a connection down with every receive posted warns
# in ib_drain_rq() from its smbd_destroy(). The driver keeps that room.
SMBD_VM_KNOWN='failed to drain recv queue.*smbd_destroy' \
SMBD_VM_KERNEL=$kernel SMBD_VM_DRIVER=$driver \
	SMBD_VM_ARGS="smbd.samba=$samba ${SMBD_E2E_ARGS:-}" \
	SMBD_VM_TIMEOUT=${SMBD_VM_TIMEOUT:-1800} SMBD_VM_MEM=3072 \
	"$repo/tools/vm/run.sh" "${1:-tests/e2e/guest.sh}"
