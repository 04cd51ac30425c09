# smbdirect: SMB Direct for Samba, terminated in a Linux kernel driver.
#
#   make demo     the main job: in the e2e guest with soft-RoCE, Samba's
#                 smbd (samba-patches/) serves a share through the driver
#                 and the Linux cifs client mounts it with -o rdma
#   make demo-responder  the driver alone on Debian's stock kernel, driven
#                 by the smbd-side responder and the SMB Direct client tool
#                 through both connection flows
#   make e2e      the end-to-end tests: the patched smbd of each Samba
#                 line in SAMBA_LINES (the machine's release's: 4.17 on
#                 Debian 12; "4.17 4.22" adds Debian 13's)
#                 and the driver against the unmodified Linux cifs client
#                 (both dialects, multichannel, signing), and ksmbd with the
#                 same client
#   make e2e-2host  the e2e scenarios of the cifs client (against smbd and
#                 ksmbd) between two guests, each with its own soft-RoCE
#                 device on a link between them, then faults of that link
#                 (loss, delay, reordering, partitions, an MTU change) under
#                 cifs I/O
#   make check-debug  on a debug kernel (KASAN, kmemleak, lockdep, UBSAN):
#                 the guest tier, the running driver fuzzed from the network
#                 and through its ioctls, the e2e scenarios, faults under
#                 cifs I/O and a soak; prints the figures
#   make check    install what is missing, build the module against Debian's
#                 packaged kernel headers, build and run the unit tests, the
#                 guest tier on each supported kernel, the fuzzers briefly
#   make module   build driver/smbdirect.ko only
#   make unit     build and run the unit tests only
#   make lint     checkpatch --strict, sparse, the UAPI header check and
#                 its kernel-doc, clang-format and clang-tidy (make check
#                 runs it)
#   make dkms-source  the module's source and dkms.conf for DKMS, into
#                 $(DESTDIR)/usr/src/smbdirect-<version>
#   make dkms-check  dkms add/build/install of it for each supported kernel
#                 (make check runs it)
#   make vm       run the guest tier: QEMU with each of Debian's kernels the
#                 module supports (6.1, 6.12), soft-RoCE and the module
#                 built for it loaded; ioctl harness, scenarios
#   make bench    in one guest run on one soft-RoCE device: SMB2 READ and
#                 WRITE through the driver against raw ib_write_bw and
#                 ib_read_bw at 1 MiB, 64 KiB and 4 KiB, with the responder
#                 on libsmbd, on its tevent glue and on raw ioctls (the
#                 pre-libsmbd responder); then Samba through the driver
#                 against ksmbd with the cifs client; prints ratios
#   make fuzz     run each parser's libFuzzer target (FUZZ_SECONDS each;
#                 make check runs them briefly)
#   make install  libsmbd (shared libraries, headers with the UAPI header,
#                 pkg-config files) and smbdctl with its man page into
#                 $(DESTDIR)$(PREFIX), from an optimized build without
#                 sanitizers
#   make deb      the Debian packages (smbdirect-dkms, libsmbd0,
#                 libsmbd-tevent0, libsmbd-dev, smbdctl) into $(BUILD)/deb
#   make install-check  make install into a scratch tree, checked as a
#                 consumer sees it (run by make check)
#   make e2e-kernel  the guest kernel for the end-to-end tests: Debian's
#                 6.1 with cifs, ksmbd (SMB Direct on) and siw built from
#                 linux-source-6.1 (cached)
#   make samba    Debian's Samba source of one line (SMBD_SAMBA_LINE=4.17
#                 or 4.22; the machine's release's by default) with
#                 samba-patches/<line>/ applied,
#                 built trimmed against libsmbd and installed into a prefix
#                 (cached)
#   make samba-bisect  every prefix of each line's series built in turn
#                 (each patch must build on its own; run it before
#                 changing a series)
#   make clean

# Debian's current packaged kernel (not the host's running one); evaluated
# only when used, after setup has refreshed the apt cache.
KABI ?= $(shell tools/kernel-abi.sh)
KDIR ?= /usr/src/linux-headers-$(KABI)
BUILD ?= build
JOBS ?= $(shell nproc)
FUZZ_SECONDS ?= 300
# the Samba release lines make e2e serves with, each with its series in
# samba-patches/<line>/: the machine's release's alone (4.17 on Debian
# 12) until CI's time with cold caches is measured with both lines (the
# other targets take SMBD_SAMBA_LINE, with the same default)
SAMBA_LINES ?= $(shell samba-patches/build.sh --default-line)
FUZZ_TARGETS := negotiate data_transfer credits smb2_negotiate session_setup \
	buffer_desc

