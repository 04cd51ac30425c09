// RDMA_RW on a live connection, driven op by op from the smbd side: batches,
// the bound on operations whose RDMA_DONE is unread, RDMA_DONE order and
// contents, the bytes landing in the client's memory, and the counters.
// The peer is the client tool's RdmaIo with one SMB2 READ outstanding.
#include <fcntl.h>

#include <atomic>
#include <cstring>
#include <thread>

#include "rdma_io.h"
#include "scenario.h"
#include "smb2_rw.h"

namespace scenario {
namespace {

using smbd::client::IoOptions;
using smbd::client::RdmaIo;
using smbd::device::PoolMapping;
using smbd::device::RwOp;
using namespace smbd::smb2rw;

constexpr uint64_t kSession = 0x7000000000000007ull;
constexpr uint32_t kSize = 4096;

uint8_t pattern(uint64_t op, uint32_t i)
{
    return uint8_t(op * 131 + i * 7 + 1);
}

class RdmaLimits : public Scenario {
  protected:
    void SetUp() override
    {
        Scenario::SetUp();
        ASSERT_TRUE(master_.ok());
        ASSERT_EQ(master_.set_params(fast_params()), 0);
        ASSERT_EQ(master_.register_session(kSession), 0);
        ASSERT_EQ(pool_.map(master_), 0);
        ASSERT_EQ(master_.info(info_), 0);
    }

    void TearDown() override
    {
        go_ = true;
        master_.close();
        if (client_.valid())
            client_.wait();
        Scenario::TearDown();
    }

    // The peer binds, sends one SMB2 READ of @size bytes over RDMA_V1 in
    // @descriptors descriptors, runs @meanwhile, and checks that its memory
    // holds expected() once the answer came, and nothing was written
    // around it.
    void start_reader(uint32_t size = kSize, uint32_t descriptors = 1,
                      std::function<std::string(Client &)> meanwhile = {})
    {
        client_ = peer([this, size, descriptors,
                        meanwhile = std::move(meanwhile)]() -> std::string {
            auto c = bound_client(kSession);
            if (!c)
                return c.error().message;
            IoOptions o;
            o.dialect = SMB2_DIALECT_311;
            o.channel = CHANNEL_RDMA_V1;
            o.max_size = size;
            o.descriptors = descriptors;
            auto io = RdmaIo::create(**c, o);
            if (!io)
                return io.error().message;
            (*io)->poison(0, size);
            if (auto st = (*io)->start(0, false, 0, size); !st)
                return st.error().message;
            if (meanwhile)
                if (std::string e = meanwhile(**c); !e.empty())
                    return e;
            // the smbd side first runs out_max_events operations, which
            // take minutes on a debug kernel
            auto done = (*io)->finish(600s);
            if (!done)
                return done.error().message;
            if (done->status != 0 || done->bytes != size)
                return "READ answered with status " +
                       std::to_string(done->status) + ", " +
                       std::to_string(done->bytes) + " bytes";
            std::vector<uint8_t> got;
            for (auto span : (*io)->data(0, size))
                got.insert(got.end(), span.begin(), span.end());
            if (got != expected_)
                return "the data read is not what the smbd side wrote";
            if (auto st = (*io)->check_untouched(0, size); !st)
                return st.error().message;
            while (!go_)
                std::this_thread::sleep_for(10ms);
            return "";
        });
        auto ch = next_event(master_);
        ASSERT_TRUE(ch) << "no NEW_CHANNEL; the peer: " << verdict(client_);
        ASSERT_EQ(ch->type(), SMBD_EVENT_NEW_CHANNEL) << describe(*ch);
        conn_ = ch->conn_id();
        ASSERT_EQ(answer_session_setup(master_, *ch, kSession), 0);
        auto pdu = next_event(master_);
        ASSERT_TRUE(pdu && pdu->type() == SMBD_EVENT_PDU_RECEIVED)
            << "no READ request; the peer: " << verdict(client_);
        request_ = pdu->data;
        ASSERT_EQ(parse_read_request(request_, SMB2_DIALECT_311, read_),
                  Rule::ok);
        ASSERT_EQ(read_.channel, CHANNEL_RDMA_V1);
    }

    // Operation @n: buffer n % count, filled with its pattern, to the peer.
    RwOp write_op(uint64_t n)
    {
        uint32_t buf = uint32_t(n % pool_.buffer_count());
        for (uint32_t i = 0; i < kSize; i++)
            pool_.buffer(buf)[i] = pattern(n, i);
        RwOp op;
        op.conn_id = conn_;
        op.user_data = n;
        op.slices = {{buf, 0, kSize, 0}};
        op.descriptors = read_.channel_info;
        op.direction = SMBD_RW_WRITE_TO_PEER;
        return op;
    }

    // No RDMA operation in flight any more, within a few seconds.
    static bool settle_rdma()
    {
        for (int i = 0; i < 500; i++) {
            if (Counters::now()["rdma_inflight"] == 0)
                return true;
            std::this_thread::sleep_for(10ms);
        }
        return false;
    }

