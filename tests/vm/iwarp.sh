#!/bin/sh
# The scenarios that apply to iWARP, on soft-iWARP (siw): a second dummy
# netdev with its own addresses, so that its connections take siw0 and not
# rxe0. The module comes from the kernel (the e2e one builds it) or from
# tools/vm/siw.sh for Debian's kernels ($SMBD_SIW).
set -e
if [ -n "${SMBD_SIW:-}" ]; then
	modprobe libcrc32c
	insmod "$SMBD_SIW"
else
	modprobe siw
fi
ip link add smbd1 type dummy
ip link set smbd1 up
ip addr add 10.56.0.1/24 dev smbd1
ip -6 addr add fd56::1/64 dev smbd1 nodad
export SMBD_ADDR=10.56.0.1 SMBD_ADDR6=fd56::1 SMBD_TRANSPORT=iwarp \
	SMBD_RDMA_LINK="siw0 type siw netdev smbd1"
rdma link add $SMBD_RDMA_LINK
# siw charges registered memory to RLIMIT_MEMLOCK, rxe does not: the
# client registers up to 8 MiB at once
ulimit -l unlimited
# Not here: the RoCE ports (Ports.*; IwarpPorts.* instead) and smbdctl's
# RoCE view, which scenarios.sh covers on soft-RoCE; device removal, which
# runs after in a process of its own, as in scenarios.sh;
# the client seeing its token invalidated in its receive completion (siw
# reports that to kernel CQs only; AnInvalidatedTokenCannotBeUsedAgain
# shows the invalidation instead); dozens of connections from one client
# process (SetupLimit.*, Admission.*, the slots of unconfirmed bindings:
# its 10th ibv_create_cq fails with EAGAIN on siw).
"$SMBD_BUILD/tests/guest_scenarios" --gtest_brief=1 \
	--gtest_filter="${SMBD_IWARP_FILTER:-*-Ports.*:Smbdctl.*:DeviceRemoval.*:*Rdma.ClientSeesTheFirstTokenInvalidated/*:SetupLimit.*:Admission.*:Unconfirmed.BindingsHoldTheirSlotsUntilConfirmedOrGone}"
[ -n "${SMBD_IWARP_FILTER:-}" ] || sh tests/vm/device-removal.sh
# unloaded and loaded again with siw0 there: the driver's ib_client lets go
# of an iWARP device and takes it again
rmmod smbdirect
insmod "$SMBD_DRIVER"
rdma link delete siw0
ip link delete smbd1
rmmod siw
