// SMB2 WRITE and READ over RDMA end to end: the client tool's RdmaIo
// against the test responder (serving in this process) on the real driver.
// Every byte written is read back and checked, at sizes from 1 byte to the
// max read/write size across the pool's 1 MiB buffers, with one or several
// descriptors and descriptors longer than the data, on both channels; the
// client observes the server's remote invalidation; a bad token costs the
// connection, not the responder.
#include <algorithm>
#include <cstdio>
#include <thread>

#include "buffer_desc.h"
#include "io_run.h"
#include "rdma_io.h"
#include "responder.h"
#include "scenario.h"
#include "smb2_rw.h"

namespace scenario {
namespace {

using smbd::client::FileOptions;
using smbd::client::IoOptions;
using smbd::client::IoReport;
using smbd::client::RdmaIo;
using smbd::client::WriteReadOptions;
using namespace smbd::smb2rw;

constexpr uint32_t kMiB = 1u << 20;
constexpr auto kIoTimeout = 60s;

// Each test runs four times: the responder on poll() and on a tevent loop
// through libsmbd-tevent, as smbd runs; a READ's response sent with its
// RDMA WRITE, and after its RDMA_DONE (as without SMBD_FEATURE_RW_REPLY).
struct Loop {
    bool tevent;
    bool rw_reply;
};

class Rdma : public Scenario, public ::testing::WithParamInterface<Loop> {
  protected:
    void SetUp() override
    {
        Scenario::SetUp();
        log_ = std::tmpfile();
        smbd::responder::Options o;
        // a test holds back the client's credits while it fills a queue:
        // fast_params() gives it 30 s
        o.params = fast_params();
        o.fork = false;
        o.log = log_;
        o.tevent = GetParam().tevent;
        o.rw_reply = GetParam().rw_reply;
        configure(o);
        responder_ = std::make_unique<smbd::responder::Responder>(o);
        ASSERT_EQ(responder_->start(), 0);
        serving_ = std::thread([this] { run_err_ = responder_->run(); });
    }

    // what a fixture of its own changes in the responder
    virtual void configure(smbd::responder::Options &) {}

    void TearDown() override
    {
        stop();
        if (HasFailure() && log_) {
            std::rewind(log_);
            char line[512];
            std::fprintf(stderr, "responder log:\n");
            while (std::fgets(line, sizeof(line), log_))
                std::fputs(line, stderr);
        }
        if (log_)
            std::fclose(log_);
        responder_.reset();
        Scenario::TearDown();
    }

    // Stops the responder; its summary is final from then on.
    const smbd::responder::Summary &stop()
    {
        if (serving_.joinable()) {
            responder_->stop();
            serving_.join();
            EXPECT_EQ(run_err_, 0);
        }
        return responder_->summary();
    }

    // A client with a new session, on @dialects.
    std::unique_ptr<Client> session(std::vector<uint16_t> dialects = {})
    {
        PeerOptions po;
        if (!dialects.empty())
            po.smb2.dialects = dialects;
        auto c = negotiated_client(po);
        EXPECT_TRUE(c) << c.error().message;
        if (!c)
            return nullptr;
        auto ss = (*c)->session_setup(session_setup_options(false, 0));
        EXPECT_TRUE(ss) << ss.error().message;
        return ss ? std::move(*c) : nullptr;
    }

    static IoOptions io_options(Client &c, uint32_t channel, uint32_t max_size)
    {
        IoOptions o;
        auto neg = smbd::client::parse_smb2_negotiate_response(
            c.smb2_negotiate_response_bytes());
        o.dialect = neg ? neg->dialect : 0;
        o.channel = channel;
        o.max_size = max_size;
        return o;
    }

    // Write-read rounds of each size; "" or what went wrong.
    static std::string write_read(RdmaIo &io,
                                  std::initializer_list<uint32_t> sizes,
                                  IoReport &report)
    {
        FileOptions file;
        file.seed = 0x5eed0000 + io.options().descriptors;
        for (uint32_t size : sizes) {
            WriteReadOptions w;
            w.size = size;
            if (auto st =
                    smbd::client::write_read(io, file, w, kIoTimeout, report);
                !st)
                return std::to_string(size) + " bytes: " + st.error().message;
        }
        return "";
    }

