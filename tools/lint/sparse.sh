#!/bin/sh
# sparse (make C=1) over the driver, built against each supported kernel's
# headers in $SMBD_BUILD/lint/sparse-<abi>; prints what it finds and fails
# on any warning or error.
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=${SMBD_BUILD:-$repo/build}
rc=0
for meta in $("$repo/tools/kernel-abi.sh" --supported); do
	abi=$("$repo/tools/kernel-abi.sh" "$meta")
	out=$build/lint/sparse-$abi
	"$repo/tools/build-driver.sh" "/usr/src/linux-headers-$abi" "$out" \
		C=1 >/dev/null
	found=$(grep -E ': (warning|error):' "$out/build.log" || true)
	[ -z "$found" ] || { printf '%s\n' "$found"; rc=1; }
	echo "sparse ($abi): $(grep -c '^  CHECK' "$out/build.log") files," \
		"$(printf '%s' "$found" | grep -c . || true) findings"
done
exit $rc
