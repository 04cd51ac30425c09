#!/bin/sh
# What a guest run with Samba and the cifs client needs, built or taken
# from the caches: cifs-utils and ksmbd-tools on the host (the guest runs
# the host's userland), the guest kernel ("debug" as $1: the debug kernel),
# Samba with samba-patches/ and the module for that kernel. Prints three
# lines: the kernel tree, the Samba prefix and the module.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=${SMBD_BUILD:-$repo/build}
. "$repo/tools/lib.sh"

need_packages e2e cifs-utils

"$here/ksmbd-tools.sh" >&2
kernel=$("$here/kernel${1:+-$1}.sh")
samba=$("$repo/samba-patches/build.sh")
driver=$("$repo/tools/build-driver.sh" "$kernel/build" "$build/${1:-e2e}/driver")
printf '%s\n%s\n%s\n' "$kernel" "$samba" "$driver"
