#!/bin/sh
# Print the ABI (e.g. 6.1.0-56-amd64) of the kernel Debian currently packages
# under a meta package: $1, else $SMBD_KERNEL_PKG, else linux-image-amd64.
# The module is built for, and the guest boots, that kernel; never the
# host's running kernel. "kernel-abi.sh --supported" prints the meta
# packages of the kernels make check covers: Debian 12's 6.1, and the 6.12
# of Debian 13 that Debian 12's updates also ship (or $SMBD_KERNEL_PKGS).
set -eu
if [ "${1:-}" = --supported ]; then
	echo "${SMBD_KERNEL_PKGS:-linux-image-amd64 linux-image-6.12-amd64}"
	exit 0
fi
meta=${1:-${SMBD_KERNEL_PKG:-linux-image-amd64}}
abi=$(apt-cache depends "$meta" 2>/dev/null |
	sed -n 's/^ *Depends: linux-image-\(.*-amd64\)$/\1/p' | head -n 1)
[ -n "$abi" ] || { echo "kernel-abi: $meta not in the apt cache" >&2; exit 1; }
echo "$abi"
