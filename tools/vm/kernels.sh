#!/bin/sh
# Run one guest scenario (as tools/vm/run.sh does) on each kernel make check
# covers (tools/kernel-abi.sh --supported), with the module built against
# that kernel's headers into $SMBD_BUILD/kernels/<abi>, and soft-iWARP,
# which Debian does not build, from the kernel's source (siw.sh). Stops at
# the first kernel that fails.
set -eu
[ $# -eq 1 ] || { echo "usage: $0 <scenario.sh>" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
build=${SMBD_BUILD:-build}
for meta in $("$here/../kernel-abi.sh" --supported); do
	abi=$("$here/../kernel-abi.sh" "$meta")
	echo "=== kernel $abi ($meta)"
	driver=$("$here/../build-driver.sh" "/usr/src/linux-headers-$abi" \
		"$build/kernels/$abi")
	siw=$("$here/siw.sh" "$abi")
	SMBD_KERNEL_PKG=$meta SMBD_VM_DRIVER=$(realpath "$driver") \
		SMBD_VM_ARGS="${SMBD_VM_ARGS:-} smbd.siw=$siw" "$here/run.sh" "$1"
done
