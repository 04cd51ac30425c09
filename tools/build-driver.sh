#!/bin/sh
# Build smbdirect.ko against a kernel tree ($1: a source tree built for
# out-of-tree modules, or Debian's /usr/src/linux-headers-<abi>) in $2, a
# build directory holding a copy of driver/ and include/, so the tree's own
# build (make module) is left alone; further arguments go to make (C=1).
# Prints the module; the build's output is in $2/build.log.
set -eu
[ $# -ge 2 ] || { echo "usage: $0 <kernel build tree> <build dir> [make args]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
kdir=$1
out=$2
shift 2
[ -d "$kdir" ] || { echo "build-driver: no kernel tree at $kdir" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)	# kbuild takes M= from its own directory
cp -r "$repo/include" "$out/include"
mkdir -p "$out/driver"
(cd "$repo/driver" && find . \( -name '*.[ch]' ! -name '*.mod.c' \) -o \
	-name Kbuild) |
	(cd "$repo/driver" && xargs cp --parents -t "$out/driver")
make -C "$kdir" M="$out/driver" W=1 "$@" modules >"$out/build.log" 2>&1 ||
	{ tail -n 40 "$out/build.log" >&2; exit 1; }
# smbdirect.ko, or smbdirect_samba.ko where the kernel has its own (Kbuild)
ls "$out"/driver/smbdirect*.ko
