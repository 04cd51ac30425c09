#include "hostile.h"

#include <linux/smbd.h>

#include <algorithm>

#include "run.h"

namespace smbd::client {

namespace {

// The SMB2 NEGOTIATE's MessageId: the first request of a connection.
constexpr uint64_t NEGOTIATE_MESSAGE_ID = 0;

// A sent message broke the rule; the server must now disconnect.
void sent_then_disconnect(Flow &f, const std::string &what, const Status &st)
{
    if (!st)
        return f.fail(what, st.error());
    f.expect_disconnect();
}

void none(Flow &f)
{
    if (f.session() && f.pdus_next() && f.echo_each())
        f.finish(true, f.echoed_text() + "; the client closed the connection");
}

void stall(Flow &f) { f.expect_disconnect(); }

void negotiate_version(Flow &f)
{
    smbd_negotiate_req req = Client::negotiate_request(f.opt().connect);
    req.min_version = req.max_version = 0x0200;
    uint8_t buf[SMBD_NEGOTIATE_REQ_SIZE];
    smbd_negotiate_req_build(&req, buf);
    auto st = f.client().negotiate_with(buf);
    const Observed &o = f.client().observed();
    bool failure_response =
        !st && st.error().code == make_error_code(Errc::negotiate_rejected) &&
        o.negotiate_status == SMBD_STATUS_NOT_SUPPORTED &&
        o.negotiate_response_length == SMBD_NEGOTIATE_RESP_SIZE;
    if (!failure_response)
        return f.finish(false,
                        "expected a 32-byte negotiate response with Status "
                        "0xc00000bb, got: " +
                            (st ? std::string("a successful negotiate")
                                : st.error().message));
    f.step("negotiate refused as expected: " + st.error().message);
    f.expect_disconnect();
}

// An invalid Negotiate Request, the first @len bytes of @req: the server
// must disconnect without answering.
void invalid_negotiate(Flow &f, const smbd_negotiate_req &req,
                       size_t len = SMBD_NEGOTIATE_REQ_SIZE)
{
    uint8_t buf[SMBD_NEGOTIATE_REQ_SIZE];
    smbd_negotiate_req_build(&req, buf);
    if (f.client().negotiate_with(std::span<const uint8_t>(buf, len)))
        return f.finish(false,
                        "the server accepted an invalid negotiate request");
    if (f.client().observed().negotiate_response_length)
        return f.finish(false, "the server answered an invalid negotiate "
                               "request instead of disconnecting");
    f.expect_disconnect();
}

// The valid Negotiate Request with one field changed.
template <class F> void negotiate_with_field(Flow &f, F change)
{
    smbd_negotiate_req req = Client::negotiate_request(f.opt().connect);
    change(req);
    invalid_negotiate(f, req);
}

void negotiate_short(Flow &f)
{
    invalid_negotiate(f, Client::negotiate_request(f.opt().connect), 12);
}

void negotiate_credits_zero(Flow &f)
{
    negotiate_with_field(f, [](auto &r) { r.credits_requested = 0; });
}

void negotiate_small_receive(Flow &f)
{
    negotiate_with_field(f, [](auto &r) { r.max_receive_size = 64; });
}

void negotiate_small_fragmented(Flow &f)
{
    negotiate_with_field(f, [](auto &r) { r.max_fragmented_size = 4096; });
}

// One Data Transfer message carrying the SMB2 NEGOTIATE, changed by
// @change; it grants nothing, so the server can only disconnect.
void broken_message(Flow &f,
                    void (*change)(const Flow &, std::vector<uint8_t> &))
{
    if (!f.smbd_negotiate())
        return;
    // a grant of our own would give the server the credits it is denied
    f.client().set_control_messages(false);
    auto pdu = build_smb2_negotiate(f.opt().smb2);
    if (!pdu)
        return f.fail("building the SMB2 NEGOTIATE", pdu.error());
    std::vector<uint8_t> msg(SMBD_DATA_PAYLOAD_OFFSET + pdu->size());
    smbd_data_hdr h{};
    h.credits_requested = f.opt().connect.send_credit_target;
    h.data_length = uint32_t(pdu->size());
    smbd_data_build(&h, msg.data());
    std::copy(pdu->begin(), pdu->end(), msg.begin() + SMBD_DATA_PAYLOAD_OFFSET);
    change(f, msg);
    sent_then_disconnect(f, "sending the broken message",
                         f.client().send_raw_message(msg));
}

uint32_t data_length(const std::vector<uint8_t> &msg)
{
    return smbd_get_le32(&msg[SMBD_DATA_DATA_LENGTH]);
}

void offset_past_buffer(Flow &f)
{
    broken_message(f, [](const Flow &, std::vector<uint8_t> &m) {
        smbd_put_le32(&m[SMBD_DATA_DATA_LENGTH], data_length(m) + 64);
    });
}

void offset_unaligned(Flow &f)
{
    broken_message(f, [](const Flow &, std::vector<uint8_t> &m) {
        smbd_put_le32(&m[SMBD_DATA_DATA_OFFSET], 20);
    });
}

void data_credits_zero(Flow &f)
{
    broken_message(f, [](const Flow &, std::vector<uint8_t> &m) {
        smbd_put_le16(&m[SMBD_DATA_CREDITS_REQUESTED], 0);
    });
}

void remaining_over_limit(Flow &f)
{
    broken_message(f, [](const Flow &flow, std::vector<uint8_t> &m) {
        smbd_put_le32(&m[SMBD_DATA_REMAINING],
                      flow.report().smbd.max_fragmented_size - data_length(m) +
                          1);
    });
}

void send_without_credit(Flow &f)
{
    if (!f.smbd_negotiate())
        return;
    f.client().set_control_messages(false);
    uint32_t n = f.client().credits().send_credits + 1;
    smbd_data_hdr h{};
    h.credits_requested = f.opt().connect.send_credit_target;
    uint8_t msg[SMBD_DATA_PAYLOAD_OFFSET];
    size_t len = smbd_data_build(&h, msg);
    for (uint32_t i = 0; i < n; i++)
        if (auto st =
                f.client().send_raw_message(std::span<const uint8_t>(msg, len));
            !st)
            return f.fail("sending empty message " + std::to_string(i + 1),
                          st.error());
    f.step("sent " + std::to_string(n) + " empty messages on " +
           std::to_string(n - 1) + " credits");
    f.expect_disconnect();
}

// Keep going until the server has spent every credit it was granted; its
// next answer cannot be sent and it must give up.
void never_grant(Flow &f)
{
    if (!f.smbd_negotiate())
        return;
    // the receives posted now are granted by the next message; none are
    // posted again
    f.client().set_repost_receives(false);
    if (!f.smb2_negotiate() || !f.session_setup() || !f.pdus_next())
        return;
    uint32_t n = std::max<uint32_t>(
        f.opt().pdus, f.report().params.receive_credit_target + 2);
    for (uint32_t i = 0; i < n; i++) {
        if (!f.client().send_pdu(build_echo_pdu(f.echo(i))))
            break;
        auto got = f.client().recv_pdu(f.opt().wait);
        if (!got)
            break;
        if (!f.verify(i, got))
            return;
    }
    f.step(f.echoed_text() + ", then the server ran out of credits");
    f.expect_disconnect();
}

void stall_smb2(Flow &f)
{
    if (f.smbd_negotiate())
        f.expect_disconnect();
}

void stall_session_setup(Flow &f)
{
    if (f.smbd_negotiate() && f.smb2_negotiate())
        f.expect_disconnect();
}

void mid_fragment_disconnect(Flow &f)
{
    if (!f.session() || !f.pdus_next())
        return;
    const smbd_conn_params &p = f.report().params;
    uint32_t payload = p.max_send_size - SMBD_DATA_PAYLOAD_OFFSET;
    uint32_t size = std::min(std::max(f.opt().size, 4 * payload + 1),
                             p.max_fragmented_send_size);
    uint32_t count = (size + payload - 1) / payload;
    uint32_t sent = std::max<uint32_t>(1, count / 2);
    EchoSpec spec = f.echo(0);
    spec.size = size;
    if (auto st = f.client().send_pdu_fragments(build_echo_pdu(spec), sent);
        !st)
        return f.fail("sending the first fragments", st.error());
    f.client().close();
    f.finish(true, "sent " + std::to_string(sent) + " of " +
                       std::to_string(count) + " fragments of a " +
                       std::to_string(size) +
                       "-byte PDU, then disconnected (the driver should "
                       "record SMBD_REASON_PEER and drop the partial PDU)");
}

void ignore_keepalive(Flow &f)
{
    if (!f.session() || !f.pdus_next() || !f.echo_each())
        return;
    f.step("no longer reading the completion queue");
    f.expect_disconnect(false);
}

void flood(Flow &f)
{
    if (!f.session() || !f.pdus_next())
        return;
    uint32_t n = f.opt().pdus;
    for (uint32_t i = 0; i < n; i++)
        if (auto st = f.client().send_pdu(build_echo_pdu(f.echo(i))); !st)
            return f.fail("flooding PDU " + std::to_string(i + 1), st.error());
    f.step("sent " + std::to_string(n) + " PDUs back to back (" +
           std::to_string(f.client().observed().credit_waits) +
           " waited for credits)");
    for (uint32_t i = 0; i < n; i++)
        if (!f.verify(i, f.client().recv_pdu(f.opt().connect.timeout)))
            return;
    f.finish(true, f.echoed_text() + " after the flood; the client closed the "
                                     "connection");
}

void bad_smb2_negotiate(Flow &f)
{
    if (!f.smbd_negotiate())
        return;
    auto pdu = build_smb2_negotiate(f.opt().smb2);
    if (!pdu)
        return f.fail("building the SMB2 NEGOTIATE", pdu.error());
    pdu->resize(SMB2_HDR_SIZE + 20); // into the 36-byte fixed part
    sent_then_disconnect(f, "sending the truncated NEGOTIATE",
                         f.client().send_pdu(*pdu));
}

void first_not_negotiate(Flow &f)
{
    if (!f.smbd_negotiate())
        return;
    SessionSetupOptions so;
    so.message_id = NEGOTIATE_MESSAGE_ID;
    sent_then_disconnect(f, "sending SESSION_SETUP first",
                         f.client().send_pdu(build_smb2_session_setup(so)));
}

void oversized_setup(Flow &f)
{
    if (!f.smbd_negotiate())
        return;
    auto pdu = build_smb2_negotiate(f.opt().smb2);
    if (!pdu)
        return f.fail("building the SMB2 NEGOTIATE", pdu.error());
    pdu->resize(size_t{2} * SMBD_MAX_SETUP_PDU);
    auto st = f.client().send_pdu(*pdu);
    // the server may cut it off at its first fragment
    if (!st && st.error().code == make_error_code(Errc::peer_disconnected))
        st = Status();
    sent_then_disconnect(f, "sending the oversized NEGOTIATE", st);
}

// SESSION_SETUP and the PDUs behind it without waiting; the echoes carry
// SessionId 0 since the session is not known when they are sent.
void pipelined_setup(Flow &f)
{
    if (!f.smbd_negotiate() || !f.smb2_negotiate())
        return;
    const RunOptions &opt = f.opt();
    Client &c = f.client();
    auto echo = [&](uint32_t i) {
        EchoSpec e = f.echo(i);
        e.session_id = opt.bind ? opt.bind_session : 0;
        return e;
    };
    if (auto st = c.send_pdu(build_smb2_session_setup(f.setup_options())); !st)
        return f.fail("sending SESSION_SETUP", st.error());
    for (uint32_t i = 0; i < opt.pdus; i++)
        if (auto st = c.send_pdu(build_echo_pdu(echo(i))); !st)
            return f.fail("sending PDU " + std::to_string(i + 1), st.error());
    f.step("sent SESSION_SETUP and " + std::to_string(opt.pdus) +
           " PDUs without waiting");
    auto resp = c.recv_pdu(opt.connect.timeout);
    if (!resp)
        return f.fail("SESSION_SETUP response", resp.error());
    if (auto ss = parse_smb2_session_setup_response(*resp); !ss)
        return f.fail("SESSION_SETUP response", ss.error());
    for (uint32_t i = 0; i < opt.pdus; i++)
        if (!f.verify(i, c.recv_pdu(opt.connect.timeout), echo(i)))
            return;
    f.finish(true, f.echoed_text() + ", in order, after a pipelined "
                                     "SESSION_SETUP; the client closed the "
                                     "connection");
}

#define REASON(r) SMBD_REASON_##r, #r

constexpr HostileInfo modes[] = {
    {Hostile::none, "none", REASON(PEER),
     "no rule broken; the client closes the connection at the end", none},
    {Hostile::negotiate_version, "negotiate-version", REASON(BAD_NEGOTIATE),
     "MS-SMBD Negotiate Request with Min/MaxVersion 0x0200 (no 0x0100); the "
     "server must answer with the 32-byte failure response, Status "
     "STATUS_NOT_SUPPORTED, then disconnect",
     negotiate_version},
    {Hostile::negotiate_short, "negotiate-short", REASON(BAD_NEGOTIATE),
     "Negotiate Request of 12 bytes instead of 20", negotiate_short},
    {Hostile::negotiate_credits_zero, "negotiate-credits-zero",
     REASON(BAD_NEGOTIATE), "Negotiate Request with CreditsRequested 0",
     negotiate_credits_zero},
    {Hostile::negotiate_small_receive, "negotiate-small-receive",
     REASON(BAD_NEGOTIATE), "Negotiate Request with MaxReceiveSize 64 (< 128)",
     negotiate_small_receive},
    {Hostile::negotiate_small_fragmented, "negotiate-small-fragmented",
     REASON(BAD_NEGOTIATE),
     "Negotiate Request with MaxFragmentedSize 4096 (< 131072)",
     negotiate_small_fragmented},
    {Hostile::offset_past_buffer, "offset-past-buffer", REASON(BAD_MESSAGE),
     "the SMB2 NEGOTIATE's Data Transfer message claims 64 bytes more "
     "DataLength than it carries",
     offset_past_buffer},
    {Hostile::offset_unaligned, "offset-unaligned", REASON(BAD_MESSAGE),
     "the SMB2 NEGOTIATE's Data Transfer message has DataOffset 20 (not "
     "8-byte aligned)",
     offset_unaligned},
    {Hostile::data_credits_zero, "data-credits-zero", REASON(BAD_MESSAGE),
     "the SMB2 NEGOTIATE's Data Transfer message has CreditsRequested 0",
     data_credits_zero},
    {Hostile::remaining_over_limit, "remaining-over-limit",
     REASON(BAD_REASSEMBLY),
     "the SMB2 NEGOTIATE's Data Transfer message has a RemainingDataLength "
     "that makes the PDU one byte larger than the server's MaxFragmentedSize",
     remaining_over_limit},
    {Hostile::send_without_credit, "send-without-credit",
     REASON(CREDIT_VIOLATION),
     "after the negotiate, sends one empty message more than the server "
     "granted, granting nothing back",
     send_without_credit},
    {Hostile::never_grant, "never-grant", REASON(CREDIT_TIMEOUT),
     "grants receive credits only in the first message; once the server "
     "has spent them it cannot answer and must give up",
     never_grant},
    {Hostile::stall_negotiate, "stall-negotiate", REASON(NEGOTIATE_TIMEOUT),
     "connects and never sends the MS-SMBD Negotiate Request", stall},
    {Hostile::stall_smb2, "stall-smb2", REASON(SETUP_TIMEOUT),
     "completes the MS-SMBD negotiate and never sends an SMB2 PDU", stall_smb2},
    {Hostile::stall_session_setup, "stall-session-setup", REASON(SETUP_TIMEOUT),
     "completes the SMB2 NEGOTIATE and never sends its SESSION_SETUP",
     stall_session_setup},
    {Hostile::mid_fragment_disconnect, "mid-fragment-disconnect", REASON(PEER),
     "after SESSION_SETUP, sends the first half of the fragments of a large "
     "PDU and disconnects",
     mid_fragment_disconnect},
    {Hostile::ignore_keepalive, "ignore-keepalive", REASON(KEEPALIVE_TIMEOUT),
     "after SESSION_SETUP, stops reading its completion queue, so the "
     "server's keepalive request is never answered",
     ignore_keepalive},
    {Hostile::flood, "flood", REASON(PEER),
     "after SESSION_SETUP, sends every PDU back to back as credits allow and "
     "reads the echoes only at the end; all must arrive intact",
     flood},
    {Hostile::bad_smb2_negotiate, "bad-smb2-negotiate", REASON(BAD_SMB2),
     "the first SMB2 PDU is a NEGOTIATE cut off in its fixed part",
     bad_smb2_negotiate},
    {Hostile::first_not_negotiate, "first-not-negotiate", REASON(BAD_SMB2),
     "the first SMB2 PDU is a SESSION_SETUP instead of a NEGOTIATE",
     first_not_negotiate},
    {Hostile::oversized_setup, "oversized-setup", REASON(BAD_SMB2),
     "the first SMB2 PDU is a NEGOTIATE padded to 256 KiB; before a "
     "connection has an owner the driver takes no PDU above 128 KiB",
     oversized_setup},
    {Hostile::pipelined_setup, "pipelined-setup", REASON(PEER),
     "sends SESSION_SETUP and all its PDUs at once, before any answer; the "
     "driver holds them until the connection has an owner (granting no new "
     "credits once two are held) and loses none",
     pipelined_setup},
};

#undef REASON

} // namespace

std::span<const HostileInfo> hostile_modes() { return modes; }

const HostileInfo &hostile_info(Hostile mode)
{
    for (const auto &m : modes)
        if (m.mode == mode)
            return m;
    return modes[0];
}

std::optional<Hostile> parse_hostile(std::string_view name)
{
    for (const auto &m : modes)
        if (m.name == name)
            return m.mode;
    return std::nullopt;
}

} // namespace smbd::client
