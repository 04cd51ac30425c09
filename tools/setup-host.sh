#!/bin/sh
# Install everything the build and the tests need. Idempotent: silent and
# without network access when every package is already present.
set -eu
here=$(cd "$(dirname "$0")" && pwd)

PKGS="build-essential cmake pkg-config googletest libgtest-dev libgmock-dev
kmod rdma-core ibverbs-utils libibverbs-dev librdmacm-dev perftest
libtalloc-dev libtevent-dev qemu-system-x86 busybox-static iproute2
clang libclang-rt-dev"

as_root() {
	if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

missing() {
	for p in "$@"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
			grep -q '^install ok installed$' || echo "$p"
	done
}

abi=$("$here/kernel-abi.sh" 2>/dev/null || true)
todo=$(missing $PKGS ${abi:+linux-headers-$abi})
[ -n "$abi" ] && [ -z "$todo" ] && exit 0

echo "setup: installing build and test dependencies" >&2
export DEBIAN_FRONTEND=noninteractive
as_root apt-get update -qq
abi=$("$here/kernel-abi.sh")
todo=$(missing $PKGS "linux-headers-$abi")
# shellcheck disable=SC2086 # word splitting of the package list is intended
as_root apt-get install -y -qq --no-install-recommends $todo >/dev/null
echo "setup: done (kernel headers linux-headers-$abi)" >&2
