#!/bin/sh
# The DKMS source (make dkms-source) as an administrator uses it: dkms add,
# build and install for each supported kernel, in trees of its own (the
# host's DKMS tree and /lib/modules are left alone). Checks that each
# module landed where modprobe looks and was built for that kernel.
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd)
. "$repo/tools/lib.sh"
# the ABIs once: installing a package refreshes the apt lists, after
# which Debian's current kernel may be another
abis=
for meta in $("$repo/tools/kernel-abi.sh" --supported); do
	abis="$abis $("$repo/tools/kernel-abi.sh" "$meta")"
done
# shellcheck disable=SC2046,SC2086 # one package each
need_packages dkms dkms $(for abi in $abis; do echo "linux-headers-$abi"; done)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# as the README's commands take it: the name it prints
module=$(make -s --no-print-directory -C "$repo" dkms-source DESTDIR="$work/root")
src=$work/root/usr/src
version=${module#smbdirect/}
[ "$module" = "smbdirect/$version" ] && [ -d "$src/smbdirect-$version" ] ||
	{ echo "dkms: make dkms-source printed '$module', not the smbdirect/<version> of $(ls "$src")" >&2; exit 1; }
dkms() {
	command dkms --sourcetree "$src" --dkmstree "$work/dkms" \
		--installtree "$work/modules" "$@"
}
mkdir -p "$work/dkms" "$work/modules"
dkms add "$module" >/dev/null
for abi in $abis; do
	dkms build -m smbdirect -v "$version" -k "$abi" >"$work/build.log" 2>&1 ||
		{ cat "$work/build.log"; exit 1; }
	mkdir -p "$work/modules/$abi"
	dkms install -m smbdirect -v "$version" -k "$abi" --no-depmod \
		>>"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
	ko=$(find "$work/modules/$abi" -name 'smbdirect.ko*' | head -n 1)
	[ -n "$ko" ] || { echo "dkms: no smbdirect.ko installed for $abi" >&2; exit 1; }
	magic=$(modinfo -F vermagic "$ko")
	case $magic in
	"$abi "*) ;;
	*) echo "dkms: $ko is for '$magic', not $abi" >&2; exit 1 ;;
	esac
	echo "DKMS smbdirect/$version $abi PASS ${ko#"$work/modules/"}"
done
