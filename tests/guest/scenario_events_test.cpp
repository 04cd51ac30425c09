// The ioctl behaviour only a peer can provoke: event order per connection,
// poll readiness, SEND_DONE, DISCONNECT, the accept timeout, and GET_EVENTS
// when the data area is too small, the events pointer is bad, the queue
// overflows, or a signal interrupts its wait.
#include <atomic>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <poll.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <thread>
#include <unistd.h>

#include "scenario.h"

namespace scenario {
namespace {

constexpr uint64_t kSession = 0x6000000000000006ull;
constexpr uint64_t kBadPointer = 0xffff800000000000ull;

// A bound channel whose SESSION_SETUP the test answered; the peer's
// @then runs on the bound client.
class BoundEvents : public Scenario {
  protected:
    void SetUp() override
    {
        Scenario::SetUp();
        ASSERT_TRUE(master_.ok());
        ASSERT_EQ(master_.set_params(fast_params()), 0);
        ASSERT_EQ(master_.register_session(kSession), 0);
    }

    // A peer still waiting is released: the go-ahead, and its connection
    // ends with the master's file.
    void TearDown() override
    {
        go_ = true;
        master_.close();
        if (client_.valid())
            client_.wait();
        Scenario::TearDown();
    }

    void start(std::function<std::string(Client &)> then,
               const PeerOptions &opt = {})
    {
        client_ = peer([then = std::move(then), opt]() -> std::string {
            auto c = bound_client(kSession, opt);
            if (!c)
                return c.error().message;
            return then(**c);
        });
        auto ch = next_event(master_);
        ASSERT_TRUE(ch) << "no NEW_CHANNEL; the peer: " << verdict(client_);
        ASSERT_EQ(ch->type(), SMBD_EVENT_NEW_CHANNEL) << describe(*ch);
        conn_ = ch->conn_id();
        max_pdu_ = ch->raw.u.new_channel.max_pdu_size;
        ASSERT_EQ(answer_session_setup(master_, *ch, kSession), 0);
    }

