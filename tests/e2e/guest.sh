#!/bin/sh
# End-to-end in the guest: the patched smbd (prefix $SMBD_SAMBA) serves a
# share through smbdirect.ko over soft-RoCE to the unmodified Linux cifs
# client of the same kernel. One line per scenario:
#   E2E <scenario> PASS|FAIL <detail>
# and the exit code is the number of failed scenarios.
set -u
. "$SMBD_REPO/tests/e2e/lib.sh"

e2e_setup || { echo "E2E setup FAIL $E2E_WHY"; exit 1; }

# new session over RDMA (flow 2) with each SMB 3 dialect the client offers
for vers in 3.1.1 3.0.2; do
	run_scenario "rdma-$vers" rdma_files "rdma,vers=$vers" 1 rdma
done
# a second RDMA channel binds to the session (flow 1): its SESSION_SETUP is
# signed with the channel key from the preauth hash the driver's bytes gave
run_scenario multichannel rdma_files \
	"rdma,vers=3.1.1,multichannel,max_channels=2" 2 rdma
# signing required: the client moves file data inline, never by RDMA (its
# writes one page at a time: see put_file)
E2E_SIGNING=mandatory E2E_WRITER=direct run_scenario signed rdma_files \
	"rdma,vers=3.1.1" 1 inline

# the same client and workloads against ksmbd, the reference
E2E_SERVER=ksmbd run_scenario ksmbd-rdma-3.1.1 rdma_files "rdma,vers=3.1.1" 1 rdma
E2E_SERVER=ksmbd E2E_SIGNING=mandatory E2E_WRITER=direct \
	run_scenario ksmbd-signed rdma_files "rdma,vers=3.1.1" 1 inline

e2e_teardown
echo "E2E summary $E2E_PASSED passed, $E2E_FAILED failed"
exit "$E2E_FAILED"
