// The network fuzzer's runner; see fuzz.h.
#include "fuzz.h"

#include "fuzz_judge.h"
#include "rdma_io.h"
#include "smb2_rw.h"

namespace smbd::client {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
namespace rw = smbd::smb2rw;

std::string ms_text(Clock::duration d)
{
    return std::to_string(std::chrono::duration_cast<milliseconds>(d).count()) +
           " ms";
}

bool is_garbage_error(const Error &e)
{
    // the server broke MS-SMBD or SMB2 framing, or we asked the client for
    // something impossible (a bug here)
    return e.code == make_error_code(Errc::protocol) ||
           e.code == make_error_code(Errc::invalid_argument);
}

// One conversation played against the server.
class Conversation {
  public:
    Conversation(const FuzzOptions &opt, const FuzzTarget &t,
                 const ConversationPlan &plan)
        : opt_(opt), t_(t), plan_(plan)
    {
    }

    struct Played {
        bool answered = false;
        bool server_disconnected = false;
    };

    Result<Played> play()
    {
        Status st =
            std::visit([&](const auto &d) { return stage(d); }, plan_.detail);
        Played p;
        if (!c_)
            return st ? Result<Played>(p) : Result<Played>(st.error());
        // a violation the client caught on the way is the server's garbage
        if (st && c_->end() &&
            c_->end()->code == make_error_code(Errc::protocol))
            st = *c_->end();
        p.answered = answered_;
        p.server_disconnected = c_->observed().peer_disconnected;
        // disconnect first: the memory goes only afterwards (io_)
        c_->close();
        if (!st)
            return st.error();
        return p;
    }

  private:
    milliseconds budget() const
    {
        return opt_.wait * plan_.wait_permille / 1000;
    }

    Error valid_step_failed(const std::string &step, const Error &e) const
    {
        return make_error(Errc::protocol,
                          "the valid " + step +
                              " before the mutation failed: " + e.message);
    }

    enum class Step { connect, negotiate, smb2_negotiate, session_setup };

    // The valid conversation up to @last, which the stage then breaks.
    Status valid_until(Step last, const ConnectOptions &o)
    {
        auto c = Client::connect(opt_.addr, opt_.port, o);
        if (!c)
            return valid_step_failed("connect", c.error());
        c_ = std::move(*c);
        if (last >= Step::negotiate)
            if (auto st = c_->negotiate(); !st)
                return valid_step_failed("MS-SMBD negotiate", st.error());
        if (last >= Step::smb2_negotiate) {
            auto n = c_->smb2_negotiate(plan_.smb2);
            if (!n)
                return valid_step_failed("SMB2 NEGOTIATE", n.error());
            dialect_ = n->dialect;
        }
        if (last >= Step::session_setup) {
            SessionSetupOptions so;
            so.message_id = 1;
            if (auto r = c_->session_setup(so); !r)
                return valid_step_failed("SESSION_SETUP", r.error());
        }
        return {};
    }

    // From here on every step waits the plan's share of --fuzz-wait.
    void mutating() { c_->set_timeout(budget()); }

    // A step after the mutation failed: garbage from the server fails the
    // conversation; its disconnect, its silence or a rule we broke do not.
    Status after(const Error &e)
    {
        if (is_garbage_error(e))
            return e;
        // a send or receive failed as the server's QP went down: its
        // disconnect follows
        if (e.code == make_error_code(Errc::rdma) &&
            !c_->observed().closed_locally)
            (void)c_->wait_peer_disconnect(budget());
        return {};
    }

    // Wait what is left of the plan's share of --fuzz-wait for @expected
    // answers (with none expected, for a disconnect), checking each.
    Status collect(size_t expected)
    {
        auto until = Clock::now() + budget();
        for (size_t got = 0; expected == 0 || got < expected; got++) {
            auto left =
                std::chrono::duration_cast<milliseconds>(until - Clock::now());
            if (left.count() <= 0)
                break;
            auto pdu = c_->recv(left);
            if (!pdu)
                return pdu.error().code == make_error_code(Errc::timeout)
                           ? Status()
                           : after(pdu.error());
            answered_ = true;
            if (auto st = check_answer(pdu->bytes, sent_, answered_flags_); !st)
                return st;
            // smbd answers the SESSION_SETUP before anything behind it
            if (setup_first_ && !answered_flags_[0])
                return make_error(Errc::protocol,
                                  "a PDU sent behind the SESSION_SETUP was "
                                  "answered before it");
        }
        return {};
    }