    Device master_{O_NONBLOCK};
    uint64_t conn_ = 0;
    uint32_t max_pdu_ = 0; // what NEW_CHANNEL said SEND_PDU takes
    // the peer's progress and the test's go-ahead, for peers that wait
    std::atomic<bool> received_{false};
    std::atomic<bool> go_{false};
    // last: its destructor waits for the peer, which may use the above
    PeerResult client_;
};

using EventOrder = Scenario;

// The peer does not wait for the SESSION_SETUP answer: its PDUs and its
// disconnect are all queued before the smbd side reads anything. So the PDU
// events are read, and released, after the connection's teardown finished:
// the release must not touch the connection's work items any more.
TEST_F(EventOrder, NewChannelFirstThenPdusInOrderThenDisconnectedLast)
{
    Device master(O_NONBLOCK);
    ASSERT_EQ(master.set_params(fast_params()), 0);
    ASSERT_EQ(master.register_session(kSession), 0);
    ASSERT_TRUE(stays_quiet(master, 0ms)) << "POLLIN with nothing queued";

    const std::vector<uint32_t> sizes = {kHeader + 1, 3000, 70000};
    auto client = peer([&]() -> std::string {
        auto c = negotiated_client();
        if (!c)
            return "connect and negotiate: " + c.error().message;
        if (auto st = (*c)->send_pdu(session_setup_request(true, kSession));
            !st)
            return "SESSION_SETUP: " + st.error().message;
        for (size_t i = 0; i < sizes.size(); i++)
            if (auto st = (*c)->send_pdu(test_pdu(kSession, i, sizes[i])); !st)
                return "PDU " + std::to_string(i) + ": " + st.error().message;
        (*c)->close();
        return "";
    });
    EXPECT_EQ(verdict(client), "");
    ASSERT_TRUE(settled()) << "the connection did not end";

    EXPECT_TRUE(master.poll_in(0) & POLLIN) << "no POLLIN with events queued";
    std::vector<Event> evs;
    ASSERT_EQ(master.get_events(evs), 0);
    ASSERT_EQ(evs.size(), sizes.size() + 2) << describe(evs);
    EXPECT_EQ(evs.front().type(), SMBD_EVENT_NEW_CHANNEL) << describe(evs);
    for (size_t i = 0; i < sizes.size(); i++) {
        EXPECT_EQ(evs[i + 1].type(), SMBD_EVENT_PDU_RECEIVED) << describe(evs);
        EXPECT_TRUE(evs[i + 1].data == test_pdu(kSession, i, sizes[i]))
            << "PDU " << i << " out of order or changed: " << describe(evs);
    }
    EXPECT_EQ(evs.back().type(), SMBD_EVENT_DISCONNECTED) << describe(evs);
    EXPECT_EQ(evs.back().raw.u.disconnected.reason, SMBD_REASON_PEER);
    for (const Event &ev : evs)
        EXPECT_EQ(ev.conn_id(), evs.front().conn_id());
    EXPECT_TRUE(stays_quiet(master, 0ms)) << "POLLIN after everything was read";
}

// The syscall a thread is blocked in, from /proc (-1 when running).
long blocked_syscall(pid_t tid)
{
    std::ifstream f("/proc/self/task/" + std::to_string(tid) + "/syscall");
    long nr = -1;
    return f >> nr ? nr : -1;
}

std::atomic<bool> signal_handled{false};

// A signal whose handler was installed with SA_RESTART does not end a
// blocking GET_EVENTS: the call restarts and returns the event that comes
// after it.
TEST_F(BoundEvents, BlockingGetEventsRestartsAfterASignal)
{
    const auto pdu = test_pdu(kSession, 3, 200);
    ASSERT_NO_FATAL_FAILURE(start([this, pdu](Client &c) -> std::string {
        if (auto got = c.recv_pdu(20s); !got)
            return "no PDU from smbd: " + got.error().message;
        if (auto st = c.send_pdu(pdu); !st)
            return "PDU: " + st.error().message;
        while (!go_ && c.connected()) {
            c.poll_events();
            std::this_thread::sleep_for(10ms);
        }
        return "";
    }));
    struct sigaction sa = {}, old = {};
    sa.sa_handler = [](int) { signal_handled = true; };
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    signal_handled = false;
    ASSERT_EQ(sigaction(SIGUSR1, &sa, &old), 0);
    const int fl = fcntl(master_.fd(), F_GETFL);
    ASSERT_EQ(fcntl(master_.fd(), F_SETFL, fl & ~O_NONBLOCK), 0);

    std::atomic<pid_t> tid{0};
    int rc = -1;
    std::vector<Event> evs;
    std::thread reader([&] {
        tid = gettid();
        rc = master_.get_events(evs);
    });
    // signalled once it waits in the ioctl, not before it got there
    for (int i = 0; i < 2000 && blocked_syscall(tid) != SYS_ioctl; i++)
        std::this_thread::sleep_for(5ms);
    EXPECT_EQ(blocked_syscall(tid), SYS_ioctl) << "the reader never blocked";
    pthread_kill(reader.native_handle(), SIGUSR1);
    for (int i = 0; i < 2000 && !signal_handled; i++)
        std::this_thread::sleep_for(5ms);
    EXPECT_TRUE(signal_handled);
    // the peer answers this PDU with the one the reader waits for
    EXPECT_EQ(master_.send_pdu(conn_, pdu), 0);
    reader.join();
    fcntl(master_.fd(), F_SETFL, fl);
    sigaction(SIGUSR1, &old, nullptr);

    EXPECT_EQ(rc, 0) << "GET_EVENTS ended with the signal: " << strerror(rc);
    ASSERT_EQ(evs.size(), 1u) << describe(evs);
    EXPECT_EQ(evs[0].type(), SMBD_EVENT_PDU_RECEIVED) << describe(evs);
    EXPECT_TRUE(evs[0].data == pdu);
    go_ = true;
    EXPECT_EQ(verdict(client_), "");
}

TEST_F(BoundEvents, SendWithNotifyReportsSendDoneWithItsUserData)
{
    const auto pdu = test_pdu(kSession, 7, 5000);
    // the client stays until smbd disconnects: a client that closed as
    // soon as it had the PDU could leave the last SEND unacknowledged, and
    // its SEND_DONE would rightly report the connection reset
    ASSERT_NO_FATAL_FAILURE(start([pdu](Client &c) -> std::string {
        auto got = c.recv_pdu(10s);
        if (!got)
            return "no PDU from smbd: " + got.error().message;
        if (*got != pdu)
            return "the PDU arrived changed";
        if (auto st = c.wait_peer_disconnect(10s); !st)
            return "expected the server to disconnect: " + st.error().message;
        return "";
    }));
    smbd::device::SendEntry e;
    e.conn_id = conn_;
    e.user_data = 0xfeedface12345678ull;
    e.flags = SMBD_SEND_NOTIFY;
    e.iov = {std::span(pdu).first(100), std::span(pdu).subspan(100)};
    uint32_t done = 0;
    ASSERT_EQ(master_.send_pdu(std::span(&e, 1), &done), 0);
    EXPECT_EQ(done, 1u);

    auto sent = next_event(master_);
    ASSERT_TRUE(sent);
    EXPECT_EQ(sent->type(), SMBD_EVENT_SEND_DONE) << describe(*sent);
    EXPECT_EQ(sent->conn_id(), conn_);
    EXPECT_EQ(sent->raw.user_data, e.user_data);
    EXPECT_EQ(sent->raw.status, 0);
    ASSERT_EQ(master_.disconnect(conn_), 0);
    EXPECT_EQ(verdict(client_), "");
    auto gone = next_event(master_);
    ASSERT_TRUE(gone);
    EXPECT_EQ(gone->type(), SMBD_EVENT_DISCONNECTED) << describe(*gone);
    EXPECT_EQ(gone->raw.u.disconnected.reason, SMBD_REASON_LOCAL);
}

TEST_F(BoundEvents, DisconnectIoctlEndsTheConnectionForBothSides)
{
    ASSERT_NO_FATAL_FAILURE(start([](Client &c) -> std::string {
        if (auto st = c.wait_peer_disconnect(10s); !st)
            return "expected the server to disconnect: " + st.error().message;
        return "";
    }));
    ASSERT_EQ(master_.disconnect(conn_), 0);
    auto gone = next_event(master_);
    ASSERT_TRUE(gone);
    EXPECT_EQ(gone->type(), SMBD_EVENT_DISCONNECTED) << describe(*gone);
    EXPECT_EQ(gone->conn_id(), conn_);
    EXPECT_EQ(gone->raw.u.disconnected.reason, SMBD_REASON_LOCAL);
    EXPECT_EQ(verdict(client_), "");
    EXPECT_TRUE(stays_quiet(master_));
    EXPECT_EQ(master_.disconnect(conn_), ENOENT);
    EXPECT_EQ(delta("disconnect_local"), 1);
}

// The peer closes while PDUs stream to it: the sends in flight fail or
// are flushed, and the connection ends as the peer's disconnect, not as an
// RDMA error. On iWARP the failed sends come before the CM's event
// (soft-iWARP completes them with LOC_QP_OP_ERR once the stream is gone),
// which then names the cause.
TEST_F(BoundEvents, PeerClosingMidStreamIsThePeersDisconnect)
{
    const uint32_t size = PeerOptions::default_connect().max_fragmented_size;
    ASSERT_NO_FATAL_FAILURE(start([](Client &c) -> std::string {
        auto got = c.recv_pdu(10s);
        if (!got)
            return "no PDU from smbd: " + got.error().message;
        c.close();
        return "";
    }));
    const auto pdu = test_pdu(kSession, 1, size);
    smbd_info info{};
    ASSERT_EQ(master_.info(info), 0);
    // as many as the connection's send queue holds, so that no SEND_ROOM
    // comes; the peer may be gone before the last is queued
    for (uint32_t i = 0; i < info.out_send_queue_bytes / size; i++) {
        int err = master_.send_pdu(conn_, pdu);
        if (err) {
            EXPECT_TRUE(i > 0 && (err == ENOENT || err == ENOTCONN))
                << "PDU " << i << ": " << err;
            break;
        }
    }
    auto gone = next_event(master_, 30s);
    ASSERT_TRUE(gone);
    EXPECT_EQ(gone->type(), SMBD_EVENT_DISCONNECTED) << describe(*gone);
    EXPECT_EQ(gone->raw.u.disconnected.reason, SMBD_REASON_PEER)
        << describe(*gone);
    EXPECT_EQ(verdict(client_), "");
    EXPECT_EQ(delta("disconnect_rdma_error"), 0);
}

// The limits that need a connection: the peer's MaxFragmentedSize (which
// NEW_CHANNEL tells), the PDU's own bytes, and a batch that fails part-way.
TEST_F(BoundEvents, SendPduChecksThePeersLimitTheBytesAndReportsPartialBatches)
{
    const auto pdu = test_pdu(kSession, 9, 2000);
    // neither our own MaxFragmentedSize nor the device's bound
    PeerOptions opt;
    opt.connect.max_fragmented_size = 200000;
    const uint32_t peer_max = opt.connect.max_fragmented_size;
    ASSERT_NO_FATAL_FAILURE(start(
        [pdu](Client &c) -> std::string {
            auto got = c.recv_pdu(10s);
            if (!got)
                return "no PDU from smbd: " + got.error().message;
            if (*got != pdu)
                return "the PDU arrived changed";
            if (auto more = c.recv_pdu(300ms); more)
                return "a PDU from a failed entry arrived";
            c.close();
            return "";
        },
        opt));
    EXPECT_EQ(max_pdu_, peer_max);
    std::vector<uint8_t> big(peer_max + 1);
    EXPECT_EQ(master_.send_pdu(conn_, big), EMSGSIZE);

    smbd_iovec bad{kBadPointer, 100};
    smbd_send_entry raw{};
    raw.conn_id = conn_;
    raw.iov_ptr = reinterpret_cast<uintptr_t>(&bad);
    raw.iov_count = 1;
    smbd_send_pdu req{};
    req.size = sizeof(req);
    req.count = 1;
    req.entry_size = sizeof(raw);
    req.entries_ptr = reinterpret_cast<uintptr_t>(&raw);
    EXPECT_EQ(master_.raw(SMBD_IOC_SEND_PDU, &req), EFAULT);

    // the first entry is taken, the second fails: 0 and out_done 1
    smbd::device::SendEntry good, too_big;
    good.conn_id = too_big.conn_id = conn_;
    good.iov = {std::span<const uint8_t>(pdu)};
    std::vector<uint8_t> over(peer_max + 1);
    too_big.iov = {std::span<const uint8_t>(over)};
    const smbd::device::SendEntry batch[] = {good, too_big};
    uint32_t done = 0;
    EXPECT_EQ(master_.send_pdu(std::span(batch), &done), 0);
    EXPECT_EQ(done, 1u);
    EXPECT_EQ(verdict(client_), "");
}

// A peer that claims to reassemble more than SEND_PDU ever takes: the
// bound NEW_CHANNEL reports is the device's.
TEST_F(BoundEvents, NewChannelBoundsThePeersLimitByTheDevices)
{
    PeerOptions opt;
    opt.connect.max_fragmented_size = UINT32_MAX;
    ASSERT_NO_FATAL_FAILURE(start(
        [](Client &c) -> std::string {
            c.close();
            return "";
        },
        opt));
    smbd_info info;
    ASSERT_EQ(master_.info(info), 0);
    EXPECT_EQ(max_pdu_, info.out_max_pdu_size);
    EXPECT_EQ(verdict(client_), "");
}

TEST_F(BoundEvents, TooSmallDataAreaIsEmsgsizeWithTheSizeNeeded)
{
    ASSERT_NO_FATAL_FAILURE(
        start([](Client &c) -> std::string { return echo_once(c, 0, 4096); }));
    ASSERT_TRUE(master_.poll_in(10000) & POLLIN) << verdict(client_);
    std::vector<Event> evs;
    uint32_t needed = 0;
    EXPECT_EQ(master_.get_events(evs, 1, 1024, &needed), EMSGSIZE);
    EXPECT_EQ(needed, 4096u);
    EXPECT_TRUE(evs.empty());

    auto pdu = next_event(master_);
    ASSERT_TRUE(pdu);
    ASSERT_EQ(pdu->type(), SMBD_EVENT_PDU_RECEIVED) << describe(*pdu);
    EXPECT_TRUE(pdu->data == test_pdu(kSession, 0, 4096));
    ASSERT_EQ(echo(master_, *pdu), 0);
    EXPECT_EQ(verdict(client_), "");
}

TEST_F(BoundEvents, BadEventsPointerIsEfaultAndTheEventStaysQueued)
{
    ASSERT_NO_FATAL_FAILURE(
        start([](Client &c) -> std::string { return echo_once(c, 0, 300); }));
    ASSERT_TRUE(master_.poll_in(10000) & POLLIN) << verdict(client_);
    std::vector<uint8_t> data(1 << 16);
    smbd_get_events g{};
    g.size = sizeof(g);
    g.max_events = 1;
    g.event_size = sizeof(smbd_event);
    g.events_ptr = kBadPointer;
    g.data_ptr = reinterpret_cast<uintptr_t>(data.data());
    g.data_len = uint32_t(data.size());
    EXPECT_EQ(master_.raw(SMBD_IOC_GET_EVENTS, &g), EFAULT);

    EXPECT_TRUE(master_.poll_in(0) & POLLIN) << "the event is gone";
    auto pdu = next_event(master_);
    ASSERT_TRUE(pdu);
    ASSERT_EQ(pdu->type(), SMBD_EVENT_PDU_RECEIVED) << describe(*pdu);
    EXPECT_TRUE(pdu->data == test_pdu(kSession, 0, 300));
    ASSERT_EQ(echo(master_, *pdu), 0);
    EXPECT_EQ(verdict(client_), "");
}

// Queues @n SEND_DONE notifications of small PDUs on the connection.
void send_notified(Device &dev, uint64_t conn, uint32_t n,
                   const std::vector<uint8_t> &pdu)
{
    for (uint32_t i = 0; i < n;) {
        std::vector<smbd::device::SendEntry> batch;
        for (; i < n && batch.size() < 64; i++) {
            smbd::device::SendEntry e;
            e.conn_id = conn;
            e.user_data = i;
            e.flags = SMBD_SEND_NOTIFY;
            e.iov = {pdu};
            batch.push_back(e);
        }
        uint32_t done = 0;
        ASSERT_EQ(dev.send_pdu(batch, &done), 0);
        ASSERT_EQ(done, batch.size());
    }
}

// Reads SEND_DONE records until @n were seen or something else comes.
std::vector<Event> read_events(Device &dev, size_t n)
{
    std::vector<Event> evs;
    while (evs.size() < n) {
        if (dev.get_events(evs) != 0)
            break;
    }
    return evs;
}

class Overflow : public BoundEvents {
  protected:
    // The peer reads @n PDUs, says so, and after the test's go ahead runs
    // @then.
    void start_reader(uint32_t n, std::function<std::string(Client &)> then)
    {
        start([this, n, then = std::move(then)](Client &c) -> std::string {
            for (uint32_t i = 0; i < n; i++)
                if (auto got = c.recv_pdu(20s); !got)
                    return "PDU " + std::to_string(i) + " of " +
                           std::to_string(n) + ": " + got.error().message;
            received_ = true;
            while (!go_ && c.connected()) {
                c.poll_events();
                std::this_thread::sleep_for(10ms);
            }
            return then(c);
        });
    }