    // One READ whose RDMA WRITE the client refused ended its connection,
    // and @closed more the client closed itself; stops the responder. RoCE
    // fails the server's work request: rdma_error. An iWARP RDMA WRITE
    // completes once sent, so the server may even answer the READ, and the
    // client's TERMINATE ends the connection as a reset would
    // (siw_qp_rx.c): the server sees the peer's disconnect. On RoCE the
    // READ is not answered with success.
    smbd::responder::Summary stop_after_refused_write(bool iwarp,
                                                      int64_t closed)
    {
        auto ended = [&] {
            return delta("disconnect_rdma_error") + delta("disconnect_peer");
        };
        for (int i = 0; i < 1000 && ended() < 1 + closed; i++)
            std::this_thread::sleep_for(10ms);
        smbd::responder::Summary s = stop();
        if (iwarp) {
            EXPECT_EQ(ended(), 1 + closed);
            return s;
        }
        EXPECT_EQ(s.rdma_errors, 1u);
        EXPECT_EQ(s.reasons["rdma_error"], 1u);
        EXPECT_EQ(delta("disconnect_rdma_error"), 1);
        EXPECT_EQ(delta("rdma_errors"), 1);
        return s;
    }

    // Sends a READ of d.length bytes over RDMA_V1 into @d as MessageId @id,
    // which the server must answer by dropping the connection; closes the
    // client and returns whether it was on iWARP.
    static bool read_refused(Client &c, uint64_t id, const smbd_buffer_desc &d)
    {
        uint8_t desc[SMBD_BUFFER_DESC_SIZE];
        smbd_buffer_desc_put(desc, 0, &d);
        ReadRequest r;
        r.hdr.credit_charge = uint16_t(std::max(1u, d.length / 65536));
        r.hdr.credits = r.hdr.credit_charge;
        r.hdr.message_id = id;
        r.hdr.session_id = c.session_id();
        r.length = d.length;
        r.channel = CHANNEL_RDMA_V1;
        r.channel_info = desc;
        EXPECT_TRUE(c.send_pdu(build_read_request(r)));
        // a READ it could serve would be answered, the connection go on
        auto gone = c.wait_peer_disconnect(30s);
        EXPECT_TRUE(gone) << gone.error().message;
        bool iwarp = c.iwarp();
        c.close();
        return iwarp;
    }

