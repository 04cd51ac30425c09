// libsmbd's C API and tevent glue on the real driver, where the responder's
// scenarios (which run on the library, both loops) do not reach: the ABI
// and feature checks at open, and a connection dropped while a transfer
// runs. The pool memory the caller freed stays lent until the kernel's
// RDMA_DONE, on the plain API and through a tevent request freed early.
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <deque>
#include <numeric>
#include <thread>

#include <libsmbd-tevent.h>

#include "buffer_desc.h"
#include "rdma_io.h"
#include "reply.h"
#include "scenario.h"
#include "smb2_rw.h"

namespace scenario {
namespace {

using smbd::client::IoOptions;
using smbd::client::RdmaIo;
using namespace smbd::smb2rw;

constexpr uint64_t kSession = 0x7100000000000071ull;
constexpr uint32_t kSize = 8u << 20;

struct DevCloser {
    void operator()(smbd_dev *d) const { smbd_dev_close(d); }
    void operator()(smbd_dev_events *e) const { smbd_dev_events_free(e); }
};

// What a test keeps of an event: the fields, and the data copied out of
// the storage the next fetch reuses.
struct Ev {
    smbd_dev_event e;
    std::vector<uint8_t> data;
    std::vector<uint8_t> setup;

    explicit Ev(const smbd_dev_event &ev)
        : e(ev), data(ev.data, ev.data + ev.data_len),
          setup(ev.session_setup, ev.session_setup + ev.session_setup_len)
    {
    }
};

int open_dev(const smbd_dev_open_args &args, std::string &why,
             std::unique_ptr<smbd_dev, DevCloser> &out)
{
    char buf[256] = "";
    smbd_dev *dev = nullptr;
    int err = smbd_dev_open(&args, &dev, buf, sizeof(buf));
    why = buf;
    out.reset(dev);
    return err;
}

// A talloc context holding a tevent loop, freed when the test ends, or by
// free() where a test checks what freeing gives back.
struct TeventLoop {
    TALLOC_CTX *mem = talloc_new(nullptr);
    tevent_context *ev = tevent_context_init(mem);