    // Every send completed, so every notification was queued or lost.
    void wait_all_sent(uint32_t n)
    {
        for (int i = 0; i < 1000 && !received_; i++)
            std::this_thread::sleep_for(20ms);
        ASSERT_TRUE(received_) << verdict(client_);
        // + the NEGOTIATE and SESSION_SETUP responses
        ASSERT_EQ(await_delta("pdus_sent", int64_t(n) + 2), int64_t(n) + 2);
        std::this_thread::sleep_for(100ms);
    }

    uint32_t max_events()
    {
        smbd_info info{};
        EXPECT_EQ(master_.info(info), 0);
        return info.out_max_events;
    }

    // The peer reads @n PDUs, then echoes one and leaves.
    void start_echoer(uint32_t n)
    {
        start_reader(n, [](Client &c) -> std::string {
            std::string e = echo_once(c, 1, 200);
            c.close();
            return e;
        });
    }

    // @pdu is the peer's echo: answered, the peer leaves, and nothing was
    // dropped for want of memory.
    void echo_and_see_the_peer_leave(const Event &pdu)
    {
        ASSERT_EQ(pdu.type(), SMBD_EVENT_PDU_RECEIVED) << describe(pdu);
        ASSERT_EQ(echo(master_, pdu), 0);
        EXPECT_EQ(verdict(client_), "");
        auto gone = next_event(master_);
        ASSERT_TRUE(gone);
        EXPECT_EQ(gone->raw.u.disconnected.reason, SMBD_REASON_PEER)
            << describe(*gone);
        EXPECT_EQ(delta("disconnect_no_memory"), 0);
    }

