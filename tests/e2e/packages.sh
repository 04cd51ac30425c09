#!/bin/sh
# make e2e, in a guest started without the module: the Debian packages of
# make deb installed as an administrator installs them, then the demo run
# from them. DKMS builds smbdirect.ko for the running kernel at install,
# modprobe finds it, smbd loads libsmbd from libsmbd0 (Samba's prefix keeps
# no copy of its own here), smbdctl reports; then an e2e scenario checks
# the data. One line per step: PKG <step> PASS|FAIL <detail>.
set -u
. "$SMBD_REPO/tests/e2e/lib.sh"
abi=$(uname -r)
multiarch=$(dpkg-architecture -q DEB_HOST_MULTIARCH)
kernel=$(sed -n 's/.*smbd\.kernel=\([^ ]*\).*/\1/p' /proc/cmdline)
debs=$SMBD_BUILD/deb
step() { echo "PKG $1 $2 $3"; [ "$2" = PASS ] || exit 1; }

# no udev in the guest: the links DKMS's process substitutions need
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
export DEBIAN_FRONTEND=noninteractive
# the guest kernel as if installed: its build tree where its headers
# package would put it, and /boot with its config alone (the host's
# kernels there are not this machine's; DKMS would build for the newest)
ln -sfn "$kernel/build" "/lib/modules/$abi/build"
mount -t tmpfs boot /boot
cp "$kernel/build/.config" "/boot/config-$abi"
dpkg -i "$debs"/smbdirect-dkms_*.deb "$debs"/libsmbd0_*.deb \
	"$debs"/libsmbd-tevent0_*.deb "$debs"/libsmbd-dev_*.deb \
	"$debs"/smbdctl_*.deb >/tmp/dpkg.log 2>&1 ||
	{ cat /tmp/dpkg.log; step install FAIL "dpkg -i failed"; }
status=$(dkms status smbdirect)
case $status in
*"$abi"*installed*) step install PASS "$(ls "$debs"/*.deb | wc -l) packages; dkms: $status" ;;
*) cat /tmp/dpkg.log; step install FAIL "dkms: $status" ;;
esac

modprobe smbdirect || step modprobe FAIL "modprobe smbdirect failed"
ko=$(modinfo -n smbdirect)
case $ko in
*/updates/dkms/*) step modprobe PASS "$ko" ;;
*) step modprobe FAIL "loaded from $ko, not from DKMS" ;;
esac

rm -f "$SMBD_SAMBA"/lib/libsmbd.so* "$SMBD_SAMBA"/lib/libsmbd-tevent.so*
# (/lib is /usr/lib on Debian 12)
libs=$(ldd "$SMBD_SAMBA/sbin/smbd" |
	grep -E "libsmbd(-tevent)?\.so\.0 => (/usr)?/lib/$multiarch/" |
	awk '{ print $3 }')
[ "$(echo "$libs" | wc -l)" = 2 ] || step libsmbd FAIL "smbd does not load libsmbd from the packages: $(ldd "$SMBD_SAMBA/sbin/smbd" | grep 'libsmbd[.-]')"
for l in $libs; do
	dpkg -S "$(readlink -f "$l")" >/dev/null 2>&1 ||
		dpkg -S "/usr$(readlink -f "$l")" >/dev/null 2>&1 ||
		step libsmbd FAIL "$l belongs to no package"
done
step libsmbd PASS "smbd loads $(echo "$libs" | paste -sd' ') from libsmbd0 and libsmbd-tevent0"

sh "$SMBD_REPO/tools/demo/samba-demo.sh" >/tmp/demo.log 2>&1 ||
	{ cat /tmp/demo.log; step demo FAIL "the demo failed"; }
cat /tmp/demo.log
sums=$(sed -n 's/^\([0-9a-f]\{32\}\)  .*/\1/p' /tmp/demo.log | sort -u | wc -l)
read_bytes=$(sed -n 's/^RDMA READ by the driver.*: \([0-9]*\) bytes/\1/p' /tmp/demo.log)
[ "$sums" = 1 ] && [ "${read_bytes:-0}" -gt 0 ] ||
	step demo FAIL "checksums differ or no RDMA READ ($read_bytes bytes)"
step demo PASS "one checksum for the file written and read back; $read_bytes bytes by RDMA READ"

json=$(smbdctl --json) || step smbdctl FAIL "smbdctl failed"
echo "$json" | grep -q '"negotiated": *[1-9]' ||
	step smbdctl FAIL "no negotiated connection in: $json"
step smbdctl PASS "$(command -v smbdctl) sees $(echo "$json" | sed -n 's/.*"negotiated": *\([0-9]*\).*/\1/p') negotiated connections"

# the demo's data file, for the scenario, which starts on an empty share
rm -rf "${E2E_DIR:?}/share/"*
E2E_BIG_MB=16
E2E_BIG_SUM=$(md5sum <"$E2E_DIR/big")
run_scenario rdma-3.1.1 rdma_files "rdma,vers=3.1.1" 1 rdma
e2e_teardown
[ "$E2E_FAILED" = 0 ] || step e2e FAIL "the scenario failed"
step e2e PASS "files through the packaged driver and library by RDMA"
