#include "run.h"

#include <algorithm>
#include <cstdio>

namespace smbd::client {

namespace {

using std::chrono::milliseconds;

constexpr uint64_t NEGOTIATE_MESSAGE_ID = 0;
constexpr uint64_t SESSION_SETUP_MESSAGE_ID = 1;
constexpr uint64_t FIRST_ECHO_MESSAGE_ID = 2;

std::string hex(uint64_t v, int width)
{
    char buf[24];
    std::snprintf(buf, sizeof(buf), "0x%0*llx", width, (unsigned long long)v);
    return buf;
}

std::string guid_text(const std::array<uint8_t, 16> &g)
{
    std::string s;
    for (uint8_t b : g) {
        char buf[4];
        std::snprintf(buf, sizeof(buf), "%02x", b);
        s += buf;
    }
    return s;
}

class Runner {
  public:
    Runner(const RunOptions &opt,
           const std::function<void(const std::string &)> &progress)
        : opt_(opt), progress_(progress), info_(hostile_info(opt.hostile))
    {
        r_.hostile = opt.hostile;
    }

    RunReport run()
    {
        auto start = Client::Clock::now();
        execute();
        if (c_) {
            r_.observed = c_->observed();
            r_.credits = c_->credits();
            c_->close();
            r_.observed = c_->observed();
        }
        r_.elapsed = std::chrono::duration_cast<milliseconds>(
            Client::Clock::now() - start);
        return r_;
    }

  private:
    bool hostile(Hostile h) const { return opt_.hostile == h; }

    void step(const std::string &line)
    {
        r_.steps.push_back(line);
        if (progress_)
            progress_(line);
    }

    void finish(bool ok, const std::string &outcome)
    {
        r_.ok = ok;
        r_.outcome = outcome;
    }

    void fail(const std::string &what, const Error &e)
    {
        finish(false, what + ": " + e.message);
    }

    // The mode's rule is broken; the server must now end the connection.
    void expect_disconnect(bool process_completions = true)
    {
        std::string reason = "SMBD_REASON_" + std::string(info_.reason_name);
        auto t0 = Client::Clock::now();
        auto st = c_->wait_peer_disconnect(opt_.wait, process_completions);
        auto ms =
            std::chrono::duration_cast<milliseconds>(Client::Clock::now() - t0);
        if (st)
            finish(true,
                   "the server disconnected " + std::to_string(ms.count()) +
                       " ms later, as expected (the driver should record " +
                       reason + ")");
        else
            finish(false, "expected the server to disconnect (" + reason +
                              "): " + st.error().message);
    }

    void execute()
    {
        auto c = Client::connect(opt_.addr, opt_.port, opt_.connect);
        if (!c)
            return fail("connect", c.error());
        c_ = std::move(*c);
        r_.device = c_->device_name();
        step("connected to " + opt_.addr + " port " +
             std::to_string(c_->port()) + " over " + r_.device +
             (c_->iwarp() ? " (iWARP)" : "") + " (responder_resources " +
             std::to_string(c_->responder_resources()) + ", initiator_depth " +
             std::to_string(c_->initiator_depth()) + ")");
        if (opt_.hostile != Hostile::none)
            step("hostile mode " + std::string(info_.name) + ": " +
                 std::string(info_.rule));

        if (hostile(Hostile::stall_negotiate))
            return expect_disconnect();
        if (!smbd_negotiate())
            return;
        if (!data_phase_rules())
            return;
        if (!smb2_negotiate())
            return;
        if (hostile(Hostile::stall_session_setup))
            return expect_disconnect();
        if (hostile(Hostile::pipelined_setup))
            return pipelined_setup();
        if (!session_setup())
            return;
        if (opt_.io != IoMode::none)
            return rdma_io();
        echoes();
    }