    const std::vector<uint8_t> small_ = test_pdu(kSession, 0, kHeader + 8);
};

TEST_F(Overflow, LostSendDonesAreCountedAndTheConnectionLives)
{
    const uint32_t queue = max_events(), lost = 76, n = queue + lost;
    ASSERT_NO_FATAL_FAILURE(start_echoer(n));
    ASSERT_NO_FATAL_FAILURE(send_notified(master_, conn_, n, small_));
    ASSERT_NO_FATAL_FAILURE(wait_all_sent(n));

    std::vector<Event> evs = read_events(master_, queue + 1);
    ASSERT_EQ(evs.size(), queue + 1);
    EXPECT_EQ(evs[0].type(), SMBD_EVENT_OVERFLOW) << describe(evs[0]);
    EXPECT_EQ(evs[0].raw.u.overflow.lost, lost);
    EXPECT_EQ(evs[0].conn_id(), 0u);
    for (uint32_t i = 0; i < queue; i++) {
        const Event &ev = evs[i + 1];
        ASSERT_EQ(ev.type(), SMBD_EVENT_SEND_DONE) << describe(ev);
        ASSERT_EQ(ev.raw.user_data, i) << "SEND_DONEs out of order";
        ASSERT_EQ(ev.raw.status, 0);
    }
    EXPECT_TRUE(stays_quiet(master_, 0ms));

    // only notifications were lost: the connection carries on
    go_ = true;
    auto pdu = next_event(master_);
    ASSERT_TRUE(pdu) << verdict(client_);
    echo_and_see_the_peer_leave(*pdu);
}

// A connection bounds its own unread PDUs, so a queue full of SEND_DONEs
// does not drop one: it is queued behind them and the connection lives.
TEST_F(Overflow, PduIsQueuedBehindAFullQueueOfSendDones)
{
    const uint32_t queue = max_events(), n = queue + 1;
    ASSERT_NO_FATAL_FAILURE(start_echoer(n));
    ASSERT_NO_FATAL_FAILURE(send_notified(master_, conn_, n, small_));
    ASSERT_NO_FATAL_FAILURE(wait_all_sent(n));
    go_ = true; // the queue is full of SEND_DONEs; one was lost
    // the PDU reached the driver (+ the NEGOTIATE and SESSION_SETUP)
    ASSERT_EQ(await_delta("pdus_received", 3), 3) << verdict(client_);

    std::vector<Event> evs = read_events(master_, queue + 2);
    ASSERT_EQ(evs.size(), queue + 2)
        << "expected OVERFLOW, every SEND_DONE queued and the PDU_RECEIVED";
    EXPECT_EQ(evs[0].type(), SMBD_EVENT_OVERFLOW) << describe(evs[0]);
    EXPECT_EQ(evs[0].raw.u.overflow.lost, 1u) << "only a SEND_DONE is lost";
    for (uint32_t i = 0; i < queue; i++)
        ASSERT_EQ(evs[i + 1].type(), SMBD_EVENT_SEND_DONE)
            << describe(evs[i + 1]);
    echo_and_see_the_peer_leave(evs[queue + 1]);
}

using AcceptTimeout = Scenario;

TEST_F(AcceptTimeout, UnclaimedNewConnectionIsDropped)
{
    Params params = fast_params();
    params.accept_timeout_ms = 300;
    Device master(O_NONBLOCK);
    ASSERT_EQ(master.set_params(params), 0);
    ASSERT_EQ(master.listen(), 0);
    auto client = peer([]() -> std::string {
        auto c = negotiated_client();
        if (!c)
            return "connect and negotiate: " + c.error().message;
        auto ss = (*c)->session_setup(session_setup_options(false, 0));
        if (ss)
            return "SESSION_SETUP answered though nobody claimed it";
        if (!(*c)->observed().peer_disconnected)
            return "expected the server to disconnect: " + ss.error().message;
        return "";
    });
    auto offer = next_event(master);
    ASSERT_TRUE(offer) << verdict(client);
    ASSERT_EQ(offer->type(), SMBD_EVENT_NEW_CONNECTION) << describe(*offer);
    EXPECT_EQ(verdict(client), "");
    ASSERT_TRUE(settled());

    uint64_t id = 0;
    EXPECT_EQ(master.accept(offer->raw.u.new_connection.token, id), ENOENT);
    EXPECT_TRUE(stays_quiet(master));
    EXPECT_EQ(delta("disconnect_accept_timeout"), 1);
}

} // namespace
} // namespace scenario
