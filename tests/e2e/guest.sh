#!/bin/sh
# End-to-end in the guest: the patched smbd (prefix $SMBD_SAMBA) serves a
# share through smbdirect.ko over soft-RoCE to the unmodified Linux cifs
# client of the same kernel. One line per scenario:
#   E2E <scenario> PASS|FAIL <detail>
# and the exit code is the number of failed scenarios. On the debug kernel
# kmemleak checks at two points (leak_checkpoint) and after the unload.
set -u
. "$SMBD_REPO/tests/e2e/lib.sh"

echo "E2E samba $("$SMBD_SAMBA/sbin/smbd" -V 2>&1)"
e2e_setup || { echo "E2E setup FAIL $E2E_WHY"; exit 1; }

if start_server auto; then
	warm_up_mount
	stop_server
fi
cifs_scenarios
# the client over soft-iWARP: port 5445, IRD/ORD in the private data, every
# RDMA READ registered
if siw_up; then
	E2E_ADDR=$E2E_IWARP_ADDR E2E_CONN=iwarp:5445 run_scenario iwarp \
		rdma_files "rdma,vers=3.1.1" 1 rdma
	siw_down
else
	E2E_FAILED=$((E2E_FAILED + 1))
	echo "E2E iwarp FAIL $E2E_WHY"
fi
leak_checkpoint cifs
# our client, which drives the server as Windows does
# (tools/client/smb2_checks.cpp): a signed NTLMv2 session with inline I/O,
# RDMA I/O on each channel, a related compound and a CANCEL by AsyncId,
# over SMB Direct and over TCP; Windows' flow, an SMB Direct channel
# binding to a TCP session
run_smb2 smb2-rdma session compound cancel max-io
run_smb2 smb2-tcp --tcp session compound cancel
run_smb2 smb2-windows-flow windows-flow interfaces-rdma
# what the series got wrong, each with the request shape that showed it:
# RDMA READs and WRITEs anywhere in a compound, among inline ones
run_smb2 smb2-compound-rdma compound-rdma
# a binding channel of another ClientGuid: STATUS_USER_SESSION_DELETED
run_smb2 smb2-bind-wrong-guid bind-wrong-guid
# a session over SMB Direct, then TCP binds to it in the same smbd
run_smb2 smb2-bind-tcp bind-tcp
# a new SMB Direct session of a ClientGuid a TCP smbd holds
run_smb2 smb2-rdma-after-tcp rdma-after-tcp
# ... whose smbd does not answer: the child serves it after a wait
smb2_holder stopped
# ... whose smbd does not serve SMB Direct: it says so, the child serves it
smb2_holder refusing
# a WRITE to a file opened for reading: refused before any RDMA
E2E_RDMA_IN=0 run_smb2 smb2-denied-write denied-write
# channel info the server refuses, over SMB Direct and over TCP
run_smb2 smb2-channel-validation channel-validation
# "server smb direct max io size": what the SMB Direct negotiation and the
# SMB2 NEGOTIATE offer, and transfers of that size
E2E_CONF_EXTRA="	server smb direct max io size = 1048576" \
	E2E_EXPECT="MaxReadWriteSize 1048576
MaxReadSize 1048576, MaxWriteSize 1048576" \
	run_smb2 smb2-max-io-size max-io
# ... below the 64 KiB Windows needs for SMB2 I/O: smbd raises it
E2E_CONF_EXTRA="	server smb direct max io size = 16384" \
	E2E_EXPECT="MaxReadWriteSize 65536
MaxReadSize 65536, MaxWriteSize 65536" \
	run_smb2 smb2-max-io-size-raised max-io
