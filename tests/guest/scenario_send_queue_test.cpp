// The bound on what a connection holds to send: SEND_PDU's copies and
// RDMA_RW's replies up to out_send_queue_bytes until their sends complete,
// as a socket's send buffer. Beyond it SEND_PDU fails with EAGAIN and a
// reply with ENOBUFS; one SEND_ROOM event says when half of it is free.
// What is held is charged to the memory cgroup of the process that sent it.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "scenario.h"

namespace scenario {
namespace {

constexpr uint64_t kSession = 0x5e70000000000003ull;
constexpr uint32_t kPduSize = 256u << 10;

// A bound channel's peer that grants the server no credits until told to,
// then reads every PDU and checks the n-th is test_pdu(n); or leaves.
struct HeldPeer {
    std::atomic<bool> holding{false};
    std::atomic<bool> grant{false};
    std::atomic<bool> leave{false};
    std::atomic<bool> done{false};
    std::atomic<uint64_t> received{0};
    PeerResult result;

    explicit HeldPeer(PeerOptions opt = {}) : opt_(std::move(opt))
    {
        opt_.connect.receive_credit_max = 4;
    }

    // Connects: once the master listens, or it would be refused.
    void start()
    {
        result = peer([this, opt = opt_]() -> std::string {
            auto c = negotiated_client(opt);
            if (!c)
                return "connect and negotiate: " + c.error().message;
            auto ss =
                (*c)->session_setup(session_setup_options(true, kSession));
            if (!ss)
                return "binding SESSION_SETUP: " + ss.error().message;
            (*c)->set_repost_receives(false);
            holding = true;
            while (!grant.load() && !leave.load())
                (void)(*c)->wait_peer_disconnect(50ms);
            if (leave.load()) {
                (*c)->close();
                return "";
            }
            (*c)->set_repost_receives(true);
            for (uint64_t n = 0;;) {
                auto got = (*c)->recv_pdu(200ms);
                if (!got && got.error().code ==
                                make_error_code(smbd::client::Errc::timeout)) {
                    if (done.load())
                        break;
                    continue;
                }
                if (!got)
                    return "PDU " + std::to_string(n) + ": " +
                           got.error().message;
                if (*got != test_pdu(kSession, n, uint32_t(got->size())))
                    return "PDU " + std::to_string(n) + " is not the one sent";
                received = ++n;
            }
            (*c)->close();
            return "";
        });
    }
    // a test that stopped early lets the peer go
    ~HeldPeer()
    {
        leave = true;
        done = true;
    }

