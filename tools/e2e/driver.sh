#!/bin/sh
# Build smbdirect.ko for the e2e guest kernel (tools/e2e/kernel.sh) in
# $1 (a build directory): a copy of driver/ and include/ there, so the
# tree's own build for Debian's kernel is left alone. Prints the module.
set -eu
[ $# -eq 2 ] || { echo "usage: $0 <kernel cache> <build dir>" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
kernel=$1
out=$2
rm -rf "$out"
mkdir -p "$out"
cp -r "$repo/include" "$out/include"
mkdir -p "$out/driver"
(cd "$repo/driver" && find . -name '*.[ch]' -o -name Kbuild) |
	(cd "$repo/driver" && xargs cp --parents -t "$out/driver")
make -C "$kernel/build" M="$out/driver" W=1 modules >"$out/build.log" 2>&1 ||
	{ tail -n 40 "$out/build.log" >&2; exit 1; }
echo "$out/driver/smbdirect.ko"