    // Operations from @n up to out_max_events, in batches, each done before
    // the next reuses the pool buffers: their RDMA_DONEs all unread.
    void run_unread_writes(uint64_t &n)
    {
        const uint32_t limit = info_.out_max_events;
        while (n < limit) {
            std::vector<RwOp> ops;
            for (uint32_t i = 0; i < info_.out_max_batch && n + i < limit; i++)
                ops.push_back(write_op(n + i));
            uint32_t done = 0;
            ASSERT_EQ(master_.rdma_rw(ops, &done), 0);
            ASSERT_EQ(done, ops.size());
            n += done;
            ASSERT_TRUE(settle_rdma());
        }
    }

    // Operation @n writes what the peer's READ gets, then the READ's
    // response goes, and the peer checks its memory.
    void answer_read(uint64_t n)
    {
        std::vector<RwOp> one = {write_op(n)};
        const uint8_t *data = pool_.buffer(uint32_t(n % pool_.buffer_count()));
        expected_.assign(data, data + kSize);
        uint32_t done = 0;
        ASSERT_EQ(master_.rdma_rw(one, &done), 0);
        expect_done(n, n + 1);
        auto resp =
            build_read_response(read_.hdr, credit_response(read_.hdr), kSize);
        ASSERT_EQ(master_.send_pdu(conn_, resp), 0);
        go_ = true;
        EXPECT_EQ(verdict(client_), "");
    }

    // Every RDMA_DONE of operations [@from, @to), in order.
    void expect_done(uint64_t from, uint64_t to)
    {
        for (uint64_t n = from; n < to; n++) {
            auto ev = next_event(master_);
            ASSERT_TRUE(ev) << "no RDMA_DONE for operation " << n;
            ASSERT_EQ(ev->type(), SMBD_EVENT_RDMA_DONE) << describe(*ev);
            EXPECT_EQ(ev->raw.user_data, n);
            EXPECT_EQ(ev->raw.status, 0);
            EXPECT_EQ(ev->raw.u.rdma_done.bytes, kSize);
            EXPECT_EQ(ev->conn_id(), conn_);
        }
    }

