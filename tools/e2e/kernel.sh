#!/bin/sh
# Build the e2e guest kernel from Debian's linux-source-6.1 (kernel.config
# merged into x86_64_defconfig + kvm_guest.config, the patches in
# kernel-patches/ applied) into a cache outside the checkout, keyed by the
# source package version and the hash of the config and patches. Prints the
# cache directory: boot/bzImage, lib/modules (root/), and build/, the tree
# out-of-tree modules (the driver) are built against. "kernel.sh debug"
# builds the debug kernel: kernel-debug.config merged on top.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
case "${1:-}" in
"") name=e2e-kernel; configs=$here/kernel.config ;;
debug) name=debug-kernel
	configs="$here/kernel.config $here/kernel-debug.config" ;;
*) echo "usage: $0 [debug]" >&2; exit 2 ;;
esac
. "$here/../lib.sh"

need_packages "e2e kernel" linux-source-6.1 bc bison flex libelf-dev \
	libssl-dev cpio rsync kmod xz-utils

version=$(dpkg-query -W -f='${Version}' linux-source-6.1)
# shellcheck disable=SC2086 # two paths without spaces
key=$( (echo "$version"; cat $configs;
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
	patch -p1 --forward --quiet <"$p" || { echo "e2e kernel: $p does not apply" >&2; exit 1; }
done
{
	make x86_64_defconfig kvm_guest.config
	# shellcheck disable=SC2086
	scripts/kconfig/merge_config.sh -m .config $configs
	make olddefconfig
} >"$log" 2>&1 || { tail -n 20 "$log" >&2; exit 1; }
# every option asked for must have survived the merge
# shellcheck disable=SC2086
missing=$(cat $configs | grep '^CONFIG_' | while read -r line; do
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
