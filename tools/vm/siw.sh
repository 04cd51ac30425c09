#!/bin/sh
# Soft-iWARP for one of Debian's stock kernels ($1: its ABI, e.g.
# 6.1.0-56-amd64), which do not build it (# CONFIG_RDMA_SIW is not set):
# drivers/infiniband/sw/siw of the matching linux-source package, built as
# an out-of-tree module against the kernel's headers (it needs only
# ib_core's exports), cached outside the checkout keyed by ABI and source
# version. Prints the path of siw.ko.
set -eu
[ $# -eq 1 ] || { echo "usage: $0 <kernel abi>" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
abi=$1
# 6.1.0-56-amd64 -> 6.1, 6.12.117+deb12-amd64 -> 6.12
series=$(echo "$abi" | sed -n 's/^\([0-9]*\.[0-9]*\)[.-].*/\1/p')
[ -n "$series" ] || { echo "siw: cannot tell the series of $abi" >&2; exit 1; }
need_packages siw "linux-source-$series" "linux-headers-$abi"
version=$(dpkg-query -W -f='${Version}' "linux-source-$series")
cache="$(cache_root)/siw/${abi}_$version"
if [ ! -f "$cache/.complete" ]; then
	rm -rf "$cache"
	mkdir -p "$cache"
	tar -xaf "/usr/src/linux-source-$series.tar.xz" -C "$cache" \
		--strip-components=4 "linux-source-$series/drivers/infiniband/sw/siw"
	make -C "/usr/src/linux-headers-$abi" M="$cache/siw" CONFIG_RDMA_SIW=m \
		modules >"$cache/build.log" 2>&1 ||
		{ tail -n 20 "$cache/build.log" >&2; exit 1; }
	touch "$cache/.complete"
fi
echo "$cache/siw/siw.ko"