    Device master_{O_NONBLOCK};
    PoolMapping pool_;
    smbd_info info_{};
    uint64_t conn_ = 0;
    std::vector<uint8_t> request_;
    ReadRequest read_;
    std::vector<uint8_t> expected_; // set before the READ response
    std::atomic<bool> go_{false};
    std::atomic<bool> full_{false}; // the smbd side's events fill the queue
    PeerResult client_;
};

// out_max_events operations may await their RDMA_DONE; the next one is
// EAGAIN until events are read. Each batch starts whole, the completions
// come in order, and the peer holds the last operation's bytes.
TEST_F(RdmaLimits, UnreadRdmaDoneIsBoundedAndEveryOperationCompletesInOrder)
{
    start_reader();
    const uint32_t limit = info_.out_max_events;
    uint64_t n = 0;
    ASSERT_NO_FATAL_FAILURE(run_unread_writes(n));
    uint32_t done = 7;
    std::vector<RwOp> one = {write_op(n)};
    EXPECT_EQ(master_.rdma_rw(one, &done), EAGAIN);
    EXPECT_EQ(done, 0u);

    expect_done(0, limit);
    ASSERT_NO_FATAL_FAILURE(answer_read(n));
    EXPECT_EQ(delta("rdma_writes"), int64_t(limit) + 1);
    EXPECT_EQ(delta("rdma_write_bytes"), (int64_t(limit) + 1) * kSize);
    EXPECT_EQ(delta("rdma_errors"), 0);
    EXPECT_EQ(Counters::now()["rdma_inflight"], 0u);
}

// RDMA_DONEs never crowd out a PDU: with out_max_events of them unread,
// the peer's next request is still queued, behind them, and answered.
TEST_F(RdmaLimits, UnreadRdmaDonesDoNotCostTheConnectionItsNextPdu)
{
    start_reader(kSize, 1, [this](Client &c) -> std::string {
        while (!full_ && c.connected()) {
            c.poll_events(); // keepalives are answered meanwhile
            std::this_thread::sleep_for(10ms);
        }
        // the smbd side reads every RDMA_DONE before the PDU: on the
        // debug kernel that took more than echo_once()'s usual wait, and
        // the peer gave up on an answer that was still to come
        return echo_once(c, 1, 200, 120s);
    });
    uint64_t n = 0;
    ASSERT_NO_FATAL_FAILURE(run_unread_writes(n));
    // the last RDMA_DONE is queued just after rdma_inflight drops
    std::this_thread::sleep_for(100ms);
    full_ = true;
    // + the NEGOTIATE, SESSION_SETUP and READ
    ASSERT_EQ(await_delta("pdus_received", 4), 4) << verdict(client_);

    expect_done(0, n);
    auto pdu = next_event(master_);
    ASSERT_TRUE(pdu) << "no PDU after the RDMA_DONEs: " << verdict(client_);
    ASSERT_EQ(pdu->type(), SMBD_EVENT_PDU_RECEIVED) << describe(*pdu);
    ASSERT_EQ(echo(master_, *pdu), 0);
    ASSERT_NO_FATAL_FAILURE(answer_read(n));
    EXPECT_EQ(delta("disconnect_no_memory"), 0);
}

// A slice total beyond the negotiated MaxReadWriteSize is EMSGSIZE; an
// operation naming another file's connection is ENOENT; neither starts,
// and the connection serves the next operation.
TEST_F(RdmaLimits, OversizedAndForeignOperationsDoNotStart)
{
    start_reader();
    RwOp op = write_op(0);
    op.slices.clear();
    const uint32_t mrw = fast_params().max_read_write_size;
    for (uint32_t b = 0, left = mrw + 1; left; b++) {
        uint32_t len = std::min(left, pool_.buffer_size());
        op.slices.push_back({b, 0, len, 0});
        left -= len;
    }
    uint32_t done = 7;
    std::vector<RwOp> ops = {op};
    EXPECT_EQ(master_.rdma_rw(ops, &done), EMSGSIZE);
    EXPECT_EQ(done, 0u);

    Device other(O_NONBLOCK);
    ops = {write_op(0)};
    EXPECT_EQ(other.rdma_rw(ops, &done), ENOENT);
    EXPECT_TRUE(stays_quiet(master_));
    EXPECT_EQ(delta("rdma_writes"), 0);

    // the connection is unharmed: a good operation still completes
    ops = {write_op(0)};
    expected_.assign(pool_.buffer(0), pool_.buffer(0) + kSize);
    ASSERT_EQ(master_.rdma_rw(ops, &done), 0);
    expect_done(0, 1);
    ASSERT_EQ(master_.send_pdu(conn_, build_read_response(read_.hdr, 1, kSize)),
              0);
    go_ = true;
    EXPECT_EQ(verdict(client_), "");
    EXPECT_EQ(delta("rdma_writes"), 1);
}

// After DISCONNECT no operation starts: ENOTCONN while the connection is
// torn down, ENOENT once it is gone; no RDMA_DONE, nothing moved.
TEST_F(RdmaLimits, NothingStartsAfterDisconnect)
{
    start_reader();
    ASSERT_EQ(master_.disconnect(conn_), 0);
    std::vector<RwOp> ops = {write_op(0)};
    uint32_t done = 7;
    int err = master_.rdma_rw(ops, &done);
    EXPECT_TRUE(err == ENOTCONN || err == ENOENT) << strerror(err);
    EXPECT_EQ(done, 0u);
    auto ev = next_event(master_);
    ASSERT_TRUE(ev);
    EXPECT_EQ(ev->type(), uint32_t(SMBD_EVENT_DISCONNECTED)) << describe(*ev);
    EXPECT_EQ(delta("rdma_writes"), 0);
    EXPECT_EQ(delta("rdma_errors"), 0);
    go_ = true;
    verdict(client_);
}

// Slices that start and end inside pages, out of buffer order, against
// descriptors that end inside pages too: the bytes arrive in slice order.
// (Where rdma_rw registers memory, each page-aligned piece is its own
// context; tests/vm/registered-rw.sh runs this with registration forced.)
TEST_F(RdmaLimits, UnalignedSlicesLandInSliceOrderAcrossDescriptors)
{
    const uint32_t size = 20000;
    start_reader(size, 3);
    const std::vector<smbd_slice> slices = {
        {5, 100, 5000, 0}, {2, 4095, 9000, 0}, {0, 1, 6000, 0}};
    expected_.clear();
    for (const auto &sl : slices)
        for (uint32_t i = 0; i < sl.length; i++) {
            uint8_t v = uint8_t(expected_.size() * 13 + 5);
            pool_.buffer(sl.buffer)[sl.offset + i] = v;
            expected_.push_back(v);
        }
    RwOp op;
    op.conn_id = conn_;
    op.user_data = 99;
    op.slices = slices;
    op.descriptors = read_.channel_info;
    op.direction = SMBD_RW_WRITE_TO_PEER;
    std::vector<RwOp> ops = {op};
    uint32_t done = 0;
    ASSERT_EQ(master_.rdma_rw(ops, &done), 0);
    auto ev = next_event(master_);
    ASSERT_TRUE(ev && ev->type() == SMBD_EVENT_RDMA_DONE);
    EXPECT_EQ(ev->raw.status, 0);
    EXPECT_EQ(ev->raw.u.rdma_done.bytes, size);
    EXPECT_EQ(ev->raw.user_data, 99u);
    ASSERT_EQ(master_.send_pdu(conn_, build_read_response(read_.hdr, 1, size)),
              0);
    go_ = true;
    EXPECT_EQ(verdict(client_), "");
    EXPECT_EQ(delta("rdma_write_bytes"), size);
}

} // namespace
} // namespace scenario
