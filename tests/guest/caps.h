// Privilege helpers of the guest harness and of the ioctl fuzzer: no gtest
// here, so that both link it.
#ifndef SMBD_TESTS_GUEST_CAPS_H
#define SMBD_TESTS_GUEST_CAPS_H

namespace guest {

// Drops CAP_NET_ADMIN from the calling thread (capset() leaves the
// process's other threads alone); false if it could not.
bool drop_net_admin();
// Sets every uid of the calling process to nobody's; false if it could not.
bool become_nobody();

} // namespace guest

#endif
