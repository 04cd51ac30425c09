#!/bin/sh
# Fetch Debian's stock kernel (the ABI linux-image-amd64 depends on, the one
# the module is built for) into a cache outside the checkout, keyed by ABI
# and package version. Prints the cache directory.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
abi=$("$here/../kernel-abi.sh")
pkg="linux-image-$abi"
version=$(apt-cache show --no-all-versions "$pkg" | sed -n 's/^Version: //p')
cache="$(cache_root)/kernel/${abi}_$version"

if [ ! -f "$cache/.complete" ]; then
	rm -rf "$cache"
	mkdir -p "$cache/deb"
	(cd "$cache/deb" && apt-get download -qq -o APT::Sandbox::User=root "$pkg=$version")
	dpkg-deb -x "$cache"/deb/*.deb "$cache/root"
	depmod -b "$cache/root" "$abi"
	rm -rf "$cache/deb"
	touch "$cache/.complete"
fi
echo "$cache"
