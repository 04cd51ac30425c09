// RDMA device removal: deleting rxe0 under an open connection tears it down
// with DEVICE_REMOVED; once rxe0 is back, connections work again. Runs in a
// process of its own (tests/vm/device-removal.sh): rxe cannot take a
// device away from a process that holds it open, so the peers here are
// forked children and this process never opens the device itself.
#include <cstdlib>
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scenario.h"

namespace scenario {
namespace {

constexpr uint64_t kSession = 0x7000000000000007ull;

// A child that binds, echoes one PDU, writes one byte to @ready, then
// waits for the connection to end (exit 0) unless @stay is false.
pid_t bound_peer(int ready, bool stay)
{
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    auto c = negotiated_client();
    if (!c)
        _exit(10);
    if (!(*c)->session_setup(session_setup_options(true, kSession)))
        _exit(11);
    if (!echo_once(**c, 0, 4096).empty())
        _exit(12);
    if (write(ready, "r", 1) != 1)
        _exit(13);
    if (stay) {
        // the device going away ends the connection one way or another
        auto until = std::chrono::steady_clock::now() + 30s;
        while ((*c)->connected() && std::chrono::steady_clock::now() < until)
            (void)(*c)->wait_peer_disconnect(100ms);
        if ((*c)->connected())
            _exit(14);
    }
    (*c)->close();
    _exit(0);
}

int exit_code(pid_t pid)
{
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
        return -1;
    return WEXITSTATUS(status);
}

using DeviceRemoval = Scenario;

TEST_F(DeviceRemoval, OpenConnectionEndsWithDeviceRemovedAndANewOneWorksAfter)
{
    Smbd smbd(fast_params(), false, {kSession});
    int ready[2];
    ASSERT_EQ(pipe(ready), 0);

    pid_t child = bound_peer(ready[1], true);
    ASSERT_GT(child, 0);
    ASSERT_TRUE(smbd.serve([&] {
        pollfd p{ready[0], POLLIN, 0};
        return poll(&p, 1, 0) == 1;
    }, 30s)) << "the peer never got its echo";
    char byte;
    ASSERT_EQ(read(ready[0], &byte, 1), 1);

    ASSERT_EQ(std::system("timeout 60 rdma link delete rxe0"), 0);
    ASSERT_TRUE(smbd.serve_disconnects(1, 20s)) << describe(smbd.master_events());
    // The peer sits on the same rxe device: the CM may tear its end down
    // first, and its disconnect request then reaches the driver before the
    // driver's own removal event. Either way the connection ends once.
    uint32_t reason = smbd.disconnects().begin()->second;
    EXPECT_TRUE(reason == SMBD_REASON_DEVICE_REMOVED || reason == SMBD_REASON_PEER)
        << describe(smbd.master_events());
    EXPECT_EQ(exit_code(child), 0) << "the peer did not see its connection end";
    EXPECT_TRUE(settled());
    EXPECT_EQ(delta("disconnect_device_removed") + delta("disconnect_peer"), 1);
    EXPECT_EQ(delta(std::string("disconnect_") + smbd::device::reason_name(reason)), 1);

    ASSERT_EQ(std::system("rdma link add rxe0 type rxe netdev smbd0"), 0);
    pid_t again = bound_peer(ready[1], false);
    ASSERT_GT(again, 0);
    ASSERT_TRUE(smbd.serve_disconnects(2, 30s)) << describe(smbd.master_events());
    EXPECT_EQ(exit_code(again), 0) << "no working connection after re-adding rxe0";
    EXPECT_EQ(smbd.disconnects().size(), 2u);
    close(ready[0]);
    close(ready[1]);
}

} // namespace
} // namespace scenario
