// SMBD_IOC_CONN_STATS: what a connection carried, for the file that owns
// it and, with CAP_NET_ADMIN, for any file (smbstatus); to anyone else the
// connection is unknown, as it is to everyone once it is gone.
#include <atomic>
#include <cerrno>
#include <thread>

#include "guest.h"
#include "libsmbd.h"
#include "scenario.h"

namespace scenario {
namespace {

constexpr uint64_t kSession = 0x8000000000000009ull;

int stats_of(Device &dev, uint64_t id, smbd_conn_stats &out)
{
    out = {};
    out.conn_id = id;
    return dev.conn_stats(out);
}

// stats_of() without CAP_NET_ADMIN: capset() changes the calling thread
// alone, so a thread of its own drops it
int stats_unprivileged(Device &dev, uint64_t id, smbd_conn_stats &out)
{
    int err = guest::kChildFailed;
    std::thread([&] {
        if (guest::drop_net_admin())
            err = stats_of(dev, id, out);
    }).join();
    return err;
}

using ConnStats = Scenario;

TEST_F(ConnStats, TheOwnerAndNetAdminSeeWhatTheConnectionCarried)
{
    Smbd smbd(fast_params(), false, {kSession});
    std::atomic<bool> echoed{false}, go{false};
    auto client = echo_then_idle(kSession, echoed, go);
    ASSERT_TRUE(smbd.serve([&] { return echoed.load(); })) << verdict(client);
    ASSERT_FALSE(smbd.master_events().empty());
    const uint64_t conn = smbd.master_events().front().conn_id();

    // the owner needs no privilege. NEGOTIATE, SESSION_SETUP and the echo
    // each way; the last send's completion may trail the client's receipt
    smbd_conn_stats own{};
    for (int i = 0; i < 500; i++) {
        ASSERT_EQ(stats_unprivileged(smbd.master(), conn, own), 0);
        if (own.out_pdus_sent == 3)
            break;
        std::this_thread::sleep_for(20ms);
    }
    EXPECT_EQ(own.out_pdus_received, 3u);
    EXPECT_EQ(own.out_pdus_sent, 3u);
    EXPECT_GT(own.out_bytes_received, 4096u);
    EXPECT_GT(own.out_bytes_sent, 4096u);
    EXPECT_EQ(own.out_rdma_reads + own.out_rdma_writes, 0u);
    EXPECT_EQ(own.out_rdma_read_bytes + own.out_rdma_write_bytes, 0u);
    EXPECT_EQ(own.out_rdma_errors, 0u);

    // another file, as root: the same connection, the same counts
    Device other(O_NONBLOCK);
    ASSERT_TRUE(other.ok());
    smbd_conn_stats seen{};
    ASSERT_EQ(stats_of(other, conn, seen), 0);
    EXPECT_EQ(seen.out_pdus_received, own.out_pdus_received);
    EXPECT_EQ(seen.out_bytes_received, own.out_bytes_received);
    EXPECT_EQ(seen.out_pdus_sent, own.out_pdus_sent);
    EXPECT_EQ(seen.out_bytes_sent, own.out_bytes_sent);
    // without CAP_NET_ADMIN another file's connection is unknown
    EXPECT_EQ(stats_unprivileged(other, conn, seen), ENOENT);

    // through libsmbd, as smbstatus asks
    smbd_dev_open_args args = SMBD_DEV_OPEN_ARGS_INIT;
    smbd_dev *lib = nullptr;
    ASSERT_EQ(smbd_dev_open(&args, &lib, nullptr, 0), 0);
    smbd_dev_conn_stats ls{};
    EXPECT_EQ(smbd_dev_get_conn_stats(lib, conn, &ls, sizeof(ls)), 0)
        << smbd_dev_errmsg(lib);
    EXPECT_EQ(ls.size, sizeof(ls));
    EXPECT_EQ(ls.pdus_received, own.out_pdus_received);
    EXPECT_EQ(ls.bytes_sent, own.out_bytes_sent);
    EXPECT_EQ(smbd_dev_get_conn_stats(lib, conn + 1000, &ls, sizeof(ls)),
              ENOENT);
    EXPECT_NE(std::string(smbd_dev_errmsg(lib)).find("counters"),
              std::string::npos)
        << smbd_dev_errmsg(lib);
    EXPECT_EQ(smbd_dev_get_conn_stats(lib, conn, nullptr, 0), EINVAL);
    EXPECT_NE(std::string(smbd_dev_errmsg(lib)).find("stats"),
              std::string::npos)
        << smbd_dev_errmsg(lib);
    smbd_dev_close(lib);

    go = true;
    ASSERT_TRUE(smbd.serve_peer(client)) << verdict(client);
    // gone: unknown to its owner once its DISCONNECTED is read, also with
    // CAP_NET_ADMIN, and to root once torn down
    EXPECT_EQ(stats_unprivileged(smbd.master(), conn, own), ENOENT);
    EXPECT_EQ(stats_of(smbd.master(), conn, own), ENOENT);
    for (int i = 0; i < 1500 && stats_of(other, conn, seen) == 0; i++)
        std::this_thread::sleep_for(20ms);
    EXPECT_EQ(stats_of(other, conn, seen), ENOENT);
}

} // namespace
} // namespace scenario
