#!/bin/sh
# Debian's Samba source of one release line (apt-get source samba; a
# deb-src entry is added when there is none), that line's series applied,
# built with the trimmed configure below against libsmbd and installed
# into a prefix, with libsmbd beside it. The line is the argument or
# SMBD_SAMBA_LINE: 4.17 (Debian 12) or 4.22 (Debian 13), by default the
# machine's own release's; its series is samba-patches/<line>/.
# --default-line prints that default, --lines every line. --bisect (before
# or after the line) builds every prefix of the series in turn (patch 1,
# patches 1-2, ...), in a tree of its own and without installing, and
# stops at the first that does not build, or warns in a file of the
# series: each patch must build on its own. The build is cached outside
# the checkout: one tree per source version and configure flags, rebuilt
# incrementally when the patches or libsmbd's interface change; the
# pristine source is cached once per version. libsmbd itself is installed
# again at every run, so the prefix has the tree's library. Prints the
# prefix (sbin/smbd, bin/pdbedit, lib/).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
. "$repo/tools/lib.sh"
cache_root=$(cache_root)

# the machine's release's line, 4.17 on another (the guests run this
# machine's userland)
case $(. /etc/os-release && echo "$VERSION_CODENAME") in
trixie) default_line=4.22 ;;
*) default_line=4.17 ;;
esac
# the lines, each with the Debian release whose Samba it is
lines="4.17:bookworm 4.22:trixie"
usage() {
	echo "usage: $0 [--default-line | --lines | [--bisect] [line] | [line] --bisect]" >&2
	exit 2
}
case ${1:-} in
--default-line) [ $# = 1 ] || usage; echo "$default_line"; exit 0 ;;
--lines) [ $# = 1 ] || usage; echo "$lines" | sed 's/:[a-z]*//g'; exit 0 ;;
esac
bisect= line=
for a in "$@"; do
	case $a in
	--bisect) [ -z "$bisect" ] || usage; bisect=-bisect ;;
	-*) usage ;;
	*) [ -z "$line" ] || usage; line=$a ;;
	esac
done
line=${line:-${SMBD_SAMBA_LINE:-$default_line}}
suite=
case $line in
*[!0-9.]* | '') ;;
*) suite=$(echo "$lines" | tr ' ' '\n' | sed -n "s/^$(echo "$line" | sed 's/\./\\./'):\(.*\)/\1/p") ;;
esac
if [ -z "$suite" ]; then
	echo "samba: no series for Samba '$line'; the lines, with their Debian release: $lines" >&2
	exit 2
fi
series=$here/$line

# what the trimmed configure needs (reference: bison, flex, gnutls, krb5
# for --with-system-mitkrb5, yapp for pidl; system talloc, tevent, tdb and
# popt and cmocka instead of the bundled copies; acl support for a real
# file server; liburing for the io_uring VFS module, which Debian builds
# and ships and which must work with the pool too; jansson for smbstatus
# --json)
PKGS="dpkg-dev build-essential python3 pkg-config bison flex perl
libparse-yapp-perl libjson-perl libgnutls28-dev zlib1g-dev libicu-dev
libreadline-dev libtasn1-6-dev libtasn1-bin libkrb5-dev libacl1-dev
libtalloc-dev libtevent-dev libtdb-dev libpopt-dev libbsd-dev libcmocka-dev
liburing-dev libjansson-dev"
has_src() {
	grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list \
		/etc/apt/sources.list.d/
}
if ! has_src; then
	echo "samba: adding deb-src entries for the configured deb ones" >&2
	list=/etc/apt/sources.list.d/smbdirect-deb-src
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		sed -n 's/^Types: deb$/Types: deb-src/; /^Types: deb-src/,/^$/p' "$f"
	done | as_root tee "$list.sources" >/dev/null
	sed -n 's/^deb \(.*\)/deb-src \1/p' /etc/apt/sources.list 2>/dev/null |
		as_root tee "$list.list" >/dev/null
	as_root apt-get update -qq
fi
# shellcheck disable=SC2086 # the package list is split on purpose
need_packages samba $PKGS

# the newest of the line from its Debian release: not a backport (the
# archive drops a backport's source once a newer one replaces it, while
# the index may still list it); when no source offers the line, the source
# of its release is added (deb-src only: no binary package comes from it)
line_version() {
	apt-cache showsrc samba | sed -n 's/^Version: //p' | grep -v '~bpo' |
		grep "^\([0-9]*:\)\?$(echo "$line" | sed 's/\./\\./')\." |
		sort -V | tail -n 1
}
version=$(line_version)
if [ -z "$version" ]; then
	echo "samba: adding the Samba source of Debian $suite" >&2
	add_apt_source "$suite-src" deb-src "$suite"
	version=$(line_version)
