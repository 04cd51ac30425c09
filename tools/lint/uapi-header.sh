#!/bin/sh
# The UAPI header as the kernel's "make headers" installs and usr/include
# checks it: through scripts/headers_install.sh of each supported kernel
# (SPDX syscall note, no kernel-only parts, no CONFIG_ leak), then the
# installed copy compiled twice into one unit (the include guard) as strict
# C90 and as C++, with every warning an error.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for meta in $("$repo/tools/kernel-abi.sh" --supported); do
	kdir=/usr/src/linux-headers-$("$repo/tools/kernel-abi.sh" "$meta")
	mkdir -p "$work/usr/include/linux"
	out=$work/usr/include/linux/smbd.h
	(cd "$kdir" && sh scripts/headers_install.sh \
		"$repo/include/uapi/linux/smbd.h" "$out")
	cc -std=c90 -Wall -Wextra -Werror -pedantic-errors -fsyntax-only \
		-I"$work/usr/include" -x c /dev/null -include "$out" -include "$out"
	c++ -std=c++17 -Wall -Wextra -Werror -pedantic-errors -fsyntax-only \
		-I"$work/usr/include" -x c++ /dev/null -include "$out" -include "$out"
	echo "uapi header: installed as by $(basename "$kdir"), C90 and C++17 clean"
	rm -rf "${work:?}/usr"
done