    Status send_pdus(size_t from)
    {
        for (size_t i = from; i < sent_.size(); i++)
            if (auto st = c_->send_pdu(sent_[i].bytes); !st)
                return after(st.error());
        return {};
    }

    void expect(const Reassembled &r, bool echoable)
    {
        for (const auto &pdu : r.pdus)
            sent_.push_back({pdu, echoable});
    }

    Status stage(const NegotiatePlan &p)
    {
        if (auto st = valid_until(Step::connect, t_.connect); !st)
            return st;
        mutating();
        auto want = expected_negotiate_answer(p.request, t_.receive_size);
        auto st = c_->negotiate_with(p.request);
        const Observed &o = c_->observed();
        answered_ = o.negotiate_response_length > 0;
        if (st) {
            if (want != NegotiateAnswer::success)
                return make_error(Errc::protocol,
                                  "the server accepted a Negotiate Request the "
                                  "protocol core refuses");
            if (!p.smb2_after)
                return {};
            // the driver must serve on whatever it agreed to
            auto n = c_->smb2_negotiate(plan_.smb2);
            if (!n && (is_garbage_error(n.error()) ||
                       n.error().code == make_error_code(Errc::smb2_status)))
                return make_error(
                    Errc::protocol,
                    "the SMB2 NEGOTIATE on an accepted negotiate: " +
                        n.error().message);
            return {};
        }
        const Error &e = st.error();
        if (e.code == make_error_code(Errc::negotiate_rejected)) {
            if (want != NegotiateAnswer::refusal)
                return make_error(
                    Errc::protocol,
                    "the server refused a Negotiate Request it "
                    "should have " +
                        std::string(want == NegotiateAnswer::success
                                        ? "accepted"
                                        : "disconnected on"));
            if (o.negotiate_response_length != SMBD_NEGOTIATE_RESP_SIZE ||
                o.negotiate_status != SMBD_STATUS_NOT_SUPPORTED)
                return make_error(Errc::protocol,
                                  "the failure response is not 32 bytes with "
                                  "STATUS_NOT_SUPPORTED: " +
                                      e.message);
            return {};
        }
        if (is_garbage_error(e))
            return e;
        if (want == NegotiateAnswer::success && o.peer_disconnected)
            return make_error(Errc::protocol,
                              "the server disconnected on a Negotiate Request "
                              "the protocol core accepts");
        return after(e);
    }

    Status stage(const CreditsPlan &p)
    {
        ConnectOptions o = t_.connect;
        o.send_credit_target = p.credits_requested;
        o.receive_credit_max = p.receive_credits;
        if (auto st = valid_until(Step::negotiate, o); !st)
            return st;
        c_->set_repost_receives(false);
        c_->set_control_messages(false);
        mutating();
        expect(reassemble(p.messages, t_.receive_size, t_.max_fragmented_size),
               false);
        for (const auto &m : p.messages)
            if (auto st = c_->send_raw_message(m); !st)
                return after(st.error());
        return collect(sent_.size());
    }

    Status stage(const FragmentsPlan &p)
    {
        if (auto st = valid_until(
                p.owned ? Step::session_setup : Step::negotiate, t_.connect);
            !st)
            return st;
        mutating();
        expect(reassemble(p.messages, t_.receive_size, t_.max_fragmented_size),
               p.owned);
        for (const auto &m : p.messages)
            if (auto st = c_->send_message(m); !st)
                return after(st.error());
        if (p.disconnect)
            return {};
        return collect(sent_.size());
    }

    Status stage(const Smb2NegotiatePlan &p)
    {
        if (auto st = valid_until(Step::negotiate, t_.connect); !st)
            return st;
        mutating();
        sent_.push_back({p.pdu, false});
        if (auto st = send_pdus(0); !st)
            return st;
        return collect(1);
    }

    Status stage(const SessionSetupPlan &p)
    {
        if (auto st = valid_until(Step::smb2_negotiate, t_.connect); !st)
            return st;
        mutating();
        sent_.push_back({p.setup, false});
        for (const auto &e : p.extras)
            sent_.push_back({e, true});
        setup_first_ = true;
        if (auto st = send_pdus(0); !st)
            return st;
        return collect(sent_.size());
    }

