#!/bin/sh
# Install everything the build and the tests need. Idempotent: silent and
# without network access when every package is already present.
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

hdrs=$(headers 2>/dev/null) || hdrs=
# shellcheck disable=SC2086 # word splitting of the package lists is intended
todo=$(missing $PKGS $hdrs)
[ -n "$hdrs" ] && [ -z "$todo" ] && exit 0

echo "setup: installing build and test dependencies" >&2
as_root apt-get update -qq
hdrs=$(headers)
# shellcheck disable=SC2086
need_packages setup $PKGS $hdrs
# shellcheck disable=SC2086
echo "setup: done (kernel headers:" $hdrs")" >&2
