#!/bin/sh
# The e2e scenarios between two hosts (make e2e-2host: tools/e2e/run.sh
# with SMBD_E2E_PAIR=1): the patched smbd, and ksmbd for reference, serve
# the share in the server guest; the unmodified Linux cifs client of the
# e2e kernel mounts it from the client guest, each over its own soft-RoCE
# device on the link between them. The scenarios are guest.sh's that
# involve the network; what concerns the server runs there (on_server).
# Left to the one guest: soft-iWARP (its device would share the link's
# netdev with soft-RoCE) and the checks of our SMB2 client, which test
# smbd's processes, not the path to them. One line per scenario:
#   E2E <scenario> PASS|FAIL <detail>
# and the client's exit code is the number of failed scenarios.
set -u
. "$SMBD_REPO/tests/e2e/lib.sh"

case ${SMBD_ROLE:-} in
server)
	e2e_setup || { echo "E2E server setup FAIL $E2E_WHY"; exit 1; }
	rc=0
	serve_client || rc=1
	e2e_teardown
	exit $rc
	;;
client) ;;
*)
	echo "pair.sh runs in a pair of guests (SMBD_E2E_PAIR=1)" >&2
	exit 1
	;;
esac

trap 'touch "$SMBD_SHARED/client-exit"' EXIT
{ await_server && test_data; } || { echo "E2E setup FAIL $E2E_WHY"; exit 1; }

cifs_scenarios
leak_checkpoint cifs
ksmbd_scenarios

echo "E2E summary $E2E_PASSED passed, $E2E_FAILED failed"
on_server end >/dev/null
exit "$E2E_FAILED"