    // SMB2 WRITE and READ over RDMA: verified rounds or the benchmark.
    void rdma_io()
    {
        bool bench_mode = opt_.io == IoMode::bench;
        uint32_t size = bench_mode ? opt_.bench.size : opt_.write_read.size;
        if (size > r_.smbd.max_read_write_size)
            return finish(false,
                          "transfers of " + std::to_string(size) +
                              " bytes are above the server's "
                              "MaxReadWriteSize " +
                              std::to_string(r_.smbd.max_read_write_size));
        IoOptions o;
        o.dialect = r_.smb2->dialect;
        o.channel = opt_.channel.value_or(
            o.dialect >= SMB2_DIALECT_302 ? smb2rw::CHANNEL_RDMA_V1_INVALIDATE
                                          : smb2rw::CHANNEL_RDMA_V1);
        o.descriptors = opt_.descriptors;
        o.descriptor_extra = opt_.descriptor_extra;
        o.slots = bench_mode ? opt_.bench.depth : 1;
        o.max_size = size;
        o.first_message_id = FIRST_ECHO_MESSAGE_ID;
        auto io = RdmaIo::create(*c_, o);
        if (!io)
            return fail("registering memory", io.error());
        r_.channel = o.channel;
        r_.invalidation_expected = (*io)->invalidation_expected();
        std::string channel =
            o.channel != smb2rw::CHANNEL_RDMA_V1_INVALIDATE
                ? "RDMA_V1 (the MR's rkey)"
            : (*io)->lending() == RdmaIo::Lending::windows
                ? "RDMA_V1_INVALIDATE (a memory window per descriptor and "
                  "request)"
                : "RDMA_V1_INVALIDATE (a memory registration per descriptor "
                  "and request: the device has no windows)";
        step("memory registered for " + std::to_string(o.slots) + " transfer" +
             (o.slots > 1 ? "s" : "") + " of up to " + std::to_string(size) +
             " bytes; channel " + channel + ", " +
             std::to_string(o.descriptors) + " descriptor(s)" +
             (o.descriptor_extra
                  ? " describing " + std::to_string(o.descriptor_extra) +
                        " bytes more than the data"
                  : ""));
        IoReport report;
        Status st = bench_mode
                        ? bench(**io, opt_.file, opt_.bench,
                                opt_.connect.timeout, report)
                        : write_read(**io, opt_.file, opt_.write_read,
                                     opt_.connect.timeout, report, progress_);
        r_.io = report;
        if (!st)
            return fail(bench_mode ? "benchmark" : "write-read", st.error());
        std::string inv = r_.invalidation_expected
                              ? ", each response invalidating the first "
                                "descriptor's token"
                              : ", no response invalidating anything";
        if (bench_mode)
            return finish(true, std::to_string(report.ops) + " " +
                                    (opt_.bench.write ? "WRITEs" : "READs") +
                                    " of " + std::to_string(size) + " bytes" +
                                    inv);
        finish(true, "wrote " + std::to_string(report.bytes_written) +
                         " bytes, read back and verified " +
                         std::to_string(report.bytes_verified) + " in " +
                         std::to_string(opt_.write_read.rounds) + " round(s)" +
                         inv + "; the client closed the connection");
    }