    Status stage(const RdmaPlan &p)
    {
        if (auto st = valid_until(Step::session_setup, t_.connect); !st)
            return st;
        uint32_t natural = dialect_ >= SMB2_DIALECT_302
                               ? rw::CHANNEL_RDMA_V1_INVALIDATE
                               : rw::CHANNEL_RDMA_V1;
        IoOptions o;
        o.dialect = dialect_;
        o.channel = !p.other_channel ? natural
                    : natural == rw::CHANNEL_RDMA_V1
                        ? rw::CHANNEL_RDMA_V1_INVALIDATE
                        : rw::CHANNEL_RDMA_V1;
        o.descriptors = p.descriptors;
        o.descriptor_extra = p.descriptor_extra;
        // a slot per request: a window is bound once
        o.slots = uint32_t(p.requests.size());
        o.max_size = p.size;
        auto io = RdmaIo::create(*c_, o);
        if (!io)
            return make_error(Errc::invalid_argument,
                              "registering memory: " + io.error().message);
        io_ = std::move(*io);
        mutating();
        uint64_t message_id = fuzz_first_io_message_id;
        for (uint32_t slot = 0; slot < p.requests.size(); slot++) {
            const RwRequestPlan &r = p.requests[slot];
            auto descs = io_->describe(slot, r.size);
            if (!descs)
                return after(descs.error());
            sent_.push_back({build_rw_request(r, o.channel, *descs, message_id,
                                              c_->session_id()),
                             false});
            message_id += smb2_credit_charge(r.size);
            if (auto st = send_pdus(slot); !st)
                return st;
        }
        switch (p.then) {
        case RdmaPlan::Then::close:
            return {};
        case RdmaPlan::Then::garbage:
            if (auto st = c_->send_raw_message(p.garbage); !st)
                return after(st.error());
            break;
        case RdmaPlan::Then::wait:
            break;
        }
        return collect(sent_.size());
    }

    const FuzzOptions &opt_;
    const FuzzTarget &t_;
    const ConversationPlan &plan_;
    std::unique_ptr<Client> c_;
    // after c_: destroyed first, once close() disconnected
    std::unique_ptr<RdmaIo> io_;
    uint16_t dialect_ = 0;
    std::vector<SentPdu> sent_; // what the server saw after the mutation
    std::vector<bool> answered_flags_;
    bool setup_first_ = false;
    bool answered_ = false;
};

// The fully valid conversation: negotiate, SMB2 NEGOTIATE, a new session,
// echoed PDUs (one in many fragments) and, when the server offers it, a
// write-read over RDMA checked byte for byte. @learn, if given, takes the
// server's limits.
Status valid_conversation(const FuzzOptions &opt, const FuzzTarget &t,
                          uint64_t check, FuzzTarget *learn, std::string &note)
{
    auto step = [](const std::string &what, const Error &e) {
        return make_error(e.code == make_error_code(Errc::protocol)
                              ? Errc::protocol
                              : Errc::mismatch,
                          what + ": " + e.message);
    };
    auto connected = Client::connect(opt.addr, opt.port, t.connect);
    if (!connected)
        return step("connect", connected.error());
    Client &c = **connected;
    if (auto st = c.negotiate(); !st)
        return step("MS-SMBD negotiate", st.error());
    const smbd_negotiate_resp &resp = c.smbd_response();
    if (learn) {
        learn->receive_size = resp.max_receive_size;
        learn->max_fragmented_size = resp.max_fragmented_size;
        learn->max_read_write_size = resp.max_read_write_size;
    }
    Smb2NegotiateOptions so;
    FuzzRng rng(opt.seed, ~check);
    rng.fill(so.salt);
    rng.fill(so.client_guid);
    auto n = c.smb2_negotiate(so);
    if (!n)
        return step("SMB2 NEGOTIATE", n.error());
    SessionSetupOptions ss;
    ss.message_id = 1;
    if (auto r = c.session_setup(ss); !r)
        return step("SESSION_SETUP", r.error());
    uint64_t id = fuzz_first_io_message_id;
    for (uint32_t size :
         {uint32_t(SMB2_HDR_SIZE), resp.max_receive_size + 100, 70000u}) {
        EchoSpec e{id++, c.session_id(), size};
        if (auto st = c.send_pdu(build_echo_pdu(e)); !st)
            return step("sending a PDU", st.error());
        auto got = c.recv_pdu(t.connect.timeout);
        if (!got)
            return step("its echo", got.error());
        if (auto st = verify_echo(e, *got); !st)
            return step("its echo", st.error());
    }
    IoOptions o;
    o.dialect = n->dialect;
    o.channel = o.dialect >= SMB2_DIALECT_302 ? rw::CHANNEL_RDMA_V1_INVALIDATE
                                              : rw::CHANNEL_RDMA_V1;
    o.descriptors = 2;
    o.max_size = 200000;
    o.first_message_id = id;
    auto io = RdmaIo::create(c, o);
    if (!io)
        return step("registering memory", io.error());
    WriteReadOptions wr;
    wr.size = o.max_size;
    IoReport report;
    auto st = write_read(**io, opt.file, wr, t.connect.timeout, report);
    std::string refused = nt_status_text(NT_STATUS_NOT_SUPPORTED);
    if (!st && st.error().code == make_error_code(Errc::smb2_status) &&
        st.error().message.find(refused) != std::string::npos)
        note = "the server offers no RDMA";
    else if (!st)
        return step("write-read over RDMA", st.error());
    else
        note = "wrote and read back " + std::to_string(report.bytes_verified) +
               " bytes over RDMA";
    c.close();
    return {};
}

} // namespace