    ~TeventLoop() { free(); }
    void free()
    {
        talloc_free(mem);
        mem = nullptr;
        ev = nullptr;
    }
    // the glue on @dev; events go to @fn, by default nowhere
    smbd_tevent *glue(
        smbd_dev *dev,
        smbd_tevent_fn fn = [](const smbd_dev_event *, void *) {},
        void *arg = nullptr)
    {
        return smbd_tevent_setup(mem, ev, dev, fn, arg);
    }
};

using LibsmbdOpen = Scenario;

// A program built for a newer ABI than the library and the kernel speak
// is refused, naming both; one built for this one opens.
TEST_F(LibsmbdOpen, ANewerAbiVersionIsRefusedNamingBoth)
{
    smbd_dev_open_args args = SMBD_DEV_OPEN_ARGS_INIT;
    args.abi_version = SMBD_ABI_VERSION + 1;
    std::string why;
    std::unique_ptr<smbd_dev, DevCloser> dev;
    EXPECT_EQ(open_dev(args, why, dev), EPROTONOSUPPORT);
    EXPECT_FALSE(dev);
    std::string versions = "ABI " + std::to_string(SMBD_ABI_VERSION) +
                           ", program ABI " +
                           std::to_string(SMBD_ABI_VERSION + 1);
    EXPECT_NE(why.find(versions), std::string::npos) << why;
    EXPECT_NE(why.find("newer ABI"), std::string::npos) << why;
    args.abi_version = SMBD_ABI_VERSION;
    EXPECT_EQ(open_dev(args, why, dev), 0) << why;
}

TEST_F(LibsmbdOpen, AMissingFeatureIsRefusedByItsBit)
{
    smbd_dev_open_args args = SMBD_DEV_OPEN_ARGS_INIT;
    args.required_features = SMBD_FEATURE_RDMA_RW | (1ull << 63);
    std::string why;
    std::unique_ptr<smbd_dev, DevCloser> dev;
    EXPECT_EQ(open_dev(args, why, dev), EOPNOTSUPP);
    EXPECT_NE(why.find("missing features 0x8000000000000000"),
              std::string::npos)
        << why;
    // everything this ABI version defines is there
    args.required_features = (SMBD_FEATURE_POOL_SIZE << 1) - 1;
    EXPECT_EQ(open_dev(args, why, dev), 0) << why;
    ASSERT_TRUE(dev);
    smbd_dev_info info;
    smbd_dev_get_info(dev.get(), &info, sizeof(info));
    EXPECT_EQ(info.abi_version, uint32_t{SMBD_ABI_VERSION});
    EXPECT_GT(info.pool_buffers, 0u);
}

// Policies the library refuses before the kernel sees them, and one the
// kernel refuses, each with its reason.
TEST_F(LibsmbdOpen, BadPoliciesAreRefusedWithAReason)
{
    std::string why;
    std::unique_ptr<smbd_dev, DevCloser> dev;
    ASSERT_EQ(open_dev(SMBD_DEV_OPEN_ARGS_INIT, why, dev), 0) << why;
    smbd_dev_policy p;
    smbd_dev_policy_init(&p, sizeof(p));
    p.ciphers = nullptr;
    EXPECT_EQ(smbd_dev_set_policy(dev.get(), &p), EINVAL);
    EXPECT_NE(
        std::string(smbd_dev_errmsg(dev.get())).find("without its pointer"),
        std::string::npos)
        << smbd_dev_errmsg(dev.get());
    smbd_dev_policy_init(&p, sizeof(p));
    p.size = 8;
    EXPECT_EQ(smbd_dev_set_policy(dev.get(), &p), EINVAL);
    smbd_dev_policy_init(&p, sizeof(p));
    p.max_send_size = 64; // below MS-SMBD's minimum of 128
    EXPECT_EQ(smbd_dev_set_policy(dev.get(), &p), EINVAL);
    EXPECT_NE(std::string(smbd_dev_errmsg(dev.get()))
                  .find("set the SMB Direct policy"),
              std::string::npos)
        << smbd_dev_errmsg(dev.get());
    // and a good one is taken
    smbd_dev_policy_init(&p, sizeof(p));
    EXPECT_EQ(smbd_dev_set_policy(dev.get(), &p), 0)
        << smbd_dev_errmsg(dev.get());
}

// A registration the kernel refuses says who may register, or that the
// handle holds all it may.
TEST_F(LibsmbdOpen, RefusedRegistrationsSayWhy)
{
    std::string why;
    std::unique_ptr<smbd_dev, DevCloser> dev;
    ASSERT_EQ(open_dev(SMBD_DEV_OPEN_ARGS_INIT, why, dev), 0) << why;
    auto msg = [&] { return std::string(smbd_dev_errmsg(dev.get())); };
    smbd_info info{};
    ASSERT_EQ(Device().info(info), 0);
    uint32_t n = 0;
    int err = 0;
    for (; n <= info.out_max_sessions && !err; n++)
        err = smbd_dev_register_session(dev.get(), kSession + n);
    EXPECT_EQ(err, ENOSPC) << msg();
    EXPECT_EQ(n, info.out_max_sessions + 1);
    EXPECT_NE(msg().find("as many sessions as the driver allows"),
              std::string::npos)
        << msg();

    // another user, without CAP_NET_ADMIN
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        std::unique_ptr<smbd_dev, DevCloser> mine;
        std::string w;
        if (open_dev(SMBD_DEV_OPEN_ARGS_INIT, w, mine) != 0 ||
            setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
            _exit(2);
        if (smbd_dev_register_session(mine.get(), kSession) != EPERM)
            _exit(3);
        _exit(std::string(smbd_dev_errmsg(mine.get()))
                          .find("only the master's user") == std::string::npos
                  ? 4
                  : 0);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "the child's verdict: " << status;
}

// A forked child that uses its parent's handle is told to open its own
// (the file serves the process that opened it), and the handle it leaves
// behind is the parent's still.
TEST_F(LibsmbdOpen, AForkedChildIsToldToOpenTheDeviceItself)
{
    std::string why;
    std::unique_ptr<smbd_dev, DevCloser> dev;
    ASSERT_EQ(open_dev(SMBD_DEV_OPEN_ARGS_INIT, why, dev), 0) << why;
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        if (smbd_dev_register_session(dev.get(), kSession) != EBADFD)
            _exit(1);
        _exit(std::string(smbd_dev_errmsg(dev.get()))
                          .find("open the device "
                                "again here") == std::string::npos
                  ? 2
                  : 0);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "the child's verdict: " << status;
    EXPECT_EQ(smbd_dev_register_session(dev.get(), kSession), 0)
        << smbd_dev_errmsg(dev.get());
}

// smbd_dev_set_pool_buffers(): a pool of fewer buffers, what
// smbd_dev_get_info() and smbd_dev_buf_alloc() then say, and the refusals
// with their reasons.
TEST_F(LibsmbdOpen, APoolOfFewerBuffersIsWhatTheHandleLends)
{
    std::string why;
    std::unique_ptr<smbd_dev, DevCloser> dev;
    ASSERT_EQ(open_dev(SMBD_DEV_OPEN_ARGS_INIT, why, dev), 0) << why;
    auto msg = [&] { return std::string(smbd_dev_errmsg(dev.get())); };
    smbd_dev_info info;
    smbd_dev_get_info(dev.get(), &info, sizeof(info));
    const uint32_t most = info.pool_buffers;
    ASSERT_GT(most, 2u);

    EXPECT_EQ(smbd_dev_set_pool_buffers(dev.get(), 0), EINVAL);
    EXPECT_NE(msg().find("the module allows 1.."), std::string::npos) << msg();
    EXPECT_EQ(smbd_dev_set_pool_buffers(dev.get(), most + 1), EINVAL);
    ASSERT_EQ(smbd_dev_set_pool_buffers(dev.get(), 2), 0) << msg();
    smbd_dev_get_info(dev.get(), &info, sizeof(info));
    EXPECT_EQ(info.pool_buffers, 2u);

    const size_t pool = size_t{2} * info.buffer_size;
    smbd_dev_buf *buf = nullptr;
    EXPECT_EQ(smbd_dev_buf_alloc(dev.get(), pool + 1, &buf), EMSGSIZE);
    ASSERT_EQ(smbd_dev_buf_alloc(dev.get(), pool, &buf), 0) << msg();
    smbd_dev_buf *more = nullptr;
    EXPECT_EQ(smbd_dev_buf_alloc(dev.get(), 4096, &more), ENOBUFS);
    smbd_dev_buf_free(buf);

    // mapped now: the same count is no change, another is refused
    EXPECT_EQ(smbd_dev_set_pool_buffers(dev.get(), 2), 0) << msg();
    EXPECT_EQ(smbd_dev_set_pool_buffers(dev.get(), 1), EBUSY);
    EXPECT_NE(msg().find("it is mapped, of 2"), std::string::npos) << msg();
    EXPECT_EQ(smbd_dev_set_pool_buffers(dev.get(), most), EBUSY);
}

// What the library checks before the kernel sees the call: each refusal
// with its errno and its reason, and a valid transfer that reaches the
// kernel (which owns no such connection here).
TEST_F(LibsmbdOpen, BuffersAndTransfersAreCheckedBeforeTheKernel)
{
    std::string why;
    std::unique_ptr<smbd_dev, DevCloser> dev, other;
    ASSERT_EQ(open_dev(SMBD_DEV_OPEN_ARGS_INIT, why, dev), 0) << why;
    ASSERT_EQ(open_dev(SMBD_DEV_OPEN_ARGS_INIT, why, other), 0) << why;
    auto msg = [&] { return std::string(smbd_dev_errmsg(dev.get())); };
    smbd_dev_info info;
    smbd_dev_get_info(dev.get(), &info, sizeof(info));
    const size_t pool = size_t{info.pool_buffers} * info.buffer_size;

    smbd_dev_buf *buf = nullptr;
    EXPECT_EQ(smbd_dev_buf_alloc(dev.get(), 0, &buf), EINVAL);
    EXPECT_EQ(smbd_dev_buf_alloc(dev.get(), pool + 1, &buf), EMSGSIZE);
    EXPECT_EQ(smbd_dev_buf_alloc(dev.get(), SIZE_MAX, &buf), EMSGSIZE);
    EXPECT_EQ(buf, nullptr);
    ASSERT_EQ(smbd_dev_buf_alloc(dev.get(), 8192, &buf), 0) << msg();
    smbd_dev_buf *foreign = nullptr;
    ASSERT_EQ(smbd_dev_buf_alloc(other.get(), 4096, &foreign), 0);

    uint8_t descs[SMBD_BUFFER_DESC_SIZE];
    smbd_buffer_desc d{0x10000, 0x1234, 4096};
    smbd_buffer_desc_put(descs, 0, &d);
    smbd_dev_rdma op{};
    op.conn_id = 0x7777;
    op.direction = SMBD_RW_WRITE_TO_PEER;
    op.buf = buf;
    op.length = 4096;
    op.descs = descs;
    op.descs_len = sizeof(descs);
    auto refused = [&](smbd_dev_rdma o, const char *reason) {
        size_t started = 9;
        EXPECT_EQ(smbd_dev_rdma_start(dev.get(), &o, 1, &started), EINVAL)
            << reason;
        EXPECT_EQ(started, 0u);
        EXPECT_NE(msg().find(reason), std::string::npos) << msg();
    };
    smbd_dev_rdma o = op;
    o.length = 0;
    refused(o, "outside a buffer of 8192");
    o = op;
    o.offset = 8000;
    o.length = 193;
    refused(o, "outside a buffer of 8192");
    o = op;
    o.offset = SIZE_MAX;
    refused(o, "outside a buffer");
    o = op;
    o.descs_len = SMBD_BUFFER_DESC_SIZE - 1;
    refused(o, "buffer descriptor list");
    o = op;
    o.descs_len = 0;
    refused(o, "buffer descriptor list");
    o = op;
    o.descs = nullptr;
    refused(o, "buffer descriptor list");
    o = op;
    o.buf = nullptr;
    refused(o, "no live buffer");
    o = op;
    o.buf = foreign;
    refused(o, "no live buffer");
    smbd_dev_buf_free(buf);
    refused(op, "no live buffer"); // freed: looked up, not read

    // a valid transfer goes to the kernel, which knows no such connection
    ASSERT_EQ(smbd_dev_buf_alloc(dev.get(), 8192, &buf), 0);
    op.buf = buf;
    EXPECT_EQ(smbd_dev_rdma_start(dev.get(), &op, 1, nullptr), ENOENT);
    EXPECT_NE(msg().find("owns no such connection"), std::string::npos)
        << msg();

    // a reply goes with a WRITE, for its connection, in 1..max iovecs
    uint8_t response[80] = {};
    iovec iov = {response, sizeof(response)};
    smbd_dev_pdu reply{};
    reply.conn_id = op.conn_id;
    reply.iov = &iov;
    reply.iovcnt = 1;
    const smbd_dev_pdu *replies[] = {&reply};
    auto reply_refused = [&](smbd_dev_rdma o, smbd_dev_pdu r,
                             const char *reason) {
        const smbd_dev_pdu *rs[] = {&r};
        size_t started = 9;
        EXPECT_EQ(smbd_dev_rdma_start_replies(dev.get(), &o, rs, 1, &started),
                  EINVAL)
            << reason;
        EXPECT_EQ(started, 0u);
        EXPECT_NE(msg().find(reason), std::string::npos) << msg();
    };
    o = op;
    o.direction = SMBD_RW_READ_FROM_PEER;
    reply_refused(o, reply, "only with a WRITE");
    smbd_dev_pdu r = reply;
    r.conn_id++;
    reply_refused(op, r, "another connection");
    r = reply;
    r.flags = SMBD_SEND_NOTIFY;
    reply_refused(op, r, "no SMBD_SEND_NOTIFY");
    r = reply;
    r.iovcnt = 0;
    reply_refused(op, r, "0 iovecs");
    r.iovcnt = info.max_iovs + 1;
    reply_refused(op, r, "iovecs, 1 to");
    r = reply;
    r.iov = nullptr;
    reply_refused(op, r, "iovecs, 1 to");
    EXPECT_EQ(smbd_dev_rdma_start_replies(dev.get(), &op, replies, 1, nullptr),
              ENOENT);
    EXPECT_NE(msg().find("owns no such connection"), std::string::npos)
        << msg();
    // no reply array: smbd_dev_rdma_start
    EXPECT_EQ(smbd_dev_rdma_start_replies(dev.get(), &op, nullptr, 1, nullptr),
              ENOENT);
    // the tevent glue refuses a reply that is missing or empty at once
    TeventLoop loop;
    ASSERT_TRUE(loop.ev);
    smbd_tevent *glue = loop.glue(dev.get());
    ASSERT_TRUE(glue);
    r = reply;
    r.iovcnt = 0;
    for (const smbd_dev_pdu *bad : {static_cast<const smbd_dev_pdu *>(nullptr),
                                    static_cast<const smbd_dev_pdu *>(&r)}) {
        tevent_req *req =
            smbd_tevent_rdma_reply_send(loop.mem, loop.ev, glue, &op, bad);
        ASSERT_TRUE(req);
        ASSERT_TRUE(tevent_req_poll(req, loop.ev));
        EXPECT_EQ(smbd_tevent_rdma_recv(req, nullptr), EINVAL);
        talloc_free(req);
    }
    loop.free();

    uint64_t total = 0;
    EXPECT_EQ(smbd_dev_descs_check(dev.get(), descs, sizeof(descs), &total), 0);
    EXPECT_EQ(total, 4096u);
    EXPECT_EQ(smbd_dev_descs_check(dev.get(), descs, sizeof(descs) - 1, &total),
              EINVAL);
    EXPECT_EQ(smbd_dev_descs_check(dev.get(), descs, 0, &total), EINVAL);
    d.length = 0;
    smbd_buffer_desc_put(descs, 0, &d);
    EXPECT_EQ(smbd_dev_descs_check(dev.get(), descs, sizeof(descs), &total),
              EINVAL);
    EXPECT_NE(msg().find("check buffer descriptors"), std::string::npos)
        << msg();
}

// The smbd side on the C API: SET_PARAMS and kSession registered; a bound
// peer sends one SMB2 READ of kSize bytes over RDMA_V1 and waits until its
// connection ends, unanswered.
class LibsmbdDrop : public Scenario {
  protected:
    void SetUp() override
    {
        Scenario::SetUp();
        std::string why;
        ASSERT_EQ(open_dev(SMBD_DEV_OPEN_ARGS_INIT, why, dev_), 0) << why;
        smbd_dev_events *evs = nullptr;
        ASSERT_EQ(smbd_dev_events_new(dev_.get(), &evs), 0);
        events_.reset(evs);
        smbd_dev_policy p;
        smbd_dev_policy_init(&p, sizeof(p));
        Params fast = fast_params();
        p.keepalive_timeout_ms = fast.keepalive_timeout_ms;
        p.negotiate_timeout_ms = fast.negotiate_timeout_ms;
        p.setup_timeout_ms = fast.setup_timeout_ms;
        p.credit_timeout_ms = fast.credit_timeout_ms;
        p.accept_timeout_ms = fast.accept_timeout_ms;
        ASSERT_EQ(smbd_dev_set_policy(dev_.get(), &p), 0)
            << smbd_dev_errmsg(dev_.get());
        ASSERT_EQ(smbd_dev_register_session(dev_.get(), kSession), 0);
        smbd_dev_info info;
        smbd_dev_get_info(dev_.get(), &info, sizeof(info));
        pool_bytes_ = size_t{info.pool_buffers} * info.buffer_size;

        peer_ = peer([]() -> std::string {
            auto c = bound_client(kSession);
            if (!c)
                return c.error().message;
            IoOptions o;
            o.dialect = SMB2_DIALECT_311;
            o.channel = CHANNEL_RDMA_V1;
            o.max_size = kSize;
            auto io = RdmaIo::create(**c, o);
            if (!io)
                return io.error().message;
            if (auto st = (*io)->start(0, false, 0, kSize); !st)
                return st.error().message;
            // never answered: the smbd side drops the connection
            if ((*io)->finish(600s))
                return "the READ was answered";
            return "";
        });
        auto ch = next(SMBD_EVENT_NEW_CHANNEL);
        ASSERT_TRUE(ch) << "no NEW_CHANNEL; the peer: " << verdict(peer_);
        conn_ = ch->e.conn_id;
        std::string bad;
        auto resp =
            smbd::responder::session_setup_response(ch->setup, kSession, &bad);
        ASSERT_FALSE(resp.empty()) << bad;
        iovec iov{resp.data(), resp.size()};
        smbd_dev_pdu pdu{};
        pdu.conn_id = conn_;
        pdu.iov = &iov;
        pdu.iovcnt = 1;
        ASSERT_EQ(smbd_dev_send(dev_.get(), &pdu, 1, nullptr), 0)
            << smbd_dev_errmsg(dev_.get());
        auto req = next(SMBD_EVENT_PDU_RECEIVED);
        ASSERT_TRUE(req) << "no READ; the peer: " << verdict(peer_);
        request_ = req->data;
        ASSERT_EQ(parse_read_request(request_, SMB2_DIALECT_311, read_),
                  Rule::ok);
        ASSERT_EQ(read_.length, kSize);
    }

    void TearDown() override
    {
        dev_.reset();
        if (peer_.valid())
            peer_.wait();
        Scenario::TearDown();
    }

    // Fetches until an event of @type arrives (10 s); the others are kept.
    std::optional<Ev> next(uint32_t type)
    {
        auto until = std::chrono::steady_clock::now() + 10s;
        while (std::chrono::steady_clock::now() < until) {
            pollfd p{smbd_dev_fd(dev_.get()), POLLIN, 0};
            poll(&p, 1, 100);
            size_t n = 0;
            if (smbd_dev_fetch(dev_.get(), events_.get(), &n))
                return std::nullopt;
            for (size_t i = 0; i < n; i++)
                seen_.emplace_back(*smbd_dev_events_at(events_.get(), i));
            for (auto it = seen_.begin(); it != seen_.end(); ++it) {
                if (it->e.type == type) {
                    Ev ev = *it;
                    seen_.erase(it);
                    return ev;
                }
            }
        }
        return std::nullopt;
    }

    // Whether the whole pool can be lent right now.
    bool whole_pool_free()
    {
        smbd_dev_buf *all = nullptr;
        int err = smbd_dev_buf_alloc(dev_.get(), pool_bytes_, &all);
        smbd_dev_buf_free(all);
        EXPECT_TRUE(err == 0 || err == ENOBUFS) << smbd_dev_errmsg(dev_.get());
        return err == 0;
    }

    smbd_dev_rdma write_op(smbd_dev_buf *buf) const
    {
        smbd_dev_rdma op{};
        op.conn_id = conn_;
        op.user_data = 42;
        op.direction = SMBD_RW_WRITE_TO_PEER;
        op.buf = buf;
        op.length = kSize;
        op.descs = read_.channel_info.data();
        op.descs_len = read_.channel_info.size();
        return op;
    }

    std::unique_ptr<smbd_dev, DevCloser> dev_;
    std::unique_ptr<smbd_dev_events, DevCloser> events_;
    std::deque<Ev> seen_;
    size_t pool_bytes_ = 0;
    uint64_t conn_ = 0;
    std::vector<uint8_t> request_;
    ReadRequest read_;
    PeerResult peer_;
};

// Freed and disconnected mid-transfer: the memory stays lent until the
// RDMA_DONE (ours, before the DISCONNECTED) is fetched, then all of the
// pool can be had again.
TEST_F(LibsmbdDrop, FreedMemoryStaysLentUntilRdmaDone)
{
    uint64_t total = 0;
    ASSERT_EQ(smbd_dev_descs_check(dev_.get(), read_.channel_info.data(),
                                   read_.channel_info.size(), &total),
              0);
    EXPECT_EQ(total, kSize);
    smbd_dev_buf *buf = nullptr;
    ASSERT_EQ(smbd_dev_buf_alloc(dev_.get(), kSize, &buf), 0);
    std::fill_n(smbd_dev_buf_data(buf), kSize, 0x5a);
    smbd_dev_rdma op = write_op(buf);
    size_t started = 0;
    ASSERT_EQ(smbd_dev_rdma_start(dev_.get(), &op, 1, &started), 0)
        << smbd_dev_errmsg(dev_.get());
    EXPECT_EQ(started, 1u);
    smbd_dev_buf_free(buf);
    ASSERT_EQ(smbd_dev_disconnect(dev_.get(), conn_), 0);
    EXPECT_FALSE(whole_pool_free()) << "memory lent to a running transfer";

    auto done = next(SMBD_EVENT_RDMA_DONE);
    ASSERT_TRUE(done);
    EXPECT_EQ(done->e.user_data, 42u);
    EXPECT_TRUE(done->e.status == 0 || done->e.status == -ENOTCONN)
        << done->e.status;
    EXPECT_TRUE(whole_pool_free());
    auto gone = next(SMBD_EVENT_DISCONNECTED);
    ASSERT_TRUE(gone);
    EXPECT_EQ(gone->e.reason, uint32_t{SMBD_REASON_LOCAL});
    EXPECT_EQ(verdict(peer_), "");
    EXPECT_TRUE(settled());
    EXPECT_EQ(Counters::now()["rdma_inflight"], 0u);
}

// A batch with an invalid PDU sends those before it, then reports it.
TEST_F(LibsmbdDrop, SendStopsAtAnInvalidPduAfterSendingThoseBefore)
{
    iovec iov{request_.data(), request_.size()};
    smbd_dev_pdu pdus[2] = {};
    pdus[0].conn_id = conn_;
    pdus[0].iov = &iov;
    pdus[0].iovcnt = 1;
    pdus[1] = pdus[0];
    pdus[1].iovcnt = 100000; // more iovecs than a PDU takes
    size_t sent = 9;
    Counters before = Counters::now();
    EXPECT_EQ(smbd_dev_send(dev_.get(), pdus, 2, &sent), EINVAL);
    EXPECT_EQ(sent, 1u);
    EXPECT_NE(std::string(smbd_dev_errmsg(dev_.get())).find("iovecs, at most"),
              std::string::npos)
        << smbd_dev_errmsg(dev_.get());
    // counted when its send completes
    for (int i = 0; i < 100 && !Counters::now().delta(before, "pdus_sent"); i++)
        std::this_thread::sleep_for(50ms);
    EXPECT_EQ(Counters::now().delta(before, "pdus_sent"), 1);
}

// The same through the glue, with the tevent request freed while its
// transfer runs, as smbd frees a dying connection's requests: no callback,
// the memory comes back after the RDMA_DONE, and a transfer started after
// it completes with its own RDMA_DONE, not the orphan's.
TEST_F(LibsmbdDrop, TeventRequestFreedMidTransfer)
{
    TeventLoop loop;
    TALLOC_CTX *mem = loop.mem;
    tevent_context *ev = loop.ev;
    ASSERT_TRUE(ev);
    struct Seen {
        std::vector<uint32_t> other; // events for the default callback
        std::vector<uint32_t> conn;  // for the attached connection
        bool orphan_completed = false;
        bool second_completed = false;
        int second_err = -1;
        uint64_t second_bytes = 0;
    } seen;
    auto record = [](const smbd_dev_event *e, void *v) {
        static_cast<std::vector<uint32_t> *>(v)->push_back(e->type);
    };
    smbd_tevent *glue = loop.glue(dev_.get(), record, &seen.other);
    ASSERT_TRUE(glue);
    ASSERT_EQ(smbd_tevent_conn_attach(glue, conn_, record, &seen.conn), 0);
    EXPECT_EQ(smbd_tevent_conn_attach(glue, conn_, record, &seen.conn), EEXIST);
    // each turn of the loop is short
    auto turn = [&] {
        tevent_add_timer(
            ev, mem, tevent_timeval_current_ofs(0, 100000),
            [](tevent_context *, tevent_timer *, timeval, void *) {}, nullptr);
        return tevent_loop_once(ev) == 0;
    };

    smbd_dev_buf *buf = nullptr, *small = nullptr;
    ASSERT_EQ(smbd_dev_buf_alloc(dev_.get(), kSize, &buf), 0);
    ASSERT_EQ(smbd_dev_buf_alloc(dev_.get(), 4096, &small), 0);
    smbd_dev_rdma op = write_op(buf);
    tevent_req *req = smbd_tevent_rdma_send(mem, ev, glue, &op);
    ASSERT_TRUE(req);
    tevent_req_set_callback(
        req,
        [](tevent_req *r) {
            static_cast<Seen *>(tevent_req_callback_data_void(r))
                ->orphan_completed = true;
        },
        &seen);
    // the turn that starts what was queued
    ASSERT_TRUE(turn());
    talloc_free(req);
    smbd_dev_buf_free(buf);

    smbd_dev_rdma second = write_op(small);
    second.length = 4096;
    req = smbd_tevent_rdma_send(mem, ev, glue, &second);
    ASSERT_TRUE(req);
    // received only after the glue is gone: a finished request outlives it
    tevent_req *kept = req;
    tevent_req_set_callback(
        req,
        [](tevent_req *r) {
            static_cast<Seen *>(tevent_req_callback_data_void(r))
                ->second_completed = true;
        },
        &seen);
    EXPECT_FALSE(whole_pool_free()) << "memory lent to a running transfer";

    auto until = std::chrono::steady_clock::now() + 20s;
    while (!seen.second_completed && std::chrono::steady_clock::now() < until)
        ASSERT_TRUE(turn());
    ASSERT_TRUE(seen.second_completed);
    EXPECT_FALSE(seen.orphan_completed);
    smbd_dev_buf_free(small);
    // the orphan's RDMA_DONE came before the second's
    EXPECT_TRUE(whole_pool_free());

    ASSERT_EQ(smbd_dev_disconnect(dev_.get(), conn_), 0);
    until = std::chrono::steady_clock::now() + 10s;
    while (seen.conn.empty() && std::chrono::steady_clock::now() < until)
        ASSERT_TRUE(turn());
    EXPECT_EQ(seen.conn, std::vector<uint32_t>{SMBD_EVENT_DISCONNECTED});
    EXPECT_TRUE(seen.other.empty()) << "an event of the attached connection "
                                       "reached the default callback";
    talloc_free(glue);
    seen.second_err = smbd_tevent_rdma_recv(kept, &seen.second_bytes);
    EXPECT_EQ(seen.second_err, 0);
    EXPECT_EQ(seen.second_bytes, 4096u);
    talloc_free(kept);
    loop.free();
    EXPECT_EQ(verdict(peer_), "");
    EXPECT_TRUE(settled());
}

// More transfers than the kernel takes at once (out_max_events): the rest
// wait in the glue, start as earlier ones finish, and every request
// completes, in the order it was made.
TEST_F(LibsmbdDrop, TeventTransfersPastTheKernelsBoundWaitAndAllComplete)
{
    TeventLoop loop;
    TALLOC_CTX *mem = loop.mem;
    tevent_context *ev = loop.ev;
    ASSERT_TRUE(ev);
    smbd_tevent *glue = loop.glue(dev_.get());
    ASSERT_TRUE(glue);
    smbd_dev_info info;
    smbd_dev_get_info(dev_.get(), &info, sizeof(info));
    const size_t n = info.max_events + 64;
    constexpr uint32_t kPiece = 4096;
    smbd_dev_buf *buf = nullptr;
    ASSERT_EQ(smbd_dev_buf_alloc(dev_.get(), kPiece, &buf), 0);
    smbd_dev_rdma op = write_op(buf);
    op.length = kPiece;

    struct Done {
        std::vector<size_t> order;
        size_t failed = 0;
        uint64_t bytes = 0;
    } done;
    struct Callback {
        Done *done;
        size_t n;
    };
    for (size_t i = 0; i < n; i++) {
        tevent_req *req = smbd_tevent_rdma_send(mem, ev, glue, &op);
        ASSERT_TRUE(req);
        auto *cb = talloc(req, Callback);
        ASSERT_TRUE(cb);
        *cb = {&done, i};
        tevent_req_set_callback(
            req,
            [](tevent_req *r) {
                Callback c =
                    *static_cast<Callback *>(tevent_req_callback_data_void(r));
                uint64_t bytes = 0;
                int err = smbd_tevent_rdma_recv(r, &bytes);
                talloc_free(r);
                c.done->order.push_back(c.n);
                c.done->failed += err != 0;
                c.done->bytes += bytes;
            },
            cb);
    }
    // one turn starts them; nothing fetched yet, the kernel is full, and
    // the rest wait
    ASSERT_EQ(tevent_loop_once(ev), 0);
    size_t started = 0;
    EXPECT_EQ(smbd_dev_rdma_start(dev_.get(), &op, 1, &started), EAGAIN);

    auto until = std::chrono::steady_clock::now() + 60s;
    while (done.order.size() < n && std::chrono::steady_clock::now() < until) {
        tevent_add_timer(
            ev, mem, tevent_timeval_current_ofs(0, 100000),
            [](tevent_context *, tevent_timer *, timeval, void *) {}, nullptr);
        ASSERT_EQ(tevent_loop_once(ev), 0);
    }
    ASSERT_EQ(done.order.size(), n);
    std::vector<size_t> in_order(n);
    std::iota(in_order.begin(), in_order.end(), size_t{0});
    EXPECT_EQ(done.order, in_order);
    EXPECT_EQ(done.failed, 0u);
    EXPECT_EQ(done.bytes, uint64_t{n} * kPiece);
    EXPECT_EQ(delta("rdma_writes"), int64_t(n));
    smbd_dev_buf_free(buf);
    loop.free();
    EXPECT_TRUE(whole_pool_free());
    ASSERT_EQ(smbd_dev_disconnect(dev_.get(), conn_), 0);
    EXPECT_TRUE(next(SMBD_EVENT_DISCONNECTED));
    EXPECT_EQ(verdict(peer_), "");
}

} // namespace
} // namespace scenario