    bool smbd_negotiate()
    {
        smbd_negotiate_req req = Client::negotiate_request(opt_.connect);
        size_t len = SMBD_NEGOTIATE_REQ_SIZE;
        switch (opt_.hostile) {
        case Hostile::negotiate_version:
            req.min_version = req.max_version = 0x0200;
            break;
        case Hostile::negotiate_short:
            len = 12;
            break;
        case Hostile::negotiate_credits_zero:
            req.credits_requested = 0;
            break;
        case Hostile::negotiate_small_receive:
            req.max_receive_size = 64;
            break;
        case Hostile::negotiate_small_fragmented:
            req.max_fragmented_size = 4096;
            break;
        default:
            break;
        }
        uint8_t buf[SMBD_NEGOTIATE_REQ_SIZE];
        smbd_negotiate_req_build(&req, buf);
        auto st = c_->negotiate_with(std::span<const uint8_t>(buf, len));
        const Observed &o = c_->observed();

        if (hostile(Hostile::negotiate_version)) {
            bool failure_response =
                !st &&
                st.error().code == make_error_code(Errc::negotiate_rejected) &&
                o.negotiate_status == SMBD_STATUS_NOT_SUPPORTED &&
                o.negotiate_response_length == SMBD_NEGOTIATE_RESP_SIZE;
            if (!failure_response) {
                finish(false,
                       "expected a 32-byte negotiate response with Status "
                       "0xc00000bb, got: " +
                           (st ? std::string("a successful negotiate")
                               : st.error().message));
                return false;
            }
            step("negotiate refused as expected: " + st.error().message);
            expect_disconnect();
            return false;
        }
        if (opt_.hostile >= Hostile::negotiate_short &&
            opt_.hostile <= Hostile::negotiate_small_fragmented) {
            if (st) {
                finish(false,
                       "the server accepted an invalid negotiate request");
                return false;
            }
            if (o.negotiate_response_length) {
                finish(false,
                       "the server answered an invalid negotiate request "
                       "instead of disconnecting");
                return false;
            }
            expect_disconnect();
            return false;
        }
        if (!st) {
            fail("SMB Direct negotiate", st.error());
            return false;
        }
        r_.smbd_negotiated = true;
        r_.smbd = c_->smbd_response();
        r_.params = c_->params();
        const auto &s = r_.smbd;
        const auto &p = r_.params;
        step("SMB Direct negotiated: server grants " +
             std::to_string(s.credits_granted) + " credits and asks for " +
             std::to_string(s.credits_requested) + "; MaxReadWriteSize " +
             std::to_string(s.max_read_write_size) +
             ", server PreferredSendSize " +
             std::to_string(s.preferred_send_size) + ", MaxReceiveSize " +
             std::to_string(s.max_receive_size) + ", MaxFragmentedSize " +
             std::to_string(s.max_fragmented_size) + "; we send up to " +
             std::to_string(p.max_send_size) + " bytes per message and post " +
             std::to_string(p.receive_credit_target) + " receives of " +
             std::to_string(p.max_receive_size));
        return true;
    }

    // One Data Transfer message carrying the SMB2 NEGOTIATE, broken per
    // the mode; it grants nothing, so the server can only disconnect.
    std::vector<uint8_t> broken_message()
    {
        auto pdu = build_smb2_negotiate(opt_.smb2);
        std::vector<uint8_t> msg(SMBD_DATA_PAYLOAD_OFFSET + pdu->size());
        smbd_data_hdr h{};
        h.credits_requested = opt_.connect.send_credit_target;
        h.data_length = uint32_t(pdu->size());
        smbd_data_build(&h, msg.data());
        std::copy(pdu->begin(), pdu->end(),
                  msg.begin() + SMBD_DATA_PAYLOAD_OFFSET);
        switch (opt_.hostile) {
        case Hostile::offset_past_buffer:
            smbd_put_le32(&msg[16], h.data_length + 64);
            break;
        case Hostile::offset_unaligned:
            smbd_put_le32(&msg[12], 20);
            break;
        case Hostile::data_credits_zero:
            smbd_put_le16(&msg[0], 0);
            break;
        case Hostile::remaining_over_limit:
            smbd_put_le32(&msg[8],
                          r_.smbd.max_fragmented_size - h.data_length + 1);
            break;
        default:
            break;
        }
        return msg;
    }