# one version for the library, the module's DKMS package and the packages
VERSION := $(shell sed -n '/^project/s/.* VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
PREFIX ?= /usr/local
INSTALL_BUILD ?= $(BUILD)/install

.PHONY: check check-debug demo demo-responder e2e e2e-2host bench setup module build unit vm \
	lint dkms-source dkms-check deb deb-check \
	fuzz install install-check e2e-kernel samba samba-bisect clean

check: setup
	$(MAKE) --no-print-directory module unit install-check lint dkms-check \
		deb-check vm
	$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=5

setup:
	@tools/setup-host.sh

module:
	@test -d "$(KDIR)" || { echo "no kernel headers at $(KDIR): run make setup" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR)/driver W=1 modules

demo: setup
	SMBD_BUILD=$(abspath $(BUILD)) tools/e2e/run.sh tools/demo/samba-demo.sh

demo-responder: setup
	$(MAKE) --no-print-directory module build >/dev/null
	SMBD_BUILD=$(BUILD) tools/vm/run.sh tools/demo/guest-demo.sh

e2e: setup
	$(MAKE) --no-print-directory build >/dev/null
	for line in $(SAMBA_LINES); do \
		echo "== make e2e: Samba $$line"; \
		SMBD_SAMBA_LINE=$$line SMBD_BUILD=$(abspath $(BUILD)) \
			tools/e2e/run.sh || exit 1; \
	done
	$(MAKE) --no-print-directory deb
	tools/packaging/deps.sh $(BUILD)/deb
	SMBD_SAMBA_LINE=$(firstword $(SAMBA_LINES)) SMBD_BUILD=$(abspath $(BUILD)) \
		SMBD_E2E_DRIVER=none \
		tools/e2e/run.sh tests/e2e/packages.sh

e2e-2host: setup
	$(MAKE) --no-print-directory build >/dev/null
	SMBD_BUILD=$(abspath $(BUILD)) SMBD_E2E_PAIR=1 tools/e2e/run.sh \
		tests/e2e/pair.sh
	SMBD_BUILD=$(abspath $(BUILD)) SMBD_E2E_PAIR=1 SMBD_VM_TIMEOUT=3600 \
		tools/e2e/run.sh tests/e2e/net-faults.sh

check-debug: setup
	$(MAKE) --no-print-directory build install-check
	SMBD_BUILD=$(abspath $(BUILD)) tools/e2e/check-debug.sh

# The bench compares with Debian's optimized perftest, so its tools are
# built optimized and without the sanitizers, in a tree of their own, where
# warnings are not errors (GCC 12 at -O2 warns falsely inside libstdc++; the
# build of make check holds them). A dozen timed cases under TCG take longer
# than the guest's default timeout.
BENCH_BUILD ?= $(BUILD)/bench
# The last commit whose responder used raw ioctls: its responder, built
# from history, is the baseline libsmbd's cost is measured against.
IOCTL_REV ?= a01d9972e225569c4a1257592886724be026ba36
BENCH_CMAKE = -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSMBD_SANITIZE=OFF \
	-DSMBD_WERROR=OFF

bench: setup
	$(MAKE) --no-print-directory module >/dev/null
	cmake -S . -B $(BENCH_BUILD) $(BENCH_CMAKE) >/dev/null
	cmake --build $(BENCH_BUILD) -j$(JOBS) --target smbdirect-client \
		smbdirect-responder >$(BENCH_BUILD)/build.log 2>&1 || \
		{ tail -n 40 $(BENCH_BUILD)/build.log; exit 1; }
	@rm -rf $(BENCH_BUILD)/ioctl $(BENCH_BUILD)/ioctl-src
	@if git cat-file -e $(IOCTL_REV)^{commit} 2>/dev/null; then \
		mkdir -p $(BENCH_BUILD)/ioctl-src && \
		git archive $(IOCTL_REV) | tar -x -C $(BENCH_BUILD)/ioctl-src && \
		cmake -S $(BENCH_BUILD)/ioctl-src -B $(BENCH_BUILD)/ioctl \
			$(BENCH_CMAKE) >/dev/null && \
		cmake --build $(BENCH_BUILD)/ioctl -j$(JOBS) \
			--target smbdirect-responder >>$(BENCH_BUILD)/build.log \
			2>&1 || { tail -n 40 $(BENCH_BUILD)/build.log; exit 1; }; \
	fi
	SMBD_BUILD=$(BENCH_BUILD) SMBD_VM_TIMEOUT=$${SMBD_VM_TIMEOUT:-1500} \
		tools/vm/run.sh tools/bench/guest-bench.sh
	SMBD_BUILD=$(abspath $(BUILD)) tools/e2e/run.sh tests/e2e/bench.sh

build:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Debug >/dev/null
	cmake --build $(BUILD) -j$(JOBS)

unit: build
	ctest --test-dir $(BUILD) --output-on-failure -j$(JOBS)

vm: module unit install-check
	SMBD_BUILD=$(BUILD) SMBD_VM_TIMEOUT=$${SMBD_VM_TIMEOUT:-900} \
		tools/vm/kernels.sh tests/vm/tier.sh
	SMBD_BUILD=$(BUILD) SMBD_VM_TIMEOUT=$${SMBD_VM_TIMEOUT:-900} \
		tools/vm/pair.sh tests/vm/two-hosts.sh

# What kernel and Samba reviewers run: checkpatch --strict and sparse on
# the driver (each supported kernel), the UAPI header as "make headers"
# installs and checks it and its kernel-doc, clang-format and clang-tidy on the userspace code,
# groff's warnings on the man page.
lint: build
	tools/lint/checkpatch.sh
	SMBD_BUILD=$(abspath $(BUILD)) tools/lint/sparse.sh
	tools/lint/uapi-header.sh
	tools/lint/kernel-doc.sh
	tools/lint/clang-format.sh
	SMBD_BUILD=$(abspath $(BUILD)) tools/lint/clang-tidy.sh
	LC_ALL=C groff -man -ww -z tools/smbdctl/smbdctl.8

# The module's source as DKMS takes it: driver/ and include/ (sources
# only) and dkms.conf in $(DESTDIR)/usr/src/smbdirect-$(VERSION); prints
# the module as DKMS names it, smbdirect/$(VERSION), which dkms add and
# dkms install take.
DKMS_DIR = $(DESTDIR)/usr/src/smbdirect-$(VERSION)
dkms-source:
	rm -rf $(DKMS_DIR)
	install -d $(DKMS_DIR)
	find driver include \( -name '*.[ch]' ! -name '*.mod.c' \) -o \
		-name Kbuild | xargs cp --parents -t $(DKMS_DIR)
	sed 's/#MODULE_VERSION#/$(VERSION)/' dkms.conf.in >$(DKMS_DIR)/dkms.conf
	@echo smbdirect/$(VERSION)

# dkms add, build and install of that source for each supported kernel,
# in scratch trees; the module's name on a kernel with its own smbdirect
dkms-check:
	tests/packaging/dkms.sh
	tests/packaging/module-name.sh

deb:
	tools/packaging/deb.sh $(BUILD)/deb

# the packages' contents and lintian's verdict (make check); make e2e
# installs them in the guest and runs the demo from them
deb-check: deb
	tests/packaging/deb.sh $(BUILD)/deb

# libsmbd and smbdctl only: a host that builds Samba needs neither the
# tests' nor the other tools' dependencies.
install:
	cmake -S . -B $(INSTALL_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DSMBD_SANITIZE=OFF -DSMBD_WERROR=OFF -DSMBD_INSTALL_ONLY=ON \
		-DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null
	cmake --build $(INSTALL_BUILD) -j$(JOBS) \
		>$(INSTALL_BUILD)/build.log 2>&1 || \
		{ tail -n 40 $(INSTALL_BUILD)/build.log; exit 1; }
	DESTDIR=$(DESTDIR) cmake --install $(INSTALL_BUILD)

# A prefix outside the system's, so that pkg-config keeps its paths; a
# build tree of its own, so that a root-owned make install tree is not
# needed.
install-check:
	rm -rf $(abspath $(BUILD))/install-check
	$(MAKE) --no-print-directory install PREFIX=/opt/libsmbd \
		INSTALL_BUILD=$(abspath $(BUILD))/install-check-build \
		DESTDIR=$(abspath $(BUILD))/install-check/root >/dev/null
	tests/install/check.sh $(abspath $(BUILD))/install-check /opt/libsmbd

e2e-kernel:
	tools/e2e/kernel.sh

samba:
	samba-patches/build.sh

samba-bisect:
	for line in $$(samba-patches/build.sh --lines); do \
		samba-patches/build.sh --bisect $$line || exit 1; \
	done

fuzz:
	cmake -S . -B $(BUILD)/fuzz -DSMBD_FUZZ=ON -DCMAKE_C_COMPILER=clang \
		-DCMAKE_CXX_COMPILER=clang++ >/dev/null
	cmake --build $(BUILD)/fuzz -j$(JOBS)
	@total=0; for t in $(FUZZ_TARGETS); do \
		mkdir -p $(BUILD)/fuzz/corpus/$$t; \
		$(BUILD)/fuzz/tests/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) \
			-print_final_stats=1 $(BUILD)/fuzz/corpus/$$t \
			tests/fuzz/seeds/$$t \
			>$(BUILD)/fuzz/$$t.log 2>&1 || \
			{ tail -n 40 $(BUILD)/fuzz/$$t.log; exit 1; }; \
		n=$$(sed -n 's/^stat::number_of_executed_units: *//p' \
			$(BUILD)/fuzz/$$t.log); \
		printf 'FUZZ %-15s %s executions, %s corpus entries, no failure\n' \
			$$t $$n "$$(ls $(BUILD)/fuzz/corpus/$$t | wc -l)"; \
		total=$$((total + n)); \
	done; \
	echo "FUZZ summary $(words $(FUZZ_TARGETS)) parsers, $$total executions in $(FUZZ_SECONDS) s each, 0 failures"

clean:
	@test ! -d "$(KDIR)" || $(MAKE) -C $(KDIR) M=$(CURDIR)/driver clean
	rm -rf $(BUILD)
