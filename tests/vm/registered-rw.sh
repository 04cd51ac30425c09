#!/bin/sh
# The data path where rdma_rw registers memory for every operation, as it
# must for iWARP's RDMA READs (iwarp.sh runs on soft-iWARP itself), here on
# soft-RoCE for READs and WRITEs alike: the RDMA core is reloaded with
# its force_mr parameter, so each RDMA READ and WRITE goes through a fast
# registration from the QP's MR pool. Write-read rounds are checked byte for
# byte at sizes that cross pool buffers and with several descriptors, whose
# shares start and end inside pages, and the scenarios with unaligned
# slices and many descriptors run again. Runs last: it reloads the RDMA
# stack.
set -eu
bin=$SMBD_BUILD/tools
counters=/sys/class/misc/smbd/counters
log=$(mktemp)
out=$(mktemp)
responder=
trap '[ -z "$responder" ] || kill -9 "$responder" 2>/dev/null; rm -f "$log" "$out"' EXIT
fail() {
	echo "registered-rw: $*" >&2
	cat "$log" "$out" >&2
	exit 1
}

if grep -q '^ib_core ' /proc/modules; then
	rmmod smbdirect
	rdma link delete rxe0
	modprobe -r rdma_rxe rdma_ucm rdma_cm iw_cm ib_cm ib_uverbs ib_core
	modprobe ib_core force_mr=1
	modprobe rdma_rxe
	rdma link add rxe0 type rxe netdev smbd0
	modprobe rdma_cm
	insmod "$SMBD_DRIVER"
	echo "RDMA core reloaded with force_mr=1"
else
	# built into the kernel (the e2e and debug kernels): booted with it
	grep -qw 'ib_core.force_mr=1' /proc/cmdline ||
		fail "ib_core is built in: boot with ib_core.force_mr=1"
	echo "RDMA core booted with force_mr=1"
fi

"$bin/responder/smbdirect-responder" --no-io-log >"$log" 2>&1 &
responder=$!
i=0
until grep -q "LISTEN: new sessions" "$log"; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "the responder did not start"
	sleep 0.1
done

reads=$(cat $counters/rdma_reads)
for args in "--write-read 1 --descriptors 1" \
	"--write-read 3000000 --descriptors 3 --descriptor-extra 777" \
	"--write-read 8388608 --descriptors 16" \
	"--write-read 65537 --descriptors 5 --channel rdma"; do
	# registering 8 MiB takes the debug kernel more than the default 10 s
	# shellcheck disable=SC2086
	"$bin/client/smbdirect-client" --addr "$SMBD_ADDR" $args --timeout 60 \
		--quiet >"$out" 2>&1 || fail "$args"
	echo "verified with registration: $args"
done
kill -TERM "$responder"
wait "$responder" || fail "the responder did not stop cleanly"
responder=
# on poll(), with either reply; each pattern must name tests (a renamed
# test or parameter once left two of them naming none)
filter='RdmaLimits.Unaligned*:Loop/Rdma.SeveralDescriptors*/Poll*:Loop/Rdma.EveryByte*/Poll*'
for p in $(echo "$filter" | tr : ' '); do
	"$SMBD_BUILD/tests/guest_scenarios" --gtest_list_tests --gtest_filter="$p" |
		grep -q '^  ' || fail "no scenario matches $p"
done
"$SMBD_BUILD/tests/guest_scenarios" --gtest_brief=1 --gtest_filter="$filter"
[ "$(cat $counters/rdma_errors)" -eq 0 ] || fail "RDMA operations failed"
[ "$(cat $counters/rdma_reads)" -gt "$reads" ] || fail "no RDMA READ counted"
