#include "run.h"

#include "hex.h"

#include <algorithm>
#include <cstdio>

namespace smbd::client {

namespace {

using std::chrono::milliseconds;

constexpr uint64_t SESSION_SETUP_MESSAGE_ID = 1;
constexpr uint64_t FIRST_ECHO_MESSAGE_ID = 2;

} // namespace

Flow::Flow(const RunOptions &opt, Progress progress)
    : opt_(opt), progress_(std::move(progress)),
      info_(hostile_info(opt.hostile))
{
    r_.hostile = opt.hostile;
}

RunReport Flow::run()
{
    auto start = Client::Clock::now();
    if (auto c = Client::connect(opt_.addr, opt_.port, opt_.connect); !c) {
        fail("connect", c.error());
    }
    else {
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
        info_.play(*this);
        r_.credits = c_->credits();
        c_->close();
        // after close(): what the teardown saw too
        r_.observed = c_->observed();
    }
    r_.elapsed =
        std::chrono::duration_cast<milliseconds>(Client::Clock::now() - start);
    return r_;
}

void Flow::step(const std::string &line)
{
    r_.steps.push_back(line);
    if (progress_)
        progress_(line);
}

void Flow::finish(bool ok, const std::string &outcome)
{
    r_.ok = ok;
    r_.outcome = outcome;
}

void Flow::fail(const std::string &what, const Error &e)
{
    finish(false, what + ": " + e.message);
}

void Flow::expect_disconnect(bool process_completions)
{
    std::string reason = "SMBD_REASON_" + std::string(info_.reason_name);
    auto t0 = Client::Clock::now();
    auto st = c_->wait_peer_disconnect(opt_.wait, process_completions);
    auto ms =
        std::chrono::duration_cast<milliseconds>(Client::Clock::now() - t0);
    if (st)
        finish(true, "the server disconnected " + std::to_string(ms.count()) +
                         " ms later, as expected (the driver should record " +
                         reason + ")");
    else
        finish(false, "expected the server to disconnect (" + reason +
                          "): " + st.error().message);
}

bool Flow::smbd_negotiate()
{
    smbd_negotiate_req req = Client::negotiate_request(opt_.connect);
    uint8_t buf[SMBD_NEGOTIATE_REQ_SIZE];
    smbd_negotiate_req_build(&req, buf);
    if (auto st = c_->negotiate_with(buf); !st) {
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
         std::to_string(s.max_read_write_size) + ", server PreferredSendSize " +
         std::to_string(s.preferred_send_size) + ", MaxReceiveSize " +
         std::to_string(s.max_receive_size) + ", MaxFragmentedSize " +
         std::to_string(s.max_fragmented_size) + "; we send up to " +
         std::to_string(p.max_send_size) + " bytes per message and post " +
         std::to_string(p.receive_credit_target) + " receives of " +
         std::to_string(p.max_receive_size));
    return true;
}

bool Flow::smb2_negotiate()
{
    auto resp = c_->smb2_negotiate(opt_.smb2);
    if (!resp) {
        fail("SMB2 NEGOTIATE", resp.error());
        return false;
    }
    const auto &n = *resp;
    std::string line =
        "SMB2 NEGOTIATE: dialect " + dialect_text(n.dialect) + ", ServerGuid " +
        hex_bytes(n.server_guid) + ", capabilities " + hex(n.capabilities, 8) +
        ", security mode " + hex(n.security_mode, 4) + ", MaxRead " +
        std::to_string(n.max_read_size) + ", MaxWrite " +
        std::to_string(n.max_write_size) + ", security blob " +
        std::to_string(n.security_blob.size()) + " bytes";
    if (n.dialect == SMB2_DIALECT_311) {
        line += "; contexts: preauth " + hex(n.preauth_hash.value_or(0), 4) +
                " with a " + std::to_string(n.preauth_salt.size()) +
                "-byte salt";
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

bool Flow::session_setup()
{
    auto resp = c_->session_setup(setup_options());
    if (!resp && opt_.expect_status &&
        resp.error().code == make_error_code(Errc::smb2_status) &&
        resp.error().message.find(nt_status_text(*opt_.expect_status)) !=
            std::string::npos) {
        step(resp.error().message + ", as expected");
        auto st = c_->wait_peer_disconnect(opt_.wait, true);
        finish(bool(st),
               st ? "refused with " + nt_status_text(*opt_.expect_status) +
                        ", then the server disconnected, as expected"
                  : "expected the server to disconnect: " + st.error().message);
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

SessionSetupOptions Flow::setup_options() const
{
    SessionSetupOptions so;
    so.message_id = SESSION_SETUP_MESSAGE_ID;
    so.binding = opt_.bind;
    so.session_id = opt_.bind_session;
    return so;
}

bool Flow::pdus_next()
{
    if (opt_.io != IoMode::none) {
        rdma_io();
        return false;
    }
    if (opt_.size < SMB2_HDR_SIZE) {
        finish(false, "PDUs hold at least the 64-byte SMB2 header");
        return false;
    }
    return true;
}

EchoSpec Flow::echo(uint32_t i) const
{
    return EchoSpec{FIRST_ECHO_MESSAGE_ID + i, r_.session_id, opt_.size};
}

bool Flow::verify(uint32_t i, const Result<std::vector<uint8_t>> &got)
{
    return verify(i, got, echo(i));
}

bool Flow::verify(uint32_t i, const Result<std::vector<uint8_t>> &got,
                  const EchoSpec &spec)
{
    if (!got) {
        fail("echo of PDU " + std::to_string(i + 1), got.error());
        return false;
    }
    if (auto st = verify_echo(spec, *got); !st) {
        finish(false, st.error().message);
        return false;
    }
    r_.pdus_verified++;
    return true;
}

std::string Flow::echoed_text() const
{
    return std::to_string(r_.pdus_verified) + " PDUs of " +
           std::to_string(opt_.size) + " bytes echoed intact";
}

bool Flow::echo_each()
{
    for (uint32_t i = 0; i < opt_.pdus; i++) {
        if (auto st = c_->send_pdu(build_echo_pdu(echo(i))); !st) {
            fail("sending PDU " + std::to_string(i + 1), st.error());
            return false;
        }
        if (!verify(i, c_->recv_pdu(opt_.connect.timeout)))
            return false;
    }
    if (opt_.pdus)
        step(echoed_text());
    return true;
}

// SMB2 WRITE and READ over RDMA: verified rounds or the benchmark.
void Flow::rdma_io()
{
    bool bench_mode = opt_.io == IoMode::bench;
    uint32_t size = bench_mode ? opt_.bench.size : opt_.write_read.size;
    if (size > r_.smbd.max_read_write_size)
        return finish(false, "transfers of " + std::to_string(size) +
                                 " bytes are above the server's "
                                 "MaxReadWriteSize " +
                                 std::to_string(r_.smbd.max_read_write_size));
    IoOptions o;
    o.dialect = r_.smb2->dialect;
    o.channel = opt_.channel.value_or(o.dialect >= SMB2_DIALECT_302
                                          ? smb2rw::CHANNEL_RDMA_V1_INVALIDATE
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
         " bytes; channel " + channel + ", " + std::to_string(o.descriptors) +
         " descriptor(s)" +
         (o.descriptor_extra
              ? " describing " + std::to_string(o.descriptor_extra) +
                    " bytes more than the data"
              : ""));
    IoReport report;
    Status st =
        bench_mode
            ? bench(**io, opt_.file, opt_.bench, opt_.connect.timeout, report)
            : write_read(**io, opt_.file, opt_.write_read, opt_.connect.timeout,
                         report, progress_);
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
                                " of " + std::to_string(size) + " bytes" + inv);
    finish(true, "wrote " + std::to_string(report.bytes_written) +
                     " bytes, read back and verified " +
                     std::to_string(report.bytes_verified) + " in " +
                     std::to_string(opt_.write_read.rounds) + " round(s)" +
                     inv + "; the client closed the connection");
}

RunReport run(const RunOptions &opt,
              const std::function<void(const std::string &)> &progress)
{
    return Flow(opt, progress).run();
}

} // namespace smbd::client
