#!/bin/sh
# A kernel that builds its own smbdirect module (Linux 7.1,
# CONFIG_SMB_COMMON_SMBDIRECT) must get this one as smbdirect_samba.ko,
# from Kbuild and from DKMS alike, and DKMS builds drop -Werror. Proven on
# a copy of the 6.12 header tree with the option set, against the tree as
# it is.
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd)
abi=$("$repo/tools/kernel-abi.sh" linux-image-6.12-amd64)
real=/usr/src/linux-headers-$abi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "module-name: $*" >&2; exit 1; }

# the copy: its links made absolute, the option set as Kconfig would
fake=$work/linux-headers-$abi
cp -a "$real" "$fake"
for l in $(find "$fake" -maxdepth 1 -type l); do
	ln -sfn "$(readlink -f "$real/$(basename "$l")")" "$l"
done
echo CONFIG_SMB_COMMON_SMBDIRECT=m >>"$fake/.config"
echo CONFIG_SMB_COMMON_SMBDIRECT=m >>"$fake/include/config/auto.conf"
echo '#define CONFIG_SMB_COMMON_SMBDIRECT_MODULE 1' \
	>>"$fake/include/generated/autoconf.h"

# Kbuild: the module's name and file follow the option
ko=$("$repo/tools/build-driver.sh" "$fake" "$work/fake")
[ "$(basename "$ko")" = smbdirect_samba.ko ] ||
	fail "built $ko where the kernel has its own smbdirect"
[ "$(modinfo -F name "$ko")" = smbdirect_samba ] ||
	fail "$ko calls itself $(modinfo -F name "$ko")"
[ ! -e "$work/fake/driver/smbdirect.ko" ] || fail "smbdirect.ko built too"
ko=$("$repo/tools/build-driver.sh" "$real" "$work/real")
[ "$(basename "$ko")" = smbdirect.ko ] || fail "built $ko on $abi"

# warnings: errors in make check's build, not in DKMS's
grep -Eq -- '(^| )-Werror( |$)' "$work/real/driver/.main.o.cmd" ||
	fail "make check's build lost -Werror"
"$repo/tools/build-driver.sh" "$real" "$work/dkms" SMBD_WERROR=0 >/dev/null
! grep -Eq -- '(^| )-Werror( |$)' "$work/dkms/driver/.main.o.cmd" ||
	fail "SMBD_WERROR=0 still builds with -Werror"

# DKMS sources dkms.conf with kernel_source_dir set
name() {
	bash -c '. "$1"; echo "${BUILT_MODULE_NAME[0]} $MAKE"' sh "$1"
}
make -s -C "$repo" dkms-source DESTDIR="$work/root" >/dev/null
conf=$(echo "$work"/root/usr/src/smbdirect-*/dkms.conf)
sed "1i kernel_source_dir=$fake" "$conf" >"$work/fake.conf"
sed "1i kernel_source_dir=$real" "$conf" >"$work/real.conf"
case $(name "$work/fake.conf") in
"smbdirect_samba "*SMBD_WERROR=0*) ;;
*) fail "DKMS on the tree with the option: $(name "$work/fake.conf")" ;;
esac
case $(name "$work/real.conf") in
"smbdirect "*SMBD_WERROR=0*) ;;
*) fail "DKMS on $abi: $(name "$work/real.conf")" ;;
esac
echo "MODULE-NAME PASS smbdirect_samba.ko where the kernel has CONFIG_SMB_COMMON_SMBDIRECT, smbdirect.ko on $abi; -Werror in make check only"
