#!/bin/sh
# The tree `make install` produced under $1/root for prefix $2, checked as
# a consumer sees it: the files, the sonames and the exported symbols, and
# C programs built from the installed headers with pkg-config. Leaves
# $1/consumer and $1/consumer-tevent for the guest (tests/vm/install.sh),
# which runs them against the real device.
set -eu
out=$1
prefix=$2
root=$out/root
here=$(cd "$(dirname "$0")" && pwd)
fail() { echo "install-check: $*" >&2; exit 1; }

pcdir=$(dirname "$(find "$root$prefix" -name libsmbd.pc | head -n 1)")
[ -f "$pcdir/libsmbd.pc" ] || fail "no libsmbd.pc under $root$prefix"
for h in libsmbd.h libsmbd-tevent.h linux/smbd.h; do
	[ -f "$root$prefix/include/libsmbd/$h" ] || fail "header $h not installed"
done
export PKG_CONFIG_PATH="$pcdir" PKG_CONFIG_SYSROOT_DIR="$root"
libdir=$(dirname "$pcdir")
for lib in smbd smbd-tevent; do
	so=$libdir/lib$lib.so
	[ -L "$so" ] || fail "no development link lib$lib.so"
	soname=$(readelf -d "$so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
	[ "$soname" = "lib$lib.so.0" ] || fail "lib$lib.so has soname '$soname'"
	[ -f "$libdir/$soname" ] || fail "$soname not installed"
	prefix_ok=smbd_dev_
	[ $lib = smbd-tevent ] && prefix_ok=smbd_tevent_
	# nothing but the API is exported: no C++ internals, no sanitizers
	bad=$(nm -D --defined-only "$so" | awk '$2 == "T" || $2 == "D" || $2 == "B" { print $3 }' |
		grep -v "^$prefix_ok" || true)
	[ -z "$bad" ] || fail "lib$lib.so exports more than its API: $bad"
	if readelf -d "$so" | grep -q 'NEEDED.*libasan'; then
		fail "lib$lib.so is built with a sanitizer"
	fi
done

cc=${CC:-cc}
# shellcheck disable=SC2046 # pkg-config prints flags to be split
$cc -std=c99 -Wall -Wextra -Werror -pedantic -o "$out/consumer" \
	"$here/consumer.c" $(pkg-config --cflags --libs libsmbd)
# shellcheck disable=SC2046
$cc -std=c99 -Wall -Wextra -Werror -o "$out/consumer-tevent" \
	"$here/consumer_tevent.c" $(pkg-config --cflags --libs libsmbd-tevent)

# on the host there is no device: the message must say what to do
msg=$(LD_LIBRARY_PATH=$libdir "$out/consumer" /nonexistent/smbd) && rc=0 || rc=$?
[ "$rc" = 2 ] || fail "consumer without a device exited $rc: $msg"
echo "$msg" | grep -q "load the module" || fail "unhelpful message: $msg"
echo "$libdir" >"$out/libdir"
echo "INSTALL libsmbd into $prefix: headers, libsmbd.so.0 and libsmbd-tevent.so.0 (API symbols only), pkg-config; C99 consumers built and run"
