// RDMA device removal: deleting the link (rxe0, or siw0 in iwarp.sh) under
// an open connection tears it down with DEVICE_REMOVED; once the link is
// back, connections work again. The smbd
// side is the responder on a tevent loop, so the device going away is seen
// through libsmbd and its glue as smbd will see it. Runs in a process of
// its own (tests/vm/device-removal.sh): rxe and siw cannot take a device
// away from a process that holds it open, so the peers here are forked children
// and this process never opens the RDMA device itself.
#include <cstdlib>
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "responder.h"
#include "scenario.h"

namespace scenario {
namespace {

constexpr uint64_t kSession = 0x7000000000000007ull;

// Whether the link is being unregistered: the RDMA core unlists a device
// (for netlink) before it removes its clients.
bool link_unlisted()
{
    return std::system(
               ("rdma dev show " + rdma_link_name() + " >/dev/null 2>&1")
                   .c_str()) != 0;
}

// A child that binds, echoes one PDU, writes one byte to @ready, then
// waits for the connection to end (exit 0) unless @stay is false.
//
// Where the RDMA core is built in (the e2e and debug kernels), its clients
// register in link order, the RDMA CM before uverbs, and are removed in the
// reverse order: uverbs goes first and, as rxe cannot disassociate a user
// context, waits for this child to close the device before the RDMA CM
// would queue its DEVICE_REMOVAL. The child then sees the link unlisted instead
// of its connection's end, and lets the device go.
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
    if (stay && link_unlisted())
        _exit(15); // the check below would pass without a removal
    if (write(ready, "r", 1) != 1)
        _exit(13);
    if (stay) {
        // the device going away ends the connection one way or another
        auto until = std::chrono::steady_clock::now() + 30s;
        while ((*c)->connected() && !link_unlisted() &&
               std::chrono::steady_clock::now() < until)
            (void)(*c)->wait_peer_disconnect(500ms);
        if ((*c)->connected() && !link_unlisted())
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

// The responder in a thread: the master registers kSession and serves its
// bound channels until one connection ended. The peer is forked between
// start and serve(): a child forked while the thread runs could inherit a
// lock (malloc's, the sanitizers') that thread held.
class Serving {
  public:
    Serving()
    {
        smbd::responder::Options o;
        o.params = fast_params();
        o.listen = false;
        o.fork = false;
        o.tevent = true;
        o.register_sessions = {kSession};
        o.connections = 1;
        o.log = nullptr;
        r_ = std::make_unique<smbd::responder::Responder>(o);
        started_ = r_->start();
    }
    void serve()
    {
        thread_ = std::thread([this] {
            err_ = r_->run();
            done_ = true;
        });
    }
    ~Serving()
    {
        if (thread_.joinable()) {
            r_->stop();
            thread_.join();
        }
    }

    int started() const { return started_; }
    // Whether the responder returned by itself within 20 s (else it is
    // stopped); its summary is final either way.
    bool finished()
    {
        for (int i = 0; i < 200 && !done_; i++)
            std::this_thread::sleep_for(100ms);
        if (!done_)
            r_->stop();
        if (thread_.joinable())
            thread_.join();
        return done_ && err_ == 0;
    }
    const smbd::responder::Summary &summary() const { return r_->summary(); }

  private:
    std::unique_ptr<smbd::responder::Responder> r_;
    std::thread thread_;
    std::atomic<bool> done_{false};
    int started_ = -1;
    int err_ = 0;
};

// Waits up to 30 s for the peer's byte on @fd.
bool ready(int fd)
{
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 30000) != 1)
        return false;
    char byte;
    return read(fd, &byte, 1) == 1;
}

// Waits up to 10 s for the driver's listeners to list @entry (@present)
// or not.
bool listed(const std::string &entry, bool present)
{
    for (int i = 0; i < 100; i++) {
        if ((listeners().find(entry) != std::string::npos) == present)
            return true;
        std::this_thread::sleep_for(100ms);
    }
    return false;
}

using DeviceRemoval = Scenario;

// And on IB/RoCE, the listener on port 445 of the device's address goes
// with the device and comes back with it.
TEST_F(DeviceRemoval, OpenConnectionEndsWithDeviceRemovedAndANewOneWorksAfter)
{
    const char *transport = std::getenv("SMBD_TRANSPORT");
    const bool iwarp = transport && std::string(transport) == "iwarp";
    const std::string ib_listener = "addr=" + server_addr() + ":" +
                                    std::to_string(smbd::client::kIbPort) + " ";
    int pipe_fds[2];
    ASSERT_EQ(pipe(pipe_fds), 0);
    {
        Serving smbd;
        ASSERT_EQ(smbd.started(), 0);
        pid_t child = bound_peer(pipe_fds[1], true);
        ASSERT_GT(child, 0);
        smbd.serve();
        ASSERT_TRUE(ready(pipe_fds[0])) << "the peer never got its echo";
        if (!iwarp) {
            EXPECT_TRUE(listed(ib_listener, true)) << listeners();
        }

        ASSERT_EQ(
            std::system(
                ("timeout 60 rdma link delete " + rdma_link_name()).c_str()),
            0);
        EXPECT_EQ(exit_code(child), 0)
            << "the peer saw neither its connection end nor the link going";
        if (!iwarp) {
            EXPECT_TRUE(listed(ib_listener, false)) << listeners();
        }
        EXPECT_TRUE(settled());
        EXPECT_TRUE(smbd.finished()) << "the responder did not see it end";
        const auto &s = smbd.summary();
        // The peer sits on the same device: the CM may tear its end
        // down first, and its disconnect request then reaches the driver
        // before the driver's own removal event. Either way the connection
        // ends once.
        EXPECT_EQ(s.disconnected, 1u);
        auto reasons = s.reasons;
        EXPECT_EQ(reasons["device_removed"] + reasons["peer"], 1u);
        EXPECT_EQ(delta("disconnect_device_removed") + delta("disconnect_peer"),
                  1);
        EXPECT_EQ(delta("disconnect_device_removed"),
                  int64_t(reasons["device_removed"]));
    }

    ASSERT_EQ(std::system(("rdma link add " + rdma_link()).c_str()), 0);
    Serving smbd;
    ASSERT_EQ(smbd.started(), 0);
    if (!iwarp) {
        EXPECT_TRUE(listed(ib_listener, true)) << listeners();
        // in a child, as the peers: the peer forked next must not inherit
        // this process's RDMA state
        pid_t ib = fork();
        if (ib == 0) {
            PeerOptions opt;
            opt.port = smbd::client::kIbPort;
            _exit(negotiated_client(opt) ? 0 : 1);
        }
        EXPECT_EQ(exit_code(ib), 0) << "no connection on port 445";
    }
    pid_t again = bound_peer(pipe_fds[1], false);
    ASSERT_GT(again, 0);
    smbd.serve();
    EXPECT_EQ(exit_code(again), 0)
        << "no working connection after re-adding the link";
    EXPECT_TRUE(settled());
    EXPECT_TRUE(smbd.finished()) << "the responder did not see it end";
    const auto &s = smbd.summary();
    EXPECT_EQ(s.bound, 1u);
    EXPECT_EQ(s.disconnected, 1u);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
}

} // namespace
} // namespace scenario
