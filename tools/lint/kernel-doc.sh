#!/bin/sh
# The ABI's documentation: kernel-doc -Wall over the UAPI header, as the
# kernel's documentation build reads it (every struct, member, enum and
# constant block in kernel-doc form, nothing undocumented or misnamed),
# with the script from Debian's linux-source-6.12, cached by version.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
. "$repo/tools/lib.sh"
need_packages kernel-doc linux-source-6.12

version=$(dpkg-query -W -f='${Version}' linux-source-6.12)
cache=$(cache_root)/kernel-doc/$version
if [ ! -f "$cache/.complete" ]; then
	rm -rf "$cache"
	mkdir -p "$cache"
	tar -xJf /usr/src/linux-source-6.12.tar.xz -C "$cache" \
		--strip-components=1 linux-source-6.12/scripts/kernel-doc
	touch "$cache/.complete"
fi

header=include/uapi/linux/smbd.h
cd "$repo"
found=$(perl "$cache/scripts/kernel-doc" -none -Wall "$header" 2>&1 || true)
# kernel-doc checks the blocks there are; every structure must have one
for s in $(sed -n 's/^struct \([a-z_0-9]*\) {$/\1/p' "$header"); do
	grep -q "^ \* struct $s - " "$header" ||
		found="$found${found:+
}$header: struct $s has no kernel-doc comment"
done
n=$(printf '%s' "$found" | grep -c . || true)
[ -z "$found" ] || printf '%s\n' "$found"
structs=$(grep -c '^struct [a-z_0-9]* {$' "$header")
echo "kernel-doc -Wall ($version): $header, $structs structures documented, $n findings"
[ "$n" -eq 0 ]
