#!/bin/sh
# make deb: the Debian packages from the checkout as it is (the files git
# tracks or would, with their changes), built in $1/src and left in $1:
# smbdirect-dkms, libsmbd0, libsmbd-tevent0, libsmbd-dev and smbdctl; kept
# while those files do not change. Installs the build dependencies
# debian/control names; prints the packages.
set -eu
[ $# -eq 1 ] || { echo "usage: $0 <output dir>" >&2; exit 2; }
repo=$(cd "$(dirname "$0")/../.." && pwd)
. "$repo/tools/lib.sh"
out=$(mkdir -p "$1" && cd "$1" && pwd)

need_packages deb dpkg-dev debhelper dh-dkms cmake pkgconf libtalloc-dev \
	libtevent-dev fakeroot
version=$(dpkg-parsechangelog -l "$repo/debian/changelog" -S Version)
upstream=$(sed -n '/^project/s/.* VERSION \([0-9.]*\).*/\1/p' "$repo/CMakeLists.txt")
[ "$version" = "$upstream" ] || {
	echo "deb: debian/changelog is at $version, CMakeLists.txt at $upstream" >&2
	exit 1
}

# the files to package: what git tracks or would, as they are now
files() {
	(cd "$repo" && git ls-files -z -co --exclude-standard |
		xargs -0 sh -c 'for f; do [ ! -e "$f" ] && [ ! -L "$f" ] || echo "$f"; done' -)
}
# packages built from exactly these files are kept (make e2e after make
# check): the stamp is the hash of the names and contents
stamp=$(files | (cd "$repo" && xargs -d '\n' sha256sum) | sha256sum | cut -c1-16)
if [ -f "$out/.source-$stamp" ] && ls "$out"/*.deb >/dev/null 2>&1; then
	ls "$out"/*.deb
	exit 0
fi

rm -rf "$out/src" "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo \
	"$out"/.source-*
src=$out/src/smbdirect-$version
mkdir -p "$src"
files | (cd "$repo" && xargs -d '\n' cp -P --parents -t "$src")
# no -dbgsym packages: the five are what an administrator installs
(cd "$src" && dpkg-checkbuilddeps &&
	DEB_BUILD_OPTIONS="noddebs ${DEB_BUILD_OPTIONS:-}" \
	dpkg-buildpackage -b -us -uc -j"$(nproc)") >"$out/build.log" 2>&1 ||
	{ tail -n 40 "$out/build.log" >&2; exit 1; }
mv "$out/src"/*.deb "$out/src"/*.changes "$out/src"/*.buildinfo "$out"
touch "$out/.source-$stamp"
ls "$out"/*.deb
