#!/bin/sh
# Install everything the build and the tests need. Idempotent; the apt
# lists are refreshed every time: the kernels the module is built for are
# Debian's current ones (tools/kernel-abi.sh), and lists refreshed only
# later in a run (by a script installing a package of its own) would
# change them halfway, to a kernel whose headers were never installed.
set -eu
here=$(cd "$(dirname "$0")" && pwd)

PKGS="build-essential cmake pkg-config googletest libgtest-dev libgmock-dev
kmod rdma-core ibverbs-utils libibverbs-dev librdmacm-dev perftest fio linux-perf
libtalloc-dev libtevent-dev nettle-dev qemu-system-x86 busybox-static iproute2
clang libclang-rt-dev clang-format clang-tidy sparse groff-base strace"

. "$here/lib.sh"

# the headers of every kernel the module is built for
headers() {
	for meta in $("$here/kernel-abi.sh" --supported); do
		abi=$("$here/kernel-abi.sh" "$meta") || return 1
		echo "linux-headers-$abi"
	done
}

as_root apt-get update -qq || {
	echo "setup: apt-get update failed: the package lists are those of the last refresh" >&2
}
hdrs=$(headers)
# shellcheck disable=SC2086 # word splitting of the package lists is intended
[ -z "$(missing $PKGS $hdrs)" ] && exit 0

echo "setup: installing build and test dependencies" >&2
# shellcheck disable=SC2086
need_packages setup $PKGS $hdrs
# shellcheck disable=SC2086
echo "setup: done (kernel headers:" $hdrs")" >&2