  private:
    PeerOptions opt_;
};

// The master's file with @peer's channel adopted and confirmed: its id.
uint64_t adopt(Device &master, HeldPeer &peer)
{
    Params params = fast_params();
    // the peer holds its credits for as long as a test needs
    params.credit_timeout_ms = 60000;
    EXPECT_EQ(master.set_params(params), 0);
    EXPECT_EQ(master.register_session(kSession), 0);
    peer.start();
    auto channel = next_event(master);
    if (!channel || channel->type() != SMBD_EVENT_NEW_CHANNEL) {
        ADD_FAILURE() << "no NEW_CHANNEL; the peer: " << verdict(peer.result);
        return 0;
    }
    EXPECT_EQ(answer_session_setup(master, *channel, kSession), 0);
    for (int i = 0; i < 1000 && !peer.holding.load(); i++)
        std::this_thread::sleep_for(10ms);
    EXPECT_TRUE(peer.holding.load()) << verdict(peer.result, 0s);
    return channel->conn_id();
}

// Sends @size-byte PDUs numbered from @n until SEND_PDU refuses one: the
// bytes accepted, and the refusal in @err.
uint64_t fill(Device &dev, uint64_t conn, uint64_t &n, uint32_t size, int &err)
{
    uint64_t bytes = 0;
    for (int i = 0; i < 64; i++) {
        err = dev.send_pdu(conn, test_pdu(kSession, n, size));
        if (err)
            return bytes;
        n++;
        bytes += size;
    }
    return bytes;
}

// The peer grants again: "" once the connection's SEND_ROOM came, else
// what came instead.
// The waits bound a stalled guest, not the driver's speed: a debug kernel
// on a busy machine took over 10 s to send a full queue.
std::string grant_and_await_room(Device &master, HeldPeer &peer, uint64_t conn,
                                 std::chrono::milliseconds wait = 120s)
{
    peer.grant = true;
    auto room = next_event(master, wait);
    if (!room)
        return "no SEND_ROOM; the peer: " + verdict(peer.result, 0s);
    if (room->type() != SMBD_EVENT_SEND_ROOM || room->conn_id() != conn)
        return describe(*room) + " instead of SEND_ROOM";
    return "";
}

// How many PDUs the peer read, once it read @n or after 120 s.
uint64_t await_received(const HeldPeer &peer, uint64_t n)
{
    for (int i = 0; i < 12000 && peer.received.load() < n; i++)
        std::this_thread::sleep_for(10ms);
    return peer.received.load();
}

uint32_t send_queue_bytes(Device &dev)
{
    smbd_info info{};
    EXPECT_EQ(dev.info(info), 0);
    EXPECT_TRUE(info.out_features & SMBD_FEATURE_SEND_ROOM);
    return info.out_send_queue_bytes;
}

using SendQueue = Scenario;

// A peer that grants nothing keeps every PDU queued: the connection takes
// PDUs up to the bound, refuses the next with EAGAIN until there is room,
// says once when there is, and loses nothing.
TEST_F(SendQueue, AFullQueueRefusesWithEagainUntilItsSendRoom)
{
    Device master(O_NONBLOCK);
    HeldPeer peer;
    const uint64_t conn = adopt(master, peer);
    ASSERT_NE(conn, 0u);
    const uint32_t bound = send_queue_bytes(master);
    ASSERT_GE(bound, 4 * kPduSize);

    uint64_t n = 0;
    int err = 0;
    EXPECT_EQ(fill(master, conn, n, kPduSize, err), bound);
    EXPECT_EQ(err, EAGAIN);
    EXPECT_EQ(master.send_pdu(conn, test_pdu(kSession, n, 64)), EAGAIN)
        << "a small PDU does not fit either";
    EXPECT_TRUE(stays_quiet(master, 300ms)) << "room while the peer holds";
    EXPECT_GE(delta("send_queue_full"), 2);

    ASSERT_EQ(grant_and_await_room(master, peer, conn), "");
    // the rest goes in order behind what was held
    const uint64_t held = n;
    EXPECT_EQ(master.send_pdu(conn, test_pdu(kSession, n, kPduSize)), 0);
    n++;
    EXPECT_EQ(await_received(peer, n), held + 1);
    peer.done = true;
    EXPECT_EQ(verdict(peer.result), "");
    // the refusals asked for one SEND_ROOM, and it was read
    std::vector<Event> rest;
    while (auto ev = next_event(master, 500ms)) {
        if (ev->type() == SMBD_EVENT_DISCONNECTED)
            break;
        rest.push_back(*ev);
    }
    EXPECT_TRUE(rest.empty()) << describe(rest);
}

// The bound holds what a connection has queued, so that any PDU can go:
// one larger than the bound goes into an empty queue, and fills it.
TEST_F(SendQueue, APduLargerThanTheBoundGoesIntoAnEmptyQueue)
{
    Device master(O_NONBLOCK);
    PeerOptions opt;
    opt.connect.max_fragmented_size = 8u << 20;
    HeldPeer peer(opt);
    const uint64_t conn = adopt(master, peer);
    ASSERT_NE(conn, 0u);
    const uint32_t bound = send_queue_bytes(master);
    ASSERT_LT(bound + 4096, opt.connect.max_fragmented_size);

    EXPECT_EQ(master.send_pdu(conn, test_pdu(kSession, 0, bound + 4096)), 0);
    EXPECT_EQ(master.send_pdu(conn, test_pdu(kSession, 1, 64)), EAGAIN);
    ASSERT_EQ(grant_and_await_room(master, peer, conn), "");
    EXPECT_EQ(master.send_pdu(conn, test_pdu(kSession, 1, 64)), 0);
    EXPECT_EQ(await_received(peer, 2), 2u);
    peer.done = true;
    EXPECT_EQ(verdict(peer.result), "");
}

// An RDMA WRITE's reply counts like a PDU: when it does not fit, the
// operation is refused with ENOBUFS (EAGAIN says the file has too many
// operations) before anything is posted, and SEND_ROOM follows.
TEST_F(SendQueue, AReplyThatDoesNotFitRefusesItsOperationWithEnobufs)
{
    Device master(O_NONBLOCK);
    HeldPeer peer;
    const uint64_t conn = adopt(master, peer);
    ASSERT_NE(conn, 0u);
    // full to the byte, no PDU refused: the reply's refusal asks for room
    const uint32_t bound = send_queue_bytes(master);
    for (uint64_t n = 0; n < bound / kPduSize; n++)
        ASSERT_EQ(master.send_pdu(conn, test_pdu(kSession, n, kPduSize)), 0)
            << n;
    const uint64_t n = bound / kPduSize;

    // never posted: the descriptor need not name memory of the peer's
    uint8_t desc[16] = {};
    desc[8] = 0x34;  // Token
    desc[12] = 0x10; // Length 4096, little-endian
    smbd_slice slice{0, 0, 4096, 0};
    const auto response = test_pdu(kSession, n, 80);
    smbd_iovec iov{reinterpret_cast<uintptr_t>(response.data()),
                   response.size()};
    smbd_send_entry reply{};
    reply.conn_id = conn;
    reply.iov_ptr = reinterpret_cast<uintptr_t>(&iov);
    reply.iov_count = 1;
    smbd_rw_op op{};
    op.conn_id = conn;
    op.slices_ptr = reinterpret_cast<uintptr_t>(&slice);
    op.slice_count = 1;
    op.descs_ptr = reinterpret_cast<uintptr_t>(desc);
    op.desc_count = 1;
    op.direction = SMBD_RW_WRITE_TO_PEER;
    op.reply_ptr = reinterpret_cast<uintptr_t>(&reply);
    op.reply_size = sizeof(reply);
    uint32_t done = 0;
    EXPECT_EQ(master.rdma_rw_raw({&op, 1}, done), ENOBUFS);
    EXPECT_EQ(delta("rdma_writes") + delta("rdma_errors"), 0);

    ASSERT_EQ(grant_and_await_room(master, peer, conn), "");
    peer.done = true;
    EXPECT_EQ(verdict(peer.result), "");
}

// A copy that fails (here a PDU the caller cannot read) gives back what
// it took of the bound: refused PDUs never fill the queue.
TEST_F(SendQueue, ARefusedCopyGivesItsChargeBack)
{
    Device master(O_NONBLOCK);
    HeldPeer peer;
    const uint64_t conn = adopt(master, peer);
    ASSERT_NE(conn, 0u);
    const uint32_t bound = send_queue_bytes(master);
    // unreadable: the copy fails after the charge
    constexpr size_t kLen = 1u << 20;
    void *none =
        ::mmap(nullptr, kLen, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(none, MAP_FAILED);
    smbd_iovec iov{reinterpret_cast<uintptr_t>(none), kLen};
    smbd_send_entry e{};
    e.conn_id = conn;
    e.iov_ptr = reinterpret_cast<uintptr_t>(&iov);
    e.iov_count = 1;
    for (uint32_t i = 0; i < 2 * bound / iov.len; i++) {
        uint32_t done = 0;
        ASSERT_EQ(master.send_pdu_raw({&e, 1}, done), EFAULT) << i;
    }
    ::munmap(none, kLen);
    uint64_t n = 0;
    int err = 0;
    EXPECT_EQ(fill(master, conn, n, kPduSize, err), bound);
    EXPECT_EQ(err, EAGAIN);
    peer.leave = true;
    EXPECT_EQ(verdict(peer.result), "");
}

// A connection that ends with its queue full says so with DISCONNECTED
// alone: what teardown frees makes no room for anyone. Once DISCONNECT
// closed it, a PDU is refused as for a gone connection, not a full one.
TEST_F(SendQueue, NoSendRoomAfterTheConnectionEnds)
{
    Device master(O_NONBLOCK);
    HeldPeer peer;
    const uint64_t conn = adopt(master, peer);
    ASSERT_NE(conn, 0u);
    uint64_t n = 0;
    int err = 0;
    fill(master, conn, n, kPduSize, err);
    ASSERT_EQ(err, EAGAIN);
    ASSERT_EQ(master.disconnect(conn), 0);
    EXPECT_EQ(master.send_pdu(conn, test_pdu(kSession, n, 64)), ENOTCONN);
    peer.leave = true;
    EXPECT_EQ(verdict(peer.result), "");
    auto ev = next_event(master);
    ASSERT_TRUE(ev) << "no DISCONNECTED";
    EXPECT_EQ(ev->type(), SMBD_EVENT_DISCONNECTED) << describe(*ev);
    EXPECT_TRUE(stays_quiet(master, 300ms));
}

// A memory cgroup of cgroup v2 that this process runs in while it lives;
// ok() is false when the kernel offers none.
class MemoryCgroup {
  public:
    MemoryCgroup()
    {
        if (access((root_ + "/cgroup.controllers").c_str(), F_OK) != 0) {
            ::mkdir(root_.c_str(), 0755);
            if (::mount("none", root_.c_str(), "cgroup2", 0, nullptr) != 0)
                return;
            mounted_ = true;
        }
        if (!write(root_ + "/cgroup.subtree_control", "+memory") ||
            (::mkdir(dir().c_str(), 0755) != 0 && errno != EEXIST) ||
            !write(dir() + "/cgroup.procs", std::to_string(getpid())))
            return;
        ok_ = true;
    }
    ~MemoryCgroup()
    {
        if (ok_)
            (void)write(root_ + "/cgroup.procs", std::to_string(getpid()));
        ::rmdir(dir().c_str());
        if (mounted_)
            ::umount(root_.c_str());
    }
    bool ok() const { return ok_; }
    int64_t current() const
    {
        std::ifstream f(dir() + "/memory.current");
        int64_t v = -1;
        f >> v;
        return v;
    }

  private:
    std::string dir() const { return root_ + "/smbd-send-charge"; }
    static bool write(const std::string &path, const std::string &value)
    {
        std::ofstream f(path);
        f << value;
        f.flush();
        return bool(f);
    }
    std::string root_ = "/sys/fs/cgroup";
    bool mounted_ = false;
    bool ok_ = false;
};

using SendCharge = Scenario;

// PDUs the peer gives no credits for stay queued in the kernel; their
// copies count against the sender's memory cgroup.
TEST_F(SendCharge, QueuedPdusCountAgainstTheSendersMemoryCgroup)
{
    MemoryCgroup cg;
    ASSERT_TRUE(cg.ok()) << "no cgroup v2 memory controller";
    Device master(O_NONBLOCK);
    HeldPeer peer;
    const uint64_t conn = adopt(master, peer);
    ASSERT_NE(conn, 0u);

    // within the connection's bound
    constexpr int kPdus = 4;
    const auto pdu = test_pdu(kSession, 1, 1u << 20);
    const int64_t before = cg.current();
    for (int i = 0; i < kPdus; i++)
        ASSERT_EQ(master.send_pdu(conn, pdu), 0) << i;
    const int64_t after = cg.current();
    peer.leave = true;
    EXPECT_EQ(verdict(peer.result), "");
    ASSERT_GE(before, 0);
    // a few fragments went on the credits the peer had granted
    EXPECT_GE(after - before, int64_t{kPdus - 1} << 20)
        << "memory.current went from " << before << " to " << after;
}

} // namespace
} // namespace scenario
