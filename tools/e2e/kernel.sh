#!/bin/sh
# The e2e guest kernel: Debian's stock 6.1 kernel (tools/vm/kernel.sh) with
# what its packages leave out, built as out-of-tree modules against its
# headers from the image's own linux-source-6.1: the cifs client and ksmbd
# with SMB Direct on (fs/smb), soft-RoCE (drivers/infiniband/sw/rxe), both
# with the patches in kernel-patches/ applied, and soft-iWARP
# (tools/vm/siw.sh). They take the place of the stock cifs.ko, ksmbd.ko
# and rdma_rxe.ko in a module tree of its own, cached outside the checkout
# keyed by the kernel image, soft-iWARP, the patches and this script. Prints the
# cache directory: root/boot/bzImage, root/lib/modules, and build, the
# headers the driver is built against.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
abi=$("$here/../kernel-abi.sh")
case $abi in
6.1.*) ;;
*) echo "e2e-kernel: Debian's kernel is $abi; kernel-patches/ are for 6.1" >&2
	exit 1 ;;
esac
need_packages e2e-kernel "linux-headers-$abi" gcc make kmod xz-utils
stock=$("$here/../vm/kernel.sh")
headers=/usr/src/linux-headers-$abi
# the modules are built from the source and headers of the image booted
image_version=${stock##*_}
if [ "$(dpkg-query -W -f='${Version}' "linux-headers-$abi")" != "$image_version" ]; then
	echo "e2e-kernel: installing linux-headers-$abi $image_version, the image's" >&2
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--allow-downgrades --no-install-recommends \
		"linux-headers-$abi=$image_version" >/dev/null
fi
# The image's source is downloaded into the cache, not installed: the
# debug kernel and soft-iWARP build from the installed linux-source-6.1,
# which may be a newer upload than the image.
source_dir="$(cache_root)/linux-source/$image_version"
if [ ! -f "$source_dir/.complete" ]; then
	rm -rf "$source_dir"
	mkdir -p "$source_dir"
	{ (cd "$source_dir" && apt-get download -qq -o APT::Sandbox::User=root \
		"linux-source-6.1=$image_version") &&
		dpkg-deb -x "$source_dir"/linux-source-6.1_*.deb "$source_dir/root"; } ||
		{ echo "e2e-kernel: could not fetch linux-source-6.1 $image_version" >&2; exit 1; }
	rm -f "$source_dir"/*.deb
	touch "$source_dir/.complete"
fi
tarball=$source_dir/root/usr/src/linux-source-6.1.tar.xz
siw=$("$here/../vm/siw.sh" "$abi")
key=$( (basename "$stock"; sha256sum "$siw" | cut -c1-64
	cat "$0" "$here"/kernel-patches/*.patch) | sha256sum | cut -c1-16)
cache="$(cache_root)/e2e-kernel/${abi}_$key"
if [ -f "$cache/.complete" ]; then
	echo "$cache"
	exit 0
fi

rm -rf "$cache"
mkdir -p "$cache/src"
log=$cache/build.log
echo "e2e-kernel: building cifs and ksmbd with SMB Direct, and soft-RoCE, for $abi in $cache; log in $log" >&2
start=$(date +%s)
src=$cache/src
tar -xaf "$tarball" -C "$src" --strip-components=1 \
	linux-source-6.1/fs/smb linux-source-6.1/fs/internal.h \
	linux-source-6.1/drivers/infiniband/sw/rxe \
	linux-source-6.1/scripts/asn1_compiler.c \
	linux-source-6.1/include/linux/asn1.h \
	linux-source-6.1/include/linux/asn1_ber_bytecode.h
for p in "$here"/kernel-patches/*.patch; do
	patch -d "$src" -p1 --forward --quiet <"$p" ||
		{ echo "e2e-kernel: $p does not apply" >&2; exit 1; }
done
# The headers package has no ASN.1 compiler: generate the parsers kbuild
# would, so that it finds them made.
gcc -O2 -I"$src/include" -o "$src/asn1_compiler" "$src/scripts/asn1_compiler.c"
for a in "$src"/fs/smb/*/*.asn1; do
	"$src/asn1_compiler" "$a" "${a%.asn1}.asn1.c" "${a%.asn1}.asn1.h"
done
# kbuild takes the options from the command line, C from the defines
{
	make -C "$headers" M="$src/fs/smb/client" -j"$(nproc)" modules \
		CONFIG_CIFS=m CONFIG_CIFS_SMB_DIRECT=y \
		KCFLAGS=-DCONFIG_CIFS_SMB_DIRECT=1 &&
	make -C "$headers" M="$src/fs/smb/server" -j"$(nproc)" modules \
		CONFIG_SMB_SERVER=m CONFIG_SMB_SERVER_SMBDIRECT=y \
		KCFLAGS=-DCONFIG_SMB_SERVER_SMBDIRECT=1 &&
	make -C "$headers" M="$src/drivers/infiniband/sw/rxe" -j"$(nproc)" \
		modules CONFIG_RDMA_RXE=m
} >"$log" 2>&1 || { tail -n 40 "$log" >&2; exit 1; }
if grep 'WARNING: modpost' "$log" >&2; then
	echo "e2e-kernel: the modules do not link against $abi" >&2
	exit 1
fi

# The stock tree, linked (each file the tree changes is replaced, never
# written through), with the modules in the stock ones' places.
mods=$cache/root/lib/modules/$abi
mkdir -p "$cache/root/lib/modules" "$cache/root/boot"
# (copied where links cannot cross file systems)
cp -al "$stock/root/lib/modules/$abi" "$mods" || {
	rm -rf "$mods"
	cp -a "$stock/root/lib/modules/$abi" "$mods"
}
for f in "$mods"/modules.*; do
	cp --remove-destination "$stock/root/lib/modules/$abi/${f##*/}" "$f"
done
for m in fs/smb/client/cifs fs/smb/server/ksmbd \
	drivers/infiniband/sw/rxe/rdma_rxe; do
	# beside a stock module left in place, depmod could pick either
	[ -f "$mods/kernel/$m.ko" ] ||
		{ echo "e2e-kernel: $abi has no kernel/$m.ko to replace" >&2; exit 1; }
	rm "$mods/kernel/$m.ko"
	cp "$src/$m.ko" "$mods/kernel/$m.ko"
done
install -D -m 644 "$siw" "$mods/kernel/drivers/infiniband/sw/siw/siw.ko"
depmod -b "$cache/root" "$abi"
cp "$stock/root/boot/vmlinuz-$abi" "$cache/root/boot/bzImage"
ln -s "$headers" "$cache/build"
rm -rf "$src"
echo "e2e-kernel: built in $(($(date +%s) - start)) s" >&2
touch "$cache/.complete"
echo "$cache"
