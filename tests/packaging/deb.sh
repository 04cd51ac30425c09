#!/bin/sh
# The Debian packages make deb left in $1, checked as an installer sees
# them: each package holds what it should and nothing of another's, the
# DKMS package holds exactly the module's source as make dkms-source lays
# it out, the libraries' sonames match their packages, and lintian finds
# no error (its warnings are listed, and must be only those waived in
# debian/lintian-waived with the reason). make e2e installs them in the
# guest and runs the demo from them.
set -eu
[ $# -eq 1 ] || { echo "usage: $0 <dir of the packages>" >&2; exit 2; }
repo=$(cd "$(dirname "$0")/../.." && pwd)
. "$repo/tools/lib.sh"
need_packages deb-check lintian
debs=$(cd "$1" && pwd)
fail() { echo "deb-check: $*" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

version=$(dpkg-parsechangelog -l "$repo/debian/changelog" -S Version)
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -q DEB_HOST_MULTIARCH)
lib=usr/lib/$multiarch

# files <package>: the package's files (not directories), one per line
files() {
	deb=$(ls "$debs/${1}_${version}_"*.deb 2>/dev/null | head -n 1)
	[ -n "$deb" ] || fail "no package $1 $version"
	dpkg-deb --fsys-tarfile "$deb" | tar -t | sed 's|^\./||' | grep -v '/$' | sort
}
# expect <package> <path regex>...: each matches a file of the package,
# and every file matches one of them (or is its documentation)
expect() {
	p=$1
	shift
	files "$p" >"$work/$p.files"
	for re in "$@"; do
		grep -Eq "^$re\$" "$work/$p.files" || fail "$p has no $re"
	done
	printf '%s\n' "$@" "usr/share/doc/$p/.*" | sed 's/.*/^&$/' >"$work/$p.re"
	extra=$(grep -Evf "$work/$p.re" "$work/$p.files" || true)
	[ -z "$extra" ] || fail "$p holds files not its own: $extra"
}

src=usr/src/smbdirect-$version
expect smbdirect-dkms "$src/dkms.conf" "$src/driver/Kbuild" \
	"$src/driver/[a-z_0-9]+\.[ch]" "$src/driver/proto/[a-z_0-9]+\.[ch]" \
	"$src/include/uapi/linux/smbd\.h"
make -s -C "$repo" dkms-source DESTDIR="$work/dkms-source" >/dev/null
(cd "$work/dkms-source" && find . -type f | sed 's|^\./||' | sort) >"$work/want"
grep "^usr/src/" "$work/smbdirect-dkms.files" >"$work/got"
diff -u "$work/want" "$work/got" >"$work/diff" ||
	fail "the DKMS package is not make dkms-source's tree: $(cat "$work/diff")"
dpkg-deb -x "$debs/smbdirect-dkms_${version}_all.deb" "$work/dkms-pkg"
grep -q "^PACKAGE_VERSION=\"$version\"\$" "$work/dkms-pkg/$src/dkms.conf" ||
	fail "dkms.conf does not name version $version"
dpkg-deb -e "$debs/smbdirect-dkms_${version}_all.deb" "$work/dkms-ctl"
grep -q "^DKMS_NAME=smbdirect$" "$work/dkms-ctl/postinst" ||
	fail "smbdirect-dkms's postinst does not hand the module to DKMS"

for l in smbd smbd-tevent; do
	expect "lib$l"0 "$lib/lib$l\.so\.0" "$lib/lib$l\.so\.$version"
	dpkg-deb -e "$debs/lib${l}0_${version}_$arch.deb" "$work/lib$l-ctl"
	grep -q "^lib$l 0 lib${l}0" "$work/lib$l-ctl/shlibs" ||
		fail "lib${l}0 has no shlibs entry for lib$l.so.0"
done
expect libsmbd-dev "usr/include/libsmbd/libsmbd\.h" \
	"usr/include/libsmbd/libsmbd-tevent\.h" "usr/include/libsmbd/linux/smbd\.h" \
	"$lib/libsmbd\.so" "$lib/libsmbd-tevent\.so" \
	"$lib/pkgconfig/libsmbd\.pc" "$lib/pkgconfig/libsmbd-tevent\.pc"
expect smbdctl "usr/sbin/smbdctl" "usr/share/man/man8/smbdctl\.8\.gz"

# lintian: no error; a warning only if debian/lintian-waived names it
lintian --tag-display-limit 0 "$debs"/*.changes >"$work/lintian" 2>&1 || true
errors=$(grep -c '^E: ' "$work/lintian" || true)
[ "$errors" = 0 ] || fail "lintian: $(grep '^E: ' "$work/lintian")"
waived=$(sed -n 's/^\([a-z0-9-]*\) .*/\1/p' "$repo/debian/lintian-waived" | paste -sd'|')
unwaived=$(grep '^W: ' "$work/lintian" | grep -Ev ": (${waived:-none})( |\$)" || true)
[ -z "$unwaived" ] || fail "lintian warnings not waived: $unwaived"
warnings=$(grep -c '^W: ' "$work/lintian" || true)
echo "DEB $(ls "$debs"/*.deb | wc -l) packages of $version: contents as expected, lintian 0 errors, $warnings waived warnings"
