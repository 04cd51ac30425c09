#!/bin/sh
# Boot Debian's stock kernel in QEMU with the host root shared read-only and
# run one scenario (a shell script, relative to the repository) in it; the
# scenario finds the userspace build in $SMBD_BUILD (default: build).
# SMBD_VM_KERNEL names another kernel tree instead (root/boot/bzImage and
# root/lib/modules, as tools/e2e/kernel.sh makes) and SMBD_VM_DRIVER the
# smbdirect.ko built for it; SMBD_VM_ARGS adds smbd.* guest parameters.
# SMBD_VM_ROLE (server or client), SMBD_VM_NIC (QEMU's network options) and
# SMBD_VM_SHARED (a directory both guests write) make the guest one of the
# pair tools/vm/pair.sh boots.
# Fails when the scenario fails or the kernel logs a warning, BUG, oops,
# lockdep, refcount, KASAN, UBSAN or hung task report, or (on a kernel with
# kmemleak) leaves an unreferenced object after the module's unload; prints
# the scenario's output and, on failure, the tail of the guest's kernel log.
set -eu
[ $# -eq 1 ] || { echo "usage: $0 <scenario.sh>" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
if [ -n "${SMBD_VM_KERNEL:-}" ]; then
	kernel=$SMBD_VM_KERNEL
	abi=$(ls "$kernel/root/lib/modules")
	image=$kernel/root/boot/bzImage
else
	kernel=$("$here/kernel.sh")
	abi=$("$here/../kernel-abi.sh")
	image=$kernel/root/boot/vmlinuz-$abi
fi
driver=${SMBD_VM_DRIVER:-$repo/driver/smbdirect.ko}

work=$(mktemp -d)
trap '[ -n "${SMBD_VM_KEEP:-}" ] || rm -rf "$work"' EXIT
mkdir -p "$work/initramfs/bin" "$work/initramfs/lib/modules" "$work/out"
cp /bin/busybox "$work/initramfs/bin/"
cp "$here/initramfs-init" "$work/initramfs/init"
# the first stage needs only virtio, 9p and overlay from the cached kernel
# (modules of Debian's kernel, built into the debug one)
(cd "$kernel/root/lib/modules" && for d in drivers/virtio net/9p fs/9p \
	fs/netfs fs/fscache fs/overlayfs; do
		[ ! -d "$abi/kernel/$d" ] || echo "$abi/kernel/$d"
	done | xargs -r cp -r --parents -t "$work/initramfs/lib/modules/" &&
	cp --parents "$abi"/modules.dep "$abi"/modules.alias \
		"$abi"/modules.builtin "$work/initramfs/lib/modules/")
(cd "$work/initramfs" && find . | busybox cpio -o -H newc 2>/dev/null) |
	gzip -1 >"$work/initramfs.gz"

# TCG: this machine's /dev/kvm runs only special guests. --foreground:
# QEMU stays in this script's process group, which pair.sh's cleanup (and
# a terminal's ^C) signals; timeout would otherwise make a group of its own.
boot() {
	# shellcheck disable=SC2086 # the network options are split on purpose
	timeout --foreground "${SMBD_VM_TIMEOUT:-300}" qemu-system-x86_64 -machine accel=tcg \
		-m "${SMBD_VM_MEM:-2048}" -smp 2 -nographic -no-reboot \
		${SMBD_VM_NIC:--nic none} \
		-kernel "$image" -initrd "$work/initramfs.gz" \
		-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
		-virtfs local,path="$work/out",mount_tag=out,security_model=none,multidevs=remap \
		-virtfs local,path="${SMBD_VM_SHARED:-$work/out}",mount_tag=shared,security_model=none,multidevs=remap \
		-append "console=ttyS0 quiet panic=-1 oops=panic smbd.repo=$repo smbd.out=/smbd-out smbd.shared=/smbd-shared smbd.role=${SMBD_VM_ROLE:-} smbd.kernel=$kernel smbd.scenario=$1 smbd.build=${SMBD_BUILD:-build} smbd.driver=$driver ${SMBD_VM_ARGS:-}" \
		>"$work/console.log" 2>&1 || true
}
# Under TCG, Debian's 6.12 now and then dies of an int3 Oops while it
# patches its own text during boot, before any of the guest's stages ran
# (no setup.log): that boot says nothing about the scenario, and only it
# is tried again.
# A guest of a pair is not: its peer's QEMU does not connect again.
tries=1
boot "$1"
while [ -z "${SMBD_VM_ROLE:-}" ] && [ ! -e "$work/out/setup.log" ] &&
	[ $tries -lt 3 ] &&
	grep -q 'Oops\|Kernel panic' "$work/console.log"; do
	echo "vm: the guest kernel died while booting, before the scenario;" \
		"booting again:" >&2
	tr -d '\r' <"$work/console.log" | grep -m 3 'Oops\|RIP:\|Kernel panic' >&2
	tries=$((tries + 1))
	boot "$1"
done

cat "$work/out/scenario.log" 2>/dev/null || true
rc=$(cat "$work/out/rc" 2>/dev/null || echo none)
# Every report counts, whoever's code it is in: a warning or a KASAN report
# of other code is fixed in the test kernels (kernel-patches/), not left
# out, since the kernel makes a WARN_ONCE() or (without kasan_multi_shot) a
# KASAN report the last of its kind for the boot. A report ("cut here" ...
# "end trace", or a KASAN or UBSAN report between lines of "=") is kept
# whole in $work/out/reports.
problems=$(cat "$work/out/dmesg" "$work/console.log" "$work/out/kmemleak" \
	2>/dev/null |
	awk -v reports="$work/out/reports" '
		function flush() {
			printf "%s", block
			printf "%s", block >reports
			inblock = ""
		}
		{ sub(/\r$/, "") }	# the serial console ends lines with CR LF
		!inblock && /cut here/ { inblock = "trace"; block = $0 "\n"; next }
		!inblock && /^(\[ *[0-9]+\.[0-9]+\] )?==========*$/ {
			inblock = "frame"; block = $0 "\n"; next }
		inblock { block = block $0 "\n"
			if ((inblock == "trace" && /end trace/) ||
			    (inblock == "frame" && /==========*$/))
				flush()
			next }
		{ print }
		END { if (inblock) flush() }' |
	grep -E 'WARNING:|BUG:|Oops|general protection|possible circular locking|refcount_t:|UBSAN:|KASAN:|INFO: task .* blocked|unreferenced object|backtrace:|^    \[<' |
	head -n 12)
if [ -n "$problems" ]; then
	echo "vm: the kernel reported a problem:" >&2
	echo "$problems" >&2
	# the first reports whole: which code, from where
	head -n 80 "$work/out/reports" 2>/dev/null >&2 || true
	rc=splat
fi
if [ "$rc" != 0 ]; then
	echo "vm: scenario $1 failed (result: $rc)" >&2
	tail -n 30 "$work/out/setup.log" 2>/dev/null >&2 || true
	if [ -e "$work/out/dmesg" ]; then
		tail -n 40 "$work/out/dmesg" >&2
	else
		# the guest died (a panic, or the time limit): its console from
		# what killed it on, with the stacks
		died=$(tr -d '\r' <"$work/console.log" |
			sed -n '/INFO: task .* blocked\|Oops\|general protection\|Kernel panic/,$p' |
			head -n 400)
		if [ -n "$died" ]; then
			echo "$died" >&2
		else
			tail -n 40 "$work/console.log" >&2
		fi
	fi
	exit 1
fi