    // Modes that act right after the MS-SMBD negotiate; false: done.
    bool data_phase_rules()
    {
        if (opt_.hostile >= Hostile::offset_past_buffer &&
            opt_.hostile <= Hostile::send_without_credit)
            // a grant of our own would give the server the credits these
            // modes deny it
            c_->set_control_messages(false);
        switch (opt_.hostile) {
        case Hostile::stall_smb2:
            expect_disconnect();
            return false;
        case Hostile::offset_past_buffer:
        case Hostile::offset_unaligned:
        case Hostile::data_credits_zero:
        case Hostile::remaining_over_limit:
            if (auto st = c_->send_raw_message(broken_message()); !st) {
                fail("sending the broken message", st.error());
                return false;
            }
            expect_disconnect();
            return false;
        case Hostile::send_without_credit: {
            uint32_t n = c_->credits().send_credits + 1;
            smbd_data_hdr h{};
            h.credits_requested = opt_.connect.send_credit_target;
            uint8_t msg[SMBD_DATA_PAYLOAD_OFFSET];
            size_t len = smbd_data_build(&h, msg);
            for (uint32_t i = 0; i < n; i++) {
                if (auto st = c_->send_raw_message(
                        std::span<const uint8_t>(msg, len));
                    !st) {
                    fail("sending empty message " + std::to_string(i + 1),
                         st.error());
                    return false;
                }
            }
            step("sent " + std::to_string(n) + " empty messages on " +
                 std::to_string(n - 1) + " credits");
            expect_disconnect();
            return false;
        }
        case Hostile::bad_smb2_negotiate: {
            auto pdu = *build_smb2_negotiate(opt_.smb2);
            pdu.resize(SMB2_HDR_SIZE + 20); // into the 36-byte fixed part
            if (auto st = c_->send_pdu(pdu); !st) {
                fail("sending the truncated NEGOTIATE", st.error());
                return false;
            }
            expect_disconnect();
            return false;
        }
        case Hostile::first_not_negotiate: {
            SessionSetupOptions so;
            so.message_id = NEGOTIATE_MESSAGE_ID;
            if (auto st = c_->send_pdu(build_smb2_session_setup(so)); !st) {
                fail("sending SESSION_SETUP first", st.error());
                return false;
            }
            expect_disconnect();
            return false;
        }
        case Hostile::never_grant:
            // the receives posted now are granted by the next message; none
            // are posted again
            c_->set_repost_receives(false);
            return true;
        case Hostile::oversized_setup: {
            auto pdu = *build_smb2_negotiate(opt_.smb2);
            pdu.resize(256 << 10);
            // the server may cut it off at its first fragment
            if (auto st = c_->send_pdu(pdu);
                !st &&
                st.error().code != make_error_code(Errc::peer_disconnected)) {
                fail("sending the oversized NEGOTIATE", st.error());
                return false;
            }
            expect_disconnect();
            return false;
        }
        default:
            return true;
        }
    }

    // SESSION_SETUP and the PDUs behind it without waiting; the echoes carry
    // SessionId 0 since the session is not known when they are sent.
    void pipelined_setup()
    {
        SessionSetupOptions so;
        so.message_id = SESSION_SETUP_MESSAGE_ID;
        so.binding = opt_.bind;
        so.session_id = opt_.bind_session;
        if (auto st = c_->send_pdu(build_smb2_session_setup(so)); !st)
            return fail("sending SESSION_SETUP", st.error());
        for (uint32_t i = 0; i < opt_.pdus; i++) {
            EchoSpec e = echo(i);
            e.session_id = opt_.bind ? opt_.bind_session : 0;
            if (auto st = c_->send_pdu(build_echo_pdu(e)); !st)
                return fail("sending PDU " + std::to_string(i + 1), st.error());
        }
        step("sent SESSION_SETUP and " + std::to_string(opt_.pdus) +
             " PDUs without waiting");
        auto resp = c_->recv_pdu(opt_.connect.timeout);
        if (!resp)
            return fail("SESSION_SETUP response", resp.error());
        if (auto ss = parse_smb2_session_setup_response(*resp); !ss)
            return fail("SESSION_SETUP response", ss.error());
        for (uint32_t i = 0; i < opt_.pdus; i++) {
            auto got = c_->recv_pdu(opt_.connect.timeout);
            EchoSpec e = echo(i);
            e.session_id = opt_.bind ? opt_.bind_session : 0;
            if (!got)
                return fail("echo of PDU " + std::to_string(i + 1),
                            got.error());
            if (auto st = verify_echo(e, *got); !st)
                return finish(false, st.error().message);
            r_.pdus_verified++;
        }
        finish(true, echoed_text() + ", in order, after a pipelined "
                                     "SESSION_SETUP; the client closed the "
                                     "connection");
    }