# a client that reassembles 131072 bytes: no response larger; READs
# without aio, so that a compound's responses travel as one message (4.22
# lets the last READ of a compound go async, and the responses before it
# then go in a message of their own, where each fits)
E2E_CONF_EXTRA="	aio read size = 0" run_smb2 smb2-max-fragmented max-fragmented
# a lease break the SMB Direct channel cannot carry: again over TCP
run_smb2 smb2-break-retry break-retry
# an RDMA READ's file data read straight into the pool (strace); on ext4,
# data the page cache holds read at once, without the thread pool
smb2_read_into_pool
smb2_read_cached
# a reload that changes the protocol range and signing: the next SMB
# Direct session gets what the new configuration answers
smb2_reload
# %a and %R of smb.conf over SMB Direct, whose NEGOTIATE the driver answers
smb2_remote_names
# testparm's warnings for "server smb direct"
testparm_smb_direct
# smbcontrol's view of the device, joined to the driver's by connection id
smbcontrol_smbdirect_status
# smbstatus --json lists channels from 4.22 on
case $("$SMBD_SAMBA/sbin/smbd" -V) in
*" 4.17."*) echo "E2E smbstatus-json SKIP: 4.17's smbstatus --json lists no channels" ;;
*) smbstatus_json ;;
esac
# the smbdirect debug class: the transport's messages alone, and only them
smb2_debug_class
# "server smb direct" turned on and off by reloads
smb2_reload_on_off
# ... and a mount's live SMB Direct connection through such reloads
smb2_reload_live
# sessions no channel can bind to are not registered with the kernel,
# which answers a binding to them itself: SMB 2.1, multichannel off, a
# guest
E2E_CONF_EXTRA="	server min protocol = SMB2_10" \
	E2E_COUNT=disconnect_unknown_session run_smb2 smb2-unbindable-smb21 \
	--tcp --dialects 0210 bind-unbindable
E2E_CONF_EXTRA="	server multi channel support = no" \
	E2E_COUNT=disconnect_unknown_session run_smb2 \
	smb2-unbindable-no-multichannel --tcp bind-unbindable
E2E_CONF_EXTRA="	map to guest = bad user" \
	E2E_COUNT=disconnect_unknown_session run_smb2 smb2-unbindable-guest \
	--tcp --user no-such-user bind-unbindable
# mandatory signing: no RDMA channel moves unsigned data, and no interface
# invites Windows to open one, also where "interfaces" says RDMA
E2E_INTERFACES="$E2E_RDMA_INTERFACES" E2E_SIGNING=mandatory E2E_RDMA_IN=0 \
	run_smb2 smb2-signed-no-rdma signed-no-rdma interfaces-no-rdma
# encryption required: the same, in sessions that encrypt every message,
# AES-128-GCM on 3.1.1 and AES-128-CCM on 3.0.2
E2E_INTERFACES="$E2E_RDMA_INTERFACES" \
	E2E_CONF_EXTRA="	server smb encrypt = required" E2E_RDMA_IN=0 \
	run_smb2 smb2-encrypted-no-rdma encrypted-no-rdma interfaces-no-rdma
E2E_CONF_EXTRA="	server smb encrypt = required" E2E_RDMA_IN=0 \
	run_smb2 smb2-encrypted-no-rdma-302 --dialects 0302 encrypted-no-rdma
# another process holds the listener: smbd offers no RDMA
E2E_INTERFACES="$E2E_RDMA_INTERFACES" smb2_no_listener
# "bind interfaces only" holds for SMB Direct too
smb2_bind_interfaces_only
# the scavenger, forked for a durable handle, lets go of it too
smb2_scavenger_device
# forked processes let go of the device: smbd can restart
smb2_fork_device
# a pool smaller than 8 MiB bounds what smbd offers
smb2_small_pool
# ... and so does "server smb direct pool size", each process's pool of 4
# buffers, not the module's 64: the parent offers no more than it holds,
# and in the child a transfer that holds it whole makes the next one wait
E2E_CONF_EXTRA="	server smb direct pool size = 4M" \
	E2E_EXPECT="MaxReadWriteSize 4194304
MaxReadSize 4194304, MaxWriteSize 4194304" \
	run_smb2 smb2-pool-size max-io
E2E_CONF_EXTRA="	server smb direct pool size = 4M" \
	run_smb2 smb2-pool-size-wait --timeout 30 pool-wait
# ... kept through a reload to a larger size, so that a channel binding to
# an older process is offered no more than that process holds
smb2_reload_pool_size
leak_checkpoint smb2

ksmbd_scenarios
# Debian 6.1's ksmbd signs the response to a READ answered by RDMA over the
# wrong bytes (smb3_set_sign_rsp() signs a READ's last two iovs, taking the
# 4-byte length prefix when no data iov follows), so its RDMA I/O is
# checked in an unsigned session; it answers CHANGE_NOTIFY, the request
# the cancel check leaves waiting, with STATUS_NOT_IMPLEMENTED
E2E_SERVER=ksmbd run_smb2 ksmbd-smb2-tcp --tcp session compound
E2E_SERVER=ksmbd run_smb2 ksmbd-smb2-rdma --no-sign session compound \
	compound-rdma denied-write

e2e_teardown
echo "E2E summary $E2E_PASSED passed, $E2E_FAILED failed"
exit "$E2E_FAILED"