    FILE *log_ = nullptr;
    std::unique_ptr<smbd::responder::Responder> responder_;
    std::thread serving_;
    int run_err_ = 0;
};

// Sizes around page and pool-buffer boundaries up to the max read/write
// size, at an offset 1000 bytes short of a 1 MiB boundary.
TEST_P(Rdma, EveryByteReadBackAsWrittenFromOneByteToTheMaxSize)
{
    auto c = session();
    ASSERT_TRUE(c);
    const uint32_t max = fast_params().max_read_write_size;
    auto io =
        RdmaIo::create(*c, io_options(*c, CHANNEL_RDMA_V1_INVALIDATE, max));
    ASSERT_TRUE(io) << io.error().message;
    IoReport r;
    EXPECT_EQ(
        write_read(**io,
                   {1, 7, 4096, 65537, kMiB - 1, kMiB + 1, 3 * kMiB + 5, max},
                   r),
        "");
    const uint64_t total =
        1 + 7 + 4096 + 65537 + (kMiB - 1) + (kMiB + 1) + (3 * kMiB + 5) + max;
    EXPECT_EQ(r.bytes_verified, total);
    EXPECT_EQ(r.invalidations, (*io)->invalidation_reported() ? r.ops : 0);
    // the connection's own counters (SMBD_IOC_CONN_STATS, as smbstatus
    // reads them); the last RDMA_DONE may trail the client's last read
    const uint64_t conn = owned_connection();
    ASSERT_NE(conn, 0u) << connections();
    smbd_conn_stats st{};
    for (int i = 0; i < 500; i++) {
        ASSERT_EQ(conn_stats(conn, st), 0);
        if (st.out_rdma_write_bytes == total)
            break;
        std::this_thread::sleep_for(20ms);
    }
    EXPECT_EQ(st.out_rdma_read_bytes, total);
    EXPECT_EQ(st.out_rdma_write_bytes, total);
    EXPECT_GE(st.out_rdma_reads, 8u);
    EXPECT_GE(st.out_rdma_writes, 8u);
    EXPECT_EQ(st.out_rdma_errors, 0u);
    c->close();
    const auto &s = stop();
    EXPECT_EQ(s.writes, 8u);
    EXPECT_EQ(s.reads, 8u);
    EXPECT_EQ(s.rw_replies, GetParam().rw_reply ? 8u : 0u);
    EXPECT_EQ(s.rdma_bytes_read, total);
    EXPECT_EQ(s.rdma_bytes_written, total);
    EXPECT_EQ(s.rdma_errors, 0u);
    EXPECT_EQ(delta("rdma_read_bytes"), int64_t(total));
    EXPECT_EQ(delta("rdma_write_bytes"), int64_t(total));
    EXPECT_EQ(delta("rdma_replies"), GetParam().rw_reply ? 8 : 0);
}

// A transfer split over several descriptors, each a window of its own,
// which together describe more than the data: the server fills them in
// order and writes nothing past the data (RdmaIo checks the guards).
TEST_P(Rdma, SeveralDescriptorsLongerThanTheData)
{
    auto c = session();
    ASSERT_TRUE(c);
    for (uint32_t n : {2u, 5u, 16u}) {
        SCOPED_TRACE(std::to_string(n) + " descriptors");
        IoOptions o = io_options(*c, CHANNEL_RDMA_V1_INVALIDATE, 2 * kMiB + 3);
        o.descriptors = n;
        o.descriptor_extra = 3000;
        auto io = RdmaIo::create(*c, o);
        ASSERT_TRUE(io) << io.error().message;
        IoReport r;
        EXPECT_EQ(write_read(**io, {1, 100, kMiB + 17, 2 * kMiB + 3}, r), "");
        EXPECT_EQ(r.invalidations, (*io)->invalidation_reported() ? r.ops : 0);
    }
    c->close();
    EXPECT_EQ(stop().rdma_errors, 0u);
}

// RDMA_V1 leaves the client's memory registered: no response invalidates
// anything, on 3.1.1 as on 3.0.
TEST_P(Rdma, RdmaV1IsNeverInvalidated)
{
    for (uint16_t dialect : {SMB2_DIALECT_311, SMB2_DIALECT_300}) {
        SCOPED_TRACE(dialect);
        auto c = session({dialect});
        ASSERT_TRUE(c);
        IoOptions o = io_options(*c, CHANNEL_RDMA_V1, kMiB + 1);
        o.descriptors = 3;
        auto io = RdmaIo::create(*c, o);
        ASSERT_TRUE(io) << io.error().message;
        EXPECT_FALSE((*io)->invalidation_expected());
        IoReport r;
        EXPECT_EQ(write_read(**io, {512, kMiB + 1}, r), "");
        EXPECT_EQ(r.invalidations, 0u);
        EXPECT_EQ(c->observed().remote_invalidations, 0u);
        c->close();
    }
}

// RDMA_V1_INVALIDATE: each response is a send with invalidate of the
// first descriptor's token, a new key every request, as the client's
// receive completion reports it.
TEST_P(Rdma, ClientSeesTheFirstTokenInvalidated)
{
    auto c = session({SMB2_DIALECT_302});
    ASSERT_TRUE(c);
    IoOptions o = io_options(*c, CHANNEL_RDMA_V1_INVALIDATE, 8192);
    o.descriptors = 3;
    auto io = RdmaIo::create(*c, o);
    ASSERT_TRUE(io) << io.error().message;
    ASSERT_TRUE((*io)->invalidation_expected());
    std::vector<uint32_t> tokens;
    for (int i = 0; i < 4; i++) {
        bool write = i % 2 == 0;
        ASSERT_TRUE((*io)->start(0, write, 0, 8192));
        auto done = (*io)->finish(kIoTimeout);
        ASSERT_TRUE(done) << done.error().message;
        EXPECT_EQ(done->status, NT_STATUS_SUCCESS);
        EXPECT_EQ(done->bytes, 8192u);
        ASSERT_TRUE(done->invalidated);
        EXPECT_EQ(*done->invalidated, done->first_token);
        tokens.push_back(done->first_token);
    }
    std::sort(tokens.begin(), tokens.end());
    EXPECT_EQ(std::unique(tokens.begin(), tokens.end()), tokens.end())
        << "a token was used twice";
    EXPECT_EQ(c->observed().remote_invalidations, 4u);
    c->close();
}

// The token a response invalidated is dead though the client never let go
// of its memory: a READ that names it again costs the connection, as the
// server's RDMA WRITE fails. This is how the invalidation shows where the
// receive completion cannot report it (soft-iWARP).
TEST_P(Rdma, AnInvalidatedTokenCannotBeUsedAgain)
{
    auto c = session();
    ASSERT_TRUE(c);
    constexpr uint32_t size = 8192;
    auto io =
        RdmaIo::create(*c, io_options(*c, CHANNEL_RDMA_V1_INVALIDATE, size));
    ASSERT_TRUE(io) << io.error().message;
    ASSERT_TRUE((*io)->start(0, true, 0, size));
    auto done = (*io)->finish(kIoTimeout);
    ASSERT_TRUE(done) << done.error().message;
    ASSERT_EQ(done->status, NT_STATUS_SUCCESS);

    smbd_buffer_desc d{
        reinterpret_cast<uintptr_t>((*io)->data(0, size)[0].data()),
        done->first_token, size};
    bool iwarp = read_refused(*c, 3, d);
    auto s = stop_after_refused_write(iwarp, 0);
    EXPECT_EQ(s.writes, 1u);
    EXPECT_LE(s.reads, iwarp ? 1u : 0u);
}

// MS-SMB2 3.3.5.12: RDMA_V1_INVALIDATE does not exist on 3.0. The request
// is refused with STATUS_INVALID_PARAMETER, nothing is invalidated, and the
// connection goes on serving RDMA_V1.
TEST_P(Rdma, InvalidateChannelOn300IsInvalidParameter)
{
    auto c = session({SMB2_DIALECT_300});
    ASSERT_TRUE(c);
    auto io =
        RdmaIo::create(*c, io_options(*c, CHANNEL_RDMA_V1_INVALIDATE, 4096));
    ASSERT_TRUE(io) << io.error().message;
    EXPECT_FALSE((*io)->invalidation_expected());
    for (bool write : {true, false}) {
        ASSERT_TRUE((*io)->start(0, write, 0, 4096));
        auto done = (*io)->finish(kIoTimeout);
        ASSERT_TRUE(done) << done.error().message;
        EXPECT_EQ(done->status, NT_STATUS_INVALID_PARAMETER) << write;
        EXPECT_FALSE(done->invalidated);
    }
    io = RdmaIo::create(*c, io_options(*c, CHANNEL_RDMA_V1, 4096));
    ASSERT_TRUE(io) << io.error().message;
    IoReport r;
    EXPECT_EQ(write_read(**io, {4096}, r), "");
    c->close();
    const auto &s = stop();
    EXPECT_EQ(s.io_refused, 2u);
    EXPECT_EQ(s.rdma_ops, 2u);
}

// A pool of 8 buffers for each process (SMBD_FEATURE_POOL_SIZE), which a
// few transfers fill.
class RdmaSmallPool : public Rdma {
  protected:
    static constexpr uint32_t kPoolBuffers = 8;
    void configure(smbd::responder::Options &o) override
    {
        o.pool_buffers = kPoolBuffers;
    }
};

// More in flight than the pool holds: requests wait for buffers, in order,
// and all are answered. Transfers of two buffers each, five of them
// against eight buffers (as ten of 8 MiB against the module's 64 MiB, at an
// eighth of the bytes).
TEST_P(RdmaSmallPool, RequestsWaitForPoolBuffers)
{
    auto c = session();
    ASSERT_TRUE(c);
    // the module's buffers are 1 MiB
    constexpr uint32_t kBuffersEach = 2, kSlots = 5;
    static_assert(kBuffersEach * kSlots > kPoolBuffers);
    const uint32_t size = kBuffersEach * kMiB;
    IoOptions o = io_options(*c, CHANNEL_RDMA_V1_INVALIDATE, size);
    o.slots = kSlots;
    auto io = RdmaIo::create(*c, o);
    ASSERT_TRUE(io) << io.error().message;
    // all launched at once, none again
    smbd::client::BenchOptions b;
    b.write = true;
    b.size = size;
    b.depth = o.slots;
    b.duration = 1ms;
    IoReport r;
    auto st = smbd::client::bench(**io, FileOptions{}, b, kIoTimeout, r);
    EXPECT_TRUE(st) << st.error().message;
    EXPECT_EQ(r.ops, kSlots);
    c->close();
    const auto &s = stop();
    EXPECT_EQ(s.writes, kSlots);
    EXPECT_GT(s.io_queued, 0u);
    EXPECT_EQ(s.rdma_errors, 0u);
}

// A READ naming memory the client never registered: the RDMA WRITE fails,
// the connection ends (on RoCE RDMA_DONE reports it and the driver
// disconnects with RDMA_ERROR), and the responder, its buffers back,
// serves the next connection.
TEST_P(Rdma, BadTokenCostsTheConnectionNotTheResponder)
{
    auto c = session();
    ASSERT_TRUE(c);
    bool iwarp = read_refused(*c, 2, {0x10000, 0x00dead00, 4 * kMiB});

    c = session();
    ASSERT_TRUE(c);
    auto io = RdmaIo::create(
        *c, io_options(*c, CHANNEL_RDMA_V1_INVALIDATE, 8 * kMiB));
    ASSERT_TRUE(io) << io.error().message;
    IoReport report;
    EXPECT_EQ(write_read(**io, {8 * kMiB}, report), "");
    c->close();
    auto s = stop_after_refused_write(iwarp, 1);
    // the second connection's, and on iWARP maybe the refused one
    EXPECT_GE(s.reads, 1u);
    EXPECT_LE(s.reads, iwarp ? 2u : 1u);
}

// Requests straight on the client; a response to one of them is the next
// response with a MessageId from @first on, the others kept aside.
class OthersAside : public smbd::client::IoPath {
  public:
    OthersAside(Client &c, uint64_t first) : c_(c), first_(first) {}
    smbd::client::Result<uint64_t>
    send_request(std::vector<uint8_t> &pdu) override
    {
        if (auto st = c_.send_pdu(pdu); !st)
            return st.error();
        return smbd_get_le64(&pdu[SMB2_HDR_MESSAGE_ID]);
    }
    smbd::client::Result<smbd::client::ReceivedPdu>
    next_response(std::chrono::milliseconds timeout) override
    {
        for (;;) {
            auto got = c_.recv(timeout);
            if (!got || got->bytes.size() < SMB2_HDR_SIZE ||
                smbd_get_le64(&got->bytes[SMB2_HDR_MESSAGE_ID]) >= first_)
                return got;
            aside.push_back(std::move(got->bytes));
        }
    }
    std::vector<std::vector<uint8_t>> aside;