    bool smb2_negotiate()
    {
        auto resp = c_->smb2_negotiate(opt_.smb2);
        if (!resp) {
            fail("SMB2 NEGOTIATE", resp.error());
            return false;
        }
        const auto &n = *resp;
        std::string line =
            "SMB2 NEGOTIATE: dialect " + dialect_text(n.dialect) +
            ", ServerGuid " + guid_text(n.server_guid) + ", capabilities " +
            hex(n.capabilities, 8) + ", security mode " +
            hex(n.security_mode, 4) + ", MaxRead " +
            std::to_string(n.max_read_size) + ", MaxWrite " +
            std::to_string(n.max_write_size) + ", security blob " +
            std::to_string(n.security_blob.size()) + " bytes";
        if (n.dialect == SMB2_DIALECT_311) {
            line += "; contexts: preauth " +
                    hex(n.preauth_hash.value_or(0), 4) + " with a " +
                    std::to_string(n.preauth_salt.size()) + "-byte salt";
            if (n.cipher)
                line += ", cipher " + hex(*n.cipher, 4);
            if (n.signing_algorithm)
                line += ", signing " + hex(*n.signing_algorithm, 4);
            if (n.posix)
                line += ", POSIX";
        }
        step(line + " (request " +
             std::to_string(c_->smb2_negotiate_request_bytes().size()) +
             " bytes, response " +
             std::to_string(c_->smb2_negotiate_response_bytes().size()) +
             " bytes)");
        r_.smb2 = n;
        return true;
    }

    bool session_setup()
    {
        SessionSetupOptions so;
        so.message_id = SESSION_SETUP_MESSAGE_ID;
        so.binding = opt_.bind;
        so.session_id = opt_.bind_session;
        auto resp = c_->session_setup(so);
        if (!resp && opt_.expect_status &&
            resp.error().code == make_error_code(Errc::smb2_status) &&
            resp.error().message.find(nt_status_text(*opt_.expect_status)) !=
                std::string::npos) {
            step(resp.error().message + ", as expected");
            auto st = c_->wait_peer_disconnect(opt_.wait, true);
            finish(bool(st),
                   st ? "refused with " + nt_status_text(*opt_.expect_status) +
                            ", then the server disconnected, as expected"
                      : "expected the server to disconnect: " +
                            st.error().message);
            return false;
        }
        if (!resp) {
            fail(opt_.bind ? "binding SESSION_SETUP" : "SESSION_SETUP",
                 resp.error());
            return false;
        }
        if (opt_.expect_status) {
            finish(false, "expected SESSION_SETUP to fail with " +
                              nt_status_text(*opt_.expect_status));
            return false;
        }
        r_.session_id = c_->session_id();
        step(std::string(opt_.bind ? "bound to" : "new") + " session " +
             hex(r_.session_id, 16) + ": " + nt_status_text(resp->hdr.status) +
             ", session flags " + hex(resp->session_flags, 4));
        return true;
    }

    EchoSpec echo(uint32_t i) const
    {
        return EchoSpec{FIRST_ECHO_MESSAGE_ID + i, r_.session_id, opt_.size};
    }

    bool verify(uint32_t i, const Result<std::vector<uint8_t>> &got)
    {
        if (!got) {
            fail("echo of PDU " + std::to_string(i + 1), got.error());
            return false;
        }
        if (auto st = verify_echo(echo(i), *got); !st) {
            finish(false, st.error().message);
            return false;
        }
        r_.pdus_verified++;
        return true;
    }