FuzzReport run_fuzz(const FuzzOptions &opt,
                    const std::function<void(const std::string &)> &line)
{
    FuzzReport r;
    FuzzTarget t;
    t.connect.timeout = opt.timeout;
    t.file_size = opt.file.size;
    auto say = [&](const std::string &s) {
        if (line)
            line(s);
    };
    auto check = [&](uint64_t n, FuzzTarget *learn, const std::string &when) {
        std::string note;
        auto start = Clock::now();
        auto st = valid_conversation(opt, t, n, learn, note);
        r.valid_checks++;
        if (!st) {
            r.ok = false;
            r.failure = "the valid conversation " + when +
                        " failed: " + st.error().message;
            return false;
        }
        say("valid conversation " + when + ": " + note + ", " +
            ms_text(Clock::now() - start));
        return true;
    };
    if (!check(0, &t, "before the first conversation"))
        return r;
    uint64_t since = opt.first;
    for (uint64_t k = 0; k < opt.conversations; k++) {
        uint64_t i = opt.first + k;
        ConversationPlan plan = plan_conversation(opt.seed, i, opt.stage, t);
        std::string head = "conversation " + std::to_string(i) + " " +
                           std::string(fuzz_stage_name(plan.stage)) + ": " +
                           plan.what;
        r.conversations++;
        r.stages[size_t(plan.stage)]++;
        auto start = Clock::now();
        auto played = Conversation(opt, t, plan).play();
        if (!played) {
            r.ok = false;
            r.failure = head + ": " + played.error().message;
            r.replay = fuzz_replay_command(opt, i, 1);
            return r;
        }
        r.answered += played->answered;
        (played->server_disconnected ? r.server_disconnects
                                     : r.client_closes)++;
        say(head + ": " + (played->answered ? "answered" : "no answer") + ", " +
            (played->server_disconnected ? "the server disconnected"
                                         : "the client closed") +
            ", " + ms_text(Clock::now() - start));
        if (valid_check_due(opt, k + 1)) {
            if (!check(k + 1, nullptr,
                       "after conversation " + std::to_string(i))) {
                r.replay = fuzz_replay_command(opt, since, i - since + 1);
                return r;
            }
            since = i + 1;
        }
    }
    return r;
}

bool valid_check_due(const FuzzOptions &opt, uint64_t done)
{
    if (done == opt.conversations)
        return true;
    return opt.check_every != 0 && done % opt.check_every == 0;
}

std::string fuzz_summary(const FuzzOptions &opt, const FuzzReport &r)
{
    std::string s = "NETFUZZ seed=" + std::to_string(opt.seed) +
                    " conversations=" + std::to_string(r.conversations);
    for (size_t i = 0; i < fuzz_stage_count; i++)
        s += " " + std::string(fuzz_stage_name(FuzzStage(i))) + "=" +
             std::to_string(r.stages[i]);
    return s + " server_disconnects=" + std::to_string(r.server_disconnects) +
           " client_closes=" + std::to_string(r.client_closes) +
           " answered=" + std::to_string(r.answered) +
           " valid_checks=" + std::to_string(r.valid_checks) +
           " result=" + (r.ok ? "pass" : "fail");
}

std::string fuzz_replay_command(const FuzzOptions &opt, uint64_t first,
                                uint64_t count)
{
    std::string s = opt.program + " --addr " + opt.addr;
    if (opt.port != kPortByTransport)
        s += " --port " + std::to_string(opt.port);
    s += " --fuzz " + std::to_string(opt.seed) + " --conversations " +
         std::to_string(count) + " --first " + std::to_string(first);
    if (opt.stage)
        s += " --fuzz-stage " + std::string(fuzz_stage_name(*opt.stage));
    if (opt.wait != FuzzOptions{}.wait)
        s += " --fuzz-wait " + std::to_string(opt.wait.count());
    if (opt.file.size != FileOptions{}.size)
        s += " --file-size " + std::to_string(opt.file.size);
    return s;
}

} // namespace smbd::client