fi
if [ -z "$version" ]; then
	echo "samba: expected Samba $line from Debian $suite, the sources offer:" \
		"$(apt-cache showsrc samba | sed -n 's/^Version: //p' | tr "\n" " ")" >&2
	exit 1
fi
# no epoch in paths: make and waf take a colon for a separator
dir_version=${version#*:}
src="$cache_root/samba-src/$dir_version"
if [ ! -f "$src/.complete" ]; then
	rm -rf "$src"
	mkdir -p "$src"
	echo "samba: fetching the source of samba $version" >&2
	(cd "$src" && apt-get source -qq --download-only \
		-o APT::Sandbox::User=root "samba=$version" >/dev/null &&
		dpkg-source -x --skip-debianization ./*.dsc tree >/dev/null 2>&1 ||
		dpkg-source -x ./*.dsc tree >/dev/null)
	touch "$src/.complete"
fi

# talloc, tevent and tdb come from the system, at least the versions the
# source bundles (Debian 12 has those of 4.22 in its backports)
for lib in talloc tevent tdb; do
	need=$(sed -n "s/^VERSION = '\(.*\)'/\1/p" "$src/tree/lib/$lib/wscript")
	have=$(dpkg-query -W -f='${Version}' "lib$lib-dev" 2>/dev/null | sed 's/^[0-9]*://')
	dpkg --compare-versions "${have:-0}" ge "$need" && continue
	codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
	echo "samba: $line needs lib$lib $need, installing it from $codename-backports" >&2
	if apt-cache policy | grep -q "$codename-backports"; then
		as_root apt-get update -qq
	else
		add_apt_source "$codename-backports" deb "$codename-backports"
	fi
	# --no-remove: never at the cost of a package the machine has
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-remove --no-install-recommends -t "$codename-backports" \
		libtalloc-dev libtevent-dev libtdb-dev >/dev/null
	have=$(dpkg-query -W -f='${Version}' "lib$lib-dev" | sed 's/^[0-9]*://')
	dpkg --compare-versions "$have" ge "$need" ||
		{ echo "samba: got lib$lib $have, $line needs $need" >&2; exit 1; }
done

# smbstatus --json, which shows each channel's transport from 4.22 on
# (its patch 0017); 4.17's lists no channels
json=--with-json
[ "$line" != 4.17 ] || json=--without-json
FLAGS="--without-ad-dc --with-system-mitkrb5 --without-ads --without-ldap
--disable-python --without-systemd --without-pam --without-winbind
--disable-cups --disable-iprint $json --without-libarchive
--disable-avahi --disable-spotlight --without-quotas --without-utmp
--without-automount --without-fam --without-regedit --without-ldb-lmdb
--without-gpgme --disable-glusterfs --disable-cephfs --without-dmapi
--without-smb1-server --without-lttng --without-gettext --without-libunwind
--without-profiling-data --without-cluster-support
--bundled-libraries=NONE,ldb
--with-shared-modules=!vfs_snapper,!vfs_btrfs,!vfs_virusfilter"
# One build tree per source version and flags, kept between runs: the
# series is applied afresh to its pristine state (a git commit), so a
# changed patch rebuilds only the files whose contents changed.
tree_key=$( (echo "$version"; echo "$FLAGS") | sha256sum | cut -c1-16)
tree="$cache_root/samba/${dir_version}_$tree_key$bisect"
prefix="$tree/prefix"
key=$(cat "$series"/*.patch "$repo"/libsmbd/include/*.h \
	"$repo"/include/uapi/linux/smbd.h | sha256sum | cut -c1-16)
# built in this checkout's build tree: a cmake tree belongs to one source
libsmbd_build="${SMBD_BUILD:-$repo/build}/samba-libsmbd-$line$bisect"
install_libsmbd() {
	mkdir -p "$libsmbd_build"
	make -C "$repo" --no-print-directory install PREFIX="$prefix" \
		INSTALL_BUILD="$libsmbd_build" >"$libsmbd_build.log" 2>&1 ||
		{ tail -n 40 "$libsmbd_build.log" >&2; exit 1; }
}
if [ -z "$bisect" ] && [ "$(cat "$tree/.installed" 2>/dev/null)" = "$key" ]; then
	install_libsmbd
	echo "$prefix"
	exit 0
fi
git_() { git -c user.name=build -c user.email=build@localhost "$@"; }
if [ ! -f "$tree/.pristine" ]; then
	rm -rf "$tree"
	mkdir -p "$(dirname "$tree")"
	cp -a "$src/tree" "$tree"
	# what configure, the build and this script leave survives a clean
	(cd "$tree" && git_ init -q &&
		printf '%s\n' /bin /.lock-wscript /compile_commands.json \
			/prefix /build.log /.pristine /.configured /.installed \
			'*.pyc' >.git/info/exclude &&
		git_ add -A && git_ commit -qm pristine)
	touch "$tree/.pristine"
fi
cd "$tree"
rm -f .installed
count=$(find "$series" -maxdepth 1 -name '*.patch' | wc -l)
# apply_series <n>: the tree as the first <n> patches of the series leave
# the pristine source; the last one applied is $p
apply_series() {
	git_ reset -q --hard
	git_ clean -qfd
	i=0
	for p in "$series"/*.patch; do
		patch -p1 --forward --quiet <"$p" || { echo "samba: $p does not apply" >&2; exit 1; }
		i=$((i + 1))
		[ "$i" -lt "$1" ] || break
	done
}
log="$tree/build.log"
# build <make target>: configured again (so built again) when the build
# files changed, or talloc, tevent or tdb under them (waf does not track
# the system's headers); a failure prints the log's end
build() {
	conf_key=$( (cat wscript source3/wscript "$prefix/lib/pkgconfig/libsmbd-tevent.pc"
		dpkg-query -W -f='${Version}\n' libtalloc-dev libtevent-dev libtdb-dev) |
		sha256sum | cut -c1-16)
	: >"$log"
	rm -f bin/default/source3/test_smbdirect_*
	if [ "$(cat .configured 2>/dev/null)" != "$conf_key" ]; then
		# shellcheck disable=SC2086 # the flags are split on purpose
		PKG_CONFIG_PATH="$prefix/lib/pkgconfig" ./configure --prefix="$prefix" \
			--with-smbdirect $FLAGS >>"$log" 2>&1 ||
			{ tail -n 40 "$log" >&2; return 1; }
		echo "$conf_key" >.configured
	fi
	# -j reaches waf only through make's flags
	make -j"$(nproc)" "$1" >>"$log" 2>&1 || { tail -n 40 "$log" >&2; return 1; }
}
# unit_tests: the series' cmocka tests (source3/smbd/test_smbdirect_*.c),
# in the trees whose patches have them; a failure fails the build. waf
# builds bin/default/source3/<test> for "all" and <test>.inst (which finds
# the installed libraries) for "install"; build() removes both first, so a
# test left from another prefix of the series never runs. Samba's selftest
# runs them too, but this build has no selftest.
unit_tests() {
	for test_src in source3/smbd/test_smbdirect_*.c; do
		[ -e "$test_src" ] || continue
		test_bin=bin/default/source3/$(basename "$test_src" .c)
		[ -e "$test_bin" ] || test_bin=$test_bin.inst
		# subunit output, whatever the environment asks of cmocka
		test_out=$(env -u CMOCKA_MESSAGE_OUTPUT -u CMOCKA_XML_FILE \
			"$test_bin" 2>&1) || {
			printf '%s\n' "$test_out" >&2
			echo "samba: $test_bin failed" >&2
			return 1
		}
		passed=$(printf '%s\n' "$test_out" | grep -c '^success:') || {
			printf '%s\n' "$test_out" >&2
			echo "samba: $test_bin ran no test" >&2
			return 1
		}
		echo "samba: $test_bin: $passed passed" >&2
	done
}
install_libsmbd
if [ -n "$bisect" ]; then
	# the files the series changes, as a pattern
	touched=$(sed -n 's|^+++ b/||p' "$series"/*.patch | sort -u | sed 's/\./\\./g' | paste -sd '|')
	# the first patch adds --with-smbdirect: there is no build before it
	n=1
	while [ "$n" -le "$count" ]; do
		apply_series "$n"
		p=$(basename "$p")
		start=$(date +%s)
		build all || { echo "samba-bisect: $line $n/$count $p does not build; log in $log" >&2; exit 1; }
		unit_tests || { echo "samba-bisect: $line $n/$count $p fails its unit tests" >&2; exit 1; }
		# a warning in a file of the series fails the patch too
		# (Samba's default flags warn about little: no -Wall)
		if grep -E "^(\.\./)*($touched):[0-9]+:[0-9]+: warning:" "$log" >&2; then
			echo "samba-bisect: $line $n/$count $p builds with warnings; log in $log" >&2
			exit 1
		fi
		echo "samba-bisect: $line $n/$count $p built in $(( $(date +%s) - start )) s"
		n=$((n + 1))
	done
	exit 0
fi
apply_series "$count"
echo "samba: building and installing in $tree; log in $log" >&2
start=$(date +%s)
# waf's install builds first
build install || exit 1
unit_tests || exit 1
echo "samba: built and installed in $(( $(date +%s) - start )) s" >&2
echo "$key" >.installed
echo "$prefix"
