#!/bin/sh
# Build the debug guest kernel (make check-debug) from Debian's
# linux-source-6.1 (kernel-debug.config merged into x86_64_defconfig +
# kvm_guest.config, the patches in kernel-patches/ applied) into a cache
# outside the checkout, keyed by the source package version and the hash of
# the config and patches. Prints the cache directory: root/boot/bzImage,
# root/lib/modules, and build/, the tree out-of-tree modules (the driver)
# are built against.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
name=debug-kernel
config=$here/kernel-debug.config
. "$here/../lib.sh"

need_packages "$name" linux-source-6.1 bc bison flex libelf-dev \
	libssl-dev cpio rsync kmod xz-utils

version=$(dpkg-query -W -f='${Version}' linux-source-6.1)
key=$( (echo "$version"; cat "$0" "$config";
	cat "$here"/kernel-patches/*.patch 2>/dev/null) | sha256sum | cut -c1-16)
cache="$(cache_root)/$name/${version}_$key"
if [ -f "$cache/.complete" ]; then
	echo "$cache"
	exit 0
fi

rm -rf "$cache"
mkdir -p "$cache"
log=$cache/build.log
echo "$name: building linux-source $version (config $key) in $cache; log in $log" >&2
start=$(date +%s)
tar -xaf /usr/src/linux-source-6.1.tar.xz -C "$cache"
mv "$cache/linux-source-6.1" "$cache/build"
cd "$cache/build"
for p in "$here"/kernel-patches/*.patch; do
	[ -f "$p" ] || continue
	patch -p1 --forward --quiet <"$p" || { echo "$name: $p does not apply" >&2; exit 1; }
done
{
	make x86_64_defconfig kvm_guest.config
	scripts/kconfig/merge_config.sh -m .config "$config"
	make olddefconfig
} >"$log" 2>&1 || { tail -n 20 "$log" >&2; exit 1; }
# every option asked for must have survived the merge
missing=$(grep '^CONFIG_' "$config" | while read -r line; do
	grep -qx "$line" .config || echo "$line"
done)
[ -z "$missing" ] || { echo "$name: options not taken: $missing" >&2; exit 1; }
make -j"$(nproc)" bzImage modules >>"$log" 2>&1 ||
	{ tail -n 40 "$log" >&2; exit 1; }
make modules_install INSTALL_MOD_PATH="$cache/root" >>"$log" 2>&1
mkdir -p "$cache/root/boot"
cp arch/x86/boot/bzImage "$cache/root/boot/bzImage"
echo "$name: built in $(( $(date +%s) - start )) s" >&2
touch "$cache/.complete"
echo "$cache"