    std::string echoed_text() const
    {
        return std::to_string(r_.pdus_verified) + " PDUs of " +
               std::to_string(opt_.size) + " bytes echoed intact";
    }

    void echoes()
    {
        if (opt_.size < SMB2_HDR_SIZE)
            return finish(false, "PDUs hold at least the 64-byte SMB2 header");
        switch (opt_.hostile) {
        case Hostile::flood:
            return flood();
        case Hostile::never_grant:
            return never_grant();
        case Hostile::mid_fragment_disconnect:
            return mid_fragment_disconnect();
        default:
            break;
        }
        for (uint32_t i = 0; i < opt_.pdus; i++) {
            if (auto st = c_->send_pdu(build_echo_pdu(echo(i))); !st)
                return fail("sending PDU " + std::to_string(i + 1), st.error());
            if (!verify(i, c_->recv_pdu(opt_.connect.timeout)))
                return;
        }
        if (opt_.pdus)
            step(echoed_text());
        if (hostile(Hostile::ignore_keepalive)) {
            step("no longer reading the completion queue");
            return expect_disconnect(false);
        }
        finish(true, echoed_text() + "; the client closed the connection");
    }

    void flood()
    {
        for (uint32_t i = 0; i < opt_.pdus; i++)
            if (auto st = c_->send_pdu(build_echo_pdu(echo(i))); !st)
                return fail("flooding PDU " + std::to_string(i + 1),
                            st.error());
        step("sent " + std::to_string(opt_.pdus) + " PDUs back to back (" +
             std::to_string(c_->observed().credit_waits) +
             " waited for credits)");
        for (uint32_t i = 0; i < opt_.pdus; i++)
            if (!verify(i, c_->recv_pdu(opt_.connect.timeout)))
                return;
        finish(true, echoed_text() + " after the flood; the client closed the "
                                     "connection");
    }

    // Keep going until the server has spent every credit it was granted;
    // its next answer cannot be sent and it must give up.
    void never_grant()
    {
        uint32_t n =
            std::max<uint32_t>(opt_.pdus, r_.params.receive_credit_target + 2);
        for (uint32_t i = 0; i < n; i++) {
            auto st = c_->send_pdu(build_echo_pdu(echo(i)));
            if (st) {
                auto got = c_->recv_pdu(opt_.wait);
                if (got) {
                    if (!verify(i, got))
                        return;
                    continue;
                }
            }
            break;
        }
        step(echoed_text() + ", then the server ran out of credits");
        expect_disconnect();
    }

    void mid_fragment_disconnect()
    {
        uint32_t payload = r_.params.max_send_size - SMBD_DATA_PAYLOAD_OFFSET;
        uint32_t size = std::min(std::max(opt_.size, 4 * payload + 1),
                                 r_.params.max_fragmented_send_size);
        uint32_t count = (size + payload - 1) / payload;
        uint32_t sent = std::max<uint32_t>(1, count / 2);
        EchoSpec spec = echo(0);
        spec.size = size;
        if (auto st = c_->send_pdu_fragments(build_echo_pdu(spec), sent); !st)
            return fail("sending the first fragments", st.error());
        c_->close();
        finish(true,
               "sent " + std::to_string(sent) + " of " + std::to_string(count) +
                   " fragments of a " + std::to_string(size) +
                   "-byte PDU, then disconnected (the driver should record "
                   "SMBD_REASON_PEER and drop the partial PDU)");
    }

    const RunOptions &opt_;
    const std::function<void(const std::string &)> &progress_;
    const HostileInfo &info_;
    std::unique_ptr<Client> c_;
    RunReport r_;
};

} // namespace

RunReport run(const RunOptions &opt,
              const std::function<void(const std::string &)> &progress)
{
    return Runner(opt, progress).run();
}

} // namespace smbd::client