  private:
    Client &c_;
    uint64_t first_;
};

// No connection holds a PDU whose send has not completed.
bool nothing_held(std::chrono::milliseconds timeout)
{
    auto until = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        const std::string list = connections();
        size_t at = 0;
        bool held = false;
        while ((at = list.find(" send_held=", at)) != std::string::npos) {
            at += sizeof(" send_held=") - 1;
            held = held || list.compare(at, 2, "0 ") != 0;
        }
        if (!held)
            return true;
        if (std::chrono::steady_clock::now() > until)
            return false;
        std::this_thread::sleep_for(20ms);
    }
}

// A client that grants no credits while READs answered inline fill the
// connection's send queue to its bound: the next response is refused
// (EAGAIN to the responder's SEND_PDU), and so is a READ's over RDMA
// (ENOBUFS to an RDMA_RW with its reply, where the response goes with the
// WRITE). Once the client grants again, every response and the READ's
// data arrive: the responder held its PDUs until SEND_ROOM, and so did the
// glue its transfer.
TEST_P(Rdma, ResponsesBeyondAFullSendQueueWaitForItsRoom)
{
    smbd_info info{};
    ASSERT_EQ(Device().info(info), 0);
    ASSERT_TRUE(info.out_features & SMBD_FEATURE_SEND_ROOM);
    constexpr uint32_t kRead = 64u << 10, kInline = 9;
    constexpr uint64_t kRdmaId = 1u << 20;
    // a response is 80 bytes and its data: eight fill the queue exactly
    const uint32_t inline_size = info.out_send_queue_bytes / 8 - 80;
    auto c = session();
    ASSERT_TRUE(c);
    OthersAside path(*c, kRdmaId);
    IoOptions o = io_options(*c, CHANNEL_RDMA_V1, kRead);
    o.first_message_id = kRdmaId;
    auto io = RdmaIo::create(*c, o, &path);
    ASSERT_TRUE(io) << io.error().message;
    std::vector<uint8_t> want;
    uint8_t b = 0;
    for (auto span : (*io)->data(0, kRead))
        for (uint8_t &x : span)
            want.push_back(x = uint8_t(b++ * 7 + 1));
    ASSERT_TRUE((*io)->start(0, true, 0, kRead));
    auto wrote = (*io)->finish(kIoTimeout);
    ASSERT_TRUE(wrote) << wrote.error().message;
    ASSERT_EQ(wrote->status, 0u);
    // The WRITE's response stays charged until the server sees its send
    // complete, which may come after the client read it: eight responses
    // fill the bound exactly only once it is gone (else the eighth is
    // refused, and the READ's reply fits when it goes).
    EXPECT_TRUE(nothing_held(kIoTimeout)) << connections();

    c->set_repost_receives(false);
    for (uint32_t n = 0; n < kInline; n++) {
        ReadRequest r;
        r.hdr.credit_charge = 1;
        r.hdr.credits = 1;
        r.hdr.message_id = 100 + n;
        r.hdr.tree_id = 1;
        r.hdr.session_id = c->session_id();
        r.length = inline_size;
        r.offset = kRead;
        ASSERT_TRUE(c->send_pdu(build_read_request(r))) << n;
    }
    (*io)->poison(0, kRead);
    ASSERT_TRUE((*io)->start(0, false, 0, kRead));
    // the ninth inline response; with the WRITE, the READ's response too
    const int64_t refusals = GetParam().rw_reply ? 2 : 1;
    EXPECT_GE(await_delta("send_queue_full", refusals, 30s), refusals);

    c->set_repost_receives(true);
    auto read = (*io)->finish(kIoTimeout);
    ASSERT_TRUE(read) << read.error().message;
    EXPECT_EQ(read->status, 0u);
    std::vector<uint8_t> got;
    for (auto span : (*io)->data(0, kRead))
        got.insert(got.end(), span.begin(), span.end());
    EXPECT_TRUE(got == want) << "the READ's data differs from the WRITE's";
    // the READ's response may overtake those the responder held
    while (path.aside.size() < kInline) {
        auto more = c->recv_pdu(kIoTimeout);
        ASSERT_TRUE(more) << path.aside.size() << " inline responses, then "
                          << more.error().message;
        path.aside.push_back(std::move(*more));
    }
    for (uint32_t n = 0; n < kInline; n++) {
        ReadResponse r;
        ASSERT_EQ(parse_read_response(path.aside[n], r), Rule::ok) << n;
        EXPECT_EQ(r.hdr.message_id, 100 + n);
        EXPECT_EQ(r.hdr.status, 0u) << n;
        EXPECT_EQ(r.data_length, inline_size) << n;
    }
    c->close();
    const auto &s = stop();
    EXPECT_GE(s.send_waits, 1u);
    EXPECT_EQ(s.send_errors, 0u);
    EXPECT_EQ(s.reads, kInline + 1);
}

const auto kLoops = ::testing::Values(Loop{false, true}, Loop{true, true},
                                      Loop{false, false}, Loop{true, false});
std::string loop_name(const ::testing::TestParamInfo<Loop> &i)
{
    return std::string(i.param.tevent ? "Tevent" : "Poll") +
           (i.param.rw_reply ? "ReplyWithWrite" : "ReplyAfterDone");
}
INSTANTIATE_TEST_SUITE_P(Loop, Rdma, kLoops, loop_name);
INSTANTIATE_TEST_SUITE_P(Loop, RdmaSmallPool, kLoops, loop_name);

} // namespace
} // namespace scenario
