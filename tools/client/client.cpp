#include "client.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <poll.h>

#include "rdma_conn.h"

namespace smbd::client {

namespace {

// How long a failed work request on iWARP waits for the CM's event: as long
// as the driver waits for the same (SMBD_QP_FAILED_GRACE_MS).
constexpr std::chrono::milliseconds kIwarpCmGrace{2000};

std::string ms_text(std::chrono::milliseconds ms)
{
    return std::to_string(ms.count()) + " ms";
}

std::string proto_text(smbd_proto_error err)
{
    return std::string(smbd_proto_error_text(err)) + " (" +
           smbd_proto_error_name(err) + ")";
}

// Clears a flag when a scope ends, however it ends.
struct FlagGuard {
    bool &flag;
    explicit FlagGuard(bool &f, bool on) : flag(f) { flag = on; }
    ~FlagGuard() { flag = false; }
};

} // namespace

Result<std::unique_ptr<Client>> Client::connect(const std::string &addr,
                                                uint16_t port,
                                                const ConnectOptions &opt)
{
    if (opt.receive_credit_max == 0 || opt.send_credit_target == 0 ||
        opt.preferred_send_size < SMBD_MIN_RECEIVE_SIZE ||
        opt.max_receive_size < SMBD_MIN_RECEIVE_SIZE || opt.send_slots == 0)
        return make_error(Errc::invalid_argument,
                          "credits must be at least 1 and send/receive sizes "
                          "at least 128 bytes");
    RdmaSetup setup;
    setup.recv_count = opt.receive_credit_max;
    setup.recv_size = opt.max_receive_size;
    setup.send_count = opt.send_slots;
    setup.send_size = opt.preferred_send_size;
    setup.responder_resources = opt.responder_resources;
    setup.memory_ops = opt.memory_ops;
    setup.timeout = opt.timeout;
    setup.source = opt.source;
    auto rdma = RdmaConnection::connect(addr, port, setup);
    if (!rdma)
        return rdma.error();
    return std::unique_ptr<Client>(new Client(std::move(*rdma), opt));
}

uint16_t Client::port() const { return rdma_->port(); }
bool Client::iwarp() const { return rdma_->iwarp(); }
const std::optional<smbd_ird_ord> &Client::server_ird_ord() const
{
    return rdma_->server_ird_ord();
}

Client::Client(std::unique_ptr<RdmaConnection> rdma, const ConnectOptions &opt)
    : rdma_(std::move(rdma)), opt_(opt)
{
    device_ = rdma_->device_name();
    responder_resources_ = rdma_->responder_resources();
    initiator_depth_ = rdma_->initiator_depth();
    // receive buffer 0 is posted for the negotiate response
    for (uint32_t i = opt_.receive_credit_max; i-- > 1;)
        free_recv_.push_back(i);
    for (uint32_t i = opt_.send_slots; i-- > 0;)
        free_send_.push_back(i);
    memory_ops_free_ = opt_.memory_ops;
}

Client::~Client() { close(); }

Client::Clock::time_point Client::deadline(std::chrono::milliseconds ms) const
{
    return Clock::now() + ms;
}

smbd_negotiate_req Client::negotiate_request(const ConnectOptions &opt)
{
    smbd_negotiate_req req{};
    req.min_version = SMBD_VERSION_1;
    req.max_version = SMBD_VERSION_1;
    req.credits_requested = opt.send_credit_target;
    req.preferred_send_size = opt.preferred_send_size;
    req.max_receive_size = opt.max_receive_size;
    req.max_fragmented_size = opt.max_fragmented_size;
    return req;
}

Status Client::negotiate()
{
    smbd_negotiate_req req = negotiate_request(opt_);
    uint8_t buf[SMBD_NEGOTIATE_REQ_SIZE];
    smbd_negotiate_req_build(&req, buf);
    return negotiate_with(buf);
}

Status Client::negotiate_with(std::span<const uint8_t> request)
{
    if (phase_ != Phase::connected || negotiate_resp_seen_)
        return make_error(Errc::invalid_argument,
                          "the SMB Direct negotiate is the first message of a "
                          "connection and happens once");
    if (request.size() > opt_.preferred_send_size)
        return make_error(Errc::invalid_argument, "negotiate request too long");
    auto until = deadline(opt_.timeout);
    if (auto st = wait_send_slot(until); !st)
        return st;
    uint32_t slot = free_send_.back();
    free_send_.pop_back();
    std::memcpy(rdma_->send_buf(slot), request.data(), request.size());
    if (auto st = rdma_->post_send(slot, uint32_t(request.size())); !st) {
        qp_failed(st.error());
        return ended_error();
    }
    obs_.messages_sent++;

    while (!negotiate_resp_seen_) {
        if (phase_ == Phase::broken) {
            // a failure response arrives just before the disconnect
            drain_cq();
            if (negotiate_resp_seen_)
                break;
            return ended_error();
        }
        if (!pump(until))
            return make_error(Errc::timeout,
                              "no SMB Direct negotiate response in " +
                                  ms_text(opt_.timeout));
    }
    const auto &raw = negotiate_resp_raw_;
    obs_.negotiate_response_length = uint32_t(raw.size());
    if (raw.size() >= 16)
        obs_.negotiate_status = smbd_get_le32(raw.data() + 12);
    smbd_proto_error err =
        smbd_negotiate_resp_parse(raw.data(), raw.size(), &resp_);
    if (err == SMBD_E_NEGOTIATE_FAILED) {
        char status[16];
        std::snprintf(status, sizeof(status), "0x%08x", resp_.status);
        return make_error(Errc::negotiate_rejected,
                          std::string("the server rejected the SMB Direct "
                                      "negotiate with Status ") +
                              status + " in a " + std::to_string(raw.size()) +
                              "-byte response");
    }
    smbd_local_params local{};
    local.receive_credit_max = opt_.receive_credit_max;
    local.send_credit_target = opt_.send_credit_target;
    local.max_send_size = opt_.preferred_send_size;
    local.max_receive_size = opt_.max_receive_size;
    local.max_fragmented_size = opt_.max_fragmented_size;
    if (err == SMBD_E_OK)
        err = smbd_negotiate_client_params(&local, &resp_, &params_);
    if (err != SMBD_E_OK) {
        violation("invalid SMB Direct negotiate response: " + proto_text(err));
        return *broken_;
    }
    smbd_credits_init(&credits_, &params_, resp_.credits_granted);
    smbd_reassembly_init(&reasm_, params_.max_fragmented_recv_size);
    obs_.credits_received += resp_.credits_granted;
    phase_ = Phase::negotiated;
    data_phase_ = true;
    post_receives();
    if (phase_ == Phase::broken)
        return ended_error();
    return {};
}

Result<Smb2NegotiateResponse>
Client::smb2_negotiate(const Smb2NegotiateOptions &opt)
{
    auto req = build_smb2_negotiate(opt);
    if (!req)
        return req.error();
    smb2_neg_req_ = *req;
    if (auto st = send_pdu(*req); !st)
        return st.error();
    auto pdu = recv_pdu(opt_.timeout);
    if (!pdu)
        return pdu.error();
    smb2_neg_resp_ = *pdu;
    auto resp = parse_smb2_negotiate_response(*pdu);
    if (!resp)
        return resp.error();
    if (auto st = check_negotiate_choice(opt, *resp); !st)
        return st.error();
    if (resp->hdr.message_id != 0)
        return make_error(Errc::protocol,
                          "the NEGOTIATE response has MessageId " +
                              std::to_string(resp->hdr.message_id));
    return resp;
}

Result<SessionSetupResponse>
Client::session_setup(const SessionSetupOptions &opt)
{
    auto req = build_smb2_session_setup(opt);
    if (auto st = send_pdu(req); !st)
        return st.error();
    auto pdu = recv_pdu(opt_.timeout);
    if (!pdu)
        return pdu.error();
    auto resp = parse_smb2_session_setup_response(*pdu);
    if (!resp)
        return resp.error();
    if (resp->hdr.message_id != opt.message_id)
        return make_error(Errc::protocol,
                          "the SESSION_SETUP response has MessageId " +
                              std::to_string(resp->hdr.message_id) + ", sent " +
                              std::to_string(opt.message_id));
    if (resp->hdr.session_id == 0)
        return make_error(Errc::protocol,
                          "the SESSION_SETUP response has SessionId 0");
    session_id_ = resp->hdr.session_id;
    return resp;
}

Status Client::send_pdu(std::span<const uint8_t> pdu)
{
    return send_pdu_fragments(pdu, UINT32_MAX);
}

Status Client::send_pdu_fragments(std::span<const uint8_t> pdu, uint32_t count)
{
    drain_cq();
    if (phase_ == Phase::broken)
        return ended_error();
    if (phase_ != Phase::negotiated)
        return make_error(Errc::invalid_argument,
                          "PDUs go only after the SMB Direct negotiate");
    if (pdu.size() > UINT32_MAX)
        return make_error(Errc::invalid_argument, "PDU larger than 4 GiB");
    struct smbd_frag_plan plan; // "struct": a function has the same name
    smbd_proto_error err =
        smbd_frag_plan_make(uint32_t(pdu.size()), params_.max_send_size,
                            params_.max_fragmented_send_size, &plan);
    if (err != SMBD_E_OK)
        return make_error(Errc::invalid_argument,
                          "cannot send a " + std::to_string(pdu.size()) +
                              "-byte PDU: " + proto_text(err) +
                              "; the server's MaxFragmentedSize is " +
                              std::to_string(params_.max_fragmented_send_size));
    {
        FlagGuard guard(in_fragmented_send_, plan.count > 1);
        for (uint32_t i = 0; i < plan.count && i < count; i++) {
            smbd_fragment f;
            smbd_frag_get(&plan, i, &f);
            if (auto st =
                    send_data(pdu.subspan(f.offset, f.length), f.remaining);
                !st)
                return st;
        }
    }
    if (count >= plan.count) {
        obs_.pdus_sent++;
        obs_.bytes_sent += pdu.size();
    }
    send_due_control();
    return {};
}

Result<std::vector<uint8_t>> Client::recv_pdu(std::chrono::milliseconds timeout)
{
    auto pdu = recv(timeout);
    if (!pdu)
        return pdu.error();
    return std::move(pdu->bytes);
}

Result<ReceivedPdu> Client::recv(std::chrono::milliseconds timeout)
{
    auto until = deadline(timeout);
    // keepalive requests behind queued PDUs get their answer now
    drain_cq();
    while (inbox_.empty()) {
        if (phase_ == Phase::broken) {
            // deliver what arrived before the connection went down
            drain_cq();
            if (!inbox_.empty())
                break;
            return ended_error();
        }
        if (!pump(until))
            return make_error(Errc::timeout,
                              "no PDU from the server in " + ms_text(timeout));
    }
    ReceivedPdu pdu = std::move(inbox_.front());
    inbox_.pop_front();
    return pdu;
}

ibv_pd *Client::protection_domain() const
{
    return rdma_ ? rdma_->pd() : nullptr;
}

Status Client::post_memory_op(ibv_send_wr &wr)
{
    auto until = deadline(opt_.timeout);
    while (memory_ops_free_ == 0) {
        if (phase_ == Phase::broken)
            return ended_error();
        if (!pump(until))
            return make_error(Errc::timeout, "memory operations did not "
                                             "complete in " +
                                                 ms_text(opt_.timeout));
    }
    if (phase_ == Phase::broken)
        return ended_error();
    if (auto st = rdma_->post_memory_op(wr); !st)
        return st;
    memory_ops_free_--;
    return {};
}

Status Client::send_raw_message(std::span<const uint8_t> message)
{
    if (phase_ == Phase::broken)
        return ended_error();
    if (message.size() > opt_.preferred_send_size)
        return make_error(Errc::invalid_argument,
                          "message longer than a send buffer");
    if (auto st = wait_send_slot(deadline(opt_.timeout)); !st)
        return st;
    uint32_t slot = free_send_.back();
    free_send_.pop_back();
    std::memcpy(rdma_->send_buf(slot), message.data(), message.size());
    if (credits_.send_credits > 0)
        credits_.send_credits--;
    uint16_t grant = 0;
    if (phase_ == Phase::negotiated && message.size() >= 4) {
        // what the server may really use; a receive it lands in must be
        // one we count as granted, or its message looks like a violation
        grant = uint16_t(
            std::min<uint32_t>(smbd_get_le16(&message[2]),
                               credits_.recv_posted - credits_.recv_granted));
        credits_.recv_granted += grant;
    }
    return post_slot(slot, uint32_t(message.size()), grant);
}

Status Client::send_message(std::span<const uint8_t> message)
{
    drain_cq();
    if (phase_ == Phase::broken)
        return ended_error();
    if (phase_ != Phase::negotiated)
        return make_error(Errc::invalid_argument,
                          "Data Transfer messages go only after the SMB "
                          "Direct negotiate");
    if (message.size() < 4 || message.size() > opt_.preferred_send_size)
        return make_error(Errc::invalid_argument,
                          "a message has 4 bytes up to a send buffer");
    uint16_t grant;
    if (auto st = wait_send_credit(grant); !st)
        return st;
    uint32_t slot = free_send_.back();
    free_send_.pop_back();
    uint8_t *buf = rdma_->send_buf(slot);
    std::memcpy(buf, message.data(), message.size());
    smbd_put_le16(buf + SMBD_DATA_CREDITS_GRANTED, grant);
    return post_slot(slot, uint32_t(message.size()), grant);
}

void Client::poll_events()
{
    while (pump(Clock::now()))
        ;
}

Status Client::wait_peer_disconnect(std::chrono::milliseconds timeout,
                                    bool process_completions)
{
    auto until = deadline(timeout);
    while (!obs_.peer_disconnected) {
        if (obs_.closed_locally)
            return ended_error();
        if (!pump(until, process_completions))
            return make_error(Errc::timeout,
                              "the server did not disconnect in " +
                                  ms_text(timeout));
    }
    return {};
}

void Client::close()
{
    if (!rdma_)
        return;
    if (!obs_.peer_disconnected && !obs_.closed_locally) {
        // what was posted reaches the peer first: an RC send completes
        // once the peer has acknowledged it, and a disconnect would flush
        // the sends still queued
        auto sent = deadline(std::chrono::milliseconds(1000));
        while (phase_ != Phase::broken && free_send_.size() < opt_.send_slots &&
               pump(sent))
            ;
        obs_.closed_locally = true;
        rdma_->disconnect();
        end_connection(make_error(Errc::closed, "closed by the client"));
    }
    // let DISCONNECTED arrive so that the teardown is a clean one
    auto until = deadline(std::chrono::milliseconds(1000));
    while (!cm_disconnected_ && pump(until))
        ;
    close_requested_ = true;
    if (domain_holders_ == 0)
        rdma_.reset();
}

void Client::release_domain()
{
    if (--domain_holders_ == 0 && close_requested_)
        rdma_.reset();
}

bool Client::pump(Clock::time_point until, bool cq)
{
    if (!rdma_)
        return false;
    if (cq && drain_cq() > 0)
        return true;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - Clock::now());
    pollfd fds[2] = {{rdma_->cm_fd(), POLLIN, 0}, {rdma_->cq_fd(), POLLIN, 0}};
    int rc = poll(fds, cq ? 2 : 1, int(std::max<int64_t>(0, left.count())));
    if (rc < 0)
        return errno == EINTR;
    if (rc == 0)
        return false;
    if (fds[0].revents)
        while (auto ev = rdma_->next_cm_event())
            handle_cm(*ev);
    if (cq && fds[1].revents) {
        if (auto st = rdma_->rearm_cq(); !st)
            end_connection(st.error());
        drain_cq();
    }
    return true;
}

int Client::drain_cq()
{
    if (!rdma_)
        return 0;
    ibv_wc wc[16];
    int total = 0, n;
    while ((n = rdma_->poll_cq(wc, 16)) > 0) {
        for (int i = 0; i < n; i++)
            handle_completion(wc[i]);
        total += n;
    }
    if (total > 0) {
        post_receives();
        send_due_control();
    }
    return total;
}

void Client::handle_completion(const ibv_wc &wc)
{
    if (wc.wr_id & RdmaConnection::MEMORY_WR_BIT) {
        memory_ops_free_++;
        if (wc.status != IBV_WC_SUCCESS && wc.status != IBV_WC_WR_FLUSH_ERR)
            qp_failed(make_error(Errc::rdma, std::string("a memory-window bind "
                                                         "failed: ") +
                                                 ibv_wc_status_str(wc.status)));
        return;
    }
    bool send = wc.wr_id & RdmaConnection::SEND_WR_BIT;
    auto idx = uint32_t(wc.wr_id);
    if (send)
        free_send_.push_back(idx);
    if (wc.status != IBV_WC_SUCCESS) {
        if (!send)
            free_recv_.push_back(idx);
        // a flush follows a disconnect, whose CM event says more
        if (wc.status != IBV_WC_WR_FLUSH_ERR)
            qp_failed(make_error(
                Errc::rdma, std::string(send ? "a send" : "a receive") +
                                " failed: " + ibv_wc_status_str(wc.status)));
        return;
    }
    if (send)
        return;
    // the first message received is the negotiate response
    if (!negotiate_resp_seen_)
        on_negotiate_response(idx, wc.byte_len);
    else
        on_data_message(idx, wc);
}

void Client::handle_cm(const CmEvent &ev)
{
    switch (ev.type) {
    case RDMA_CM_EVENT_DISCONNECTED:
        cm_disconnected_ = true;
        if (!obs_.closed_locally) {
            obs_.peer_disconnected = true;
            // the server's ending overrides an error its teardown caused
            if (broken_ && broken_->code == make_error_code(Errc::rdma))
                broken_.reset();
            end_connection(
                make_error(Errc::peer_disconnected, "the server disconnected"));
        }
        break;
    case RDMA_CM_EVENT_TIMEWAIT_EXIT:
        break;
    default:
        end_connection(make_error(Errc::rdma, std::string("rdma_cm event ") +
                                                  rdma_event_str(ev.type)));
        break;
    }
}

void Client::on_negotiate_response(uint32_t idx, uint32_t len)
{
    const uint8_t *buf = rdma_->recv_buf(idx);
    negotiate_resp_raw_.assign(buf, buf + len);
    negotiate_resp_seen_ = true;
    obs_.messages_received++;
    free_recv_.push_back(idx);
}

void Client::on_data_message(uint32_t idx, const ibv_wc &wc)
{
    uint32_t len = wc.byte_len;
    const uint8_t *buf = rdma_->recv_buf(idx);
    free_recv_.push_back(idx);
    // after a disconnect, what arrived before it still counts
    if (!data_phase_)
        return;

    smbd_data_hdr hdr;
    smbd_proto_error err =
        smbd_data_parse(buf, len, params_.max_receive_size,
                        params_.max_fragmented_recv_size, &hdr);
    if (err != SMBD_E_OK)
        return violation("invalid Data Transfer message: " + proto_text(err));
    err = smbd_credits_received(&credits_, &hdr);
    if (err != SMBD_E_OK)
        return violation("credit rule broken: " + proto_text(err));
    obs_.messages_received++;
    obs_.credits_received += hdr.credits_granted;
    if (hdr.flags & SMBD_FLAG_RESPONSE_REQUESTED) {
        obs_.keepalive_requests++;
        response_due_ = true;
    }
    std::optional<uint32_t> invalidated;
    if (rdma_->invalidated(wc)) {
        obs_.remote_invalidations++;
        invalidated = wc.invalidated_rkey;
    }
    if (hdr.data_length == 0) {
        obs_.empty_received++;
        if (invalidated)
            violation("a message without data invalidated rkey " +
                      std::to_string(*invalidated));
        return;
    }
    uint32_t offset = 0, total = 0;
    bool complete = false;
    err = smbd_reassembly_add(&reasm_, &hdr, &offset, &total, &complete);
    if (err != SMBD_E_OK)
        return violation("reassembly: " + proto_text(err));
    if (offset == 0) {
        partial_.assign(total, 0);
        partial_invalidated_.reset();
    }
    if (invalidated) {
        // one invalidation per PDU: its first fragment carries it
        if (partial_invalidated_)
            return violation("two fragments of one PDU invalidated rkeys");
        partial_invalidated_ = invalidated;
    }
    std::memcpy(partial_.data() + offset, buf + hdr.data_offset,
                hdr.data_length);
    if (complete) {
        obs_.pdus_received++;
        obs_.bytes_received += partial_.size();
        inbox_.push_back({std::move(partial_), partial_invalidated_});
        partial_.clear();
        partial_invalidated_.reset();
    }
}

void Client::set_repost_receives(bool on)
{
    repost_ = on;
    if (on) {
        post_receives();
        send_due_control();
    }
}

void Client::grant_receives(uint32_t n)
{
    if (phase_ != Phase::negotiated)
        return;
    post_free_receives(n);
    send_due_control();
}

void Client::post_receives()
{
    if (phase_ != Phase::negotiated || !repost_)
        return;
    post_free_receives(smbd_credits_to_post(&credits_));
}

void Client::post_free_receives(uint32_t n)
{
    for (; n > 0 && !free_recv_.empty(); n--) {
        uint32_t idx = free_recv_.back();
        if (auto st = rdma_->post_recv(idx); !st)
            return qp_failed(st.error());
        free_recv_.pop_back();
        smbd_credits_posted(&credits_, 1);
    }
}

void Client::send_due_control()
{
    if (phase_ != Phase::negotiated || !control_ || in_fragmented_send_ ||
        free_send_.empty())
        return;
    if (!response_due_ && !smbd_credits_grant_due(&credits_))
        return;
    uint16_t grant;
    if (smbd_credits_send(&credits_, &grant) != SMBD_SEND_OK)
        return; // retried after the next completion
    smbd_data_hdr hdr{};
    hdr.credits_granted = grant;
    if (auto st = post_data(hdr, {}); !st)
        end_connection(st.error());
    obs_.empty_sent++;
}

Status Client::post_data(smbd_data_hdr &hdr, std::span<const uint8_t> payload)
{
    uint32_t slot = free_send_.back();
    free_send_.pop_back();
    uint8_t *buf = rdma_->send_buf(slot);
    hdr.credits_requested = params_.send_credit_target;
    hdr.data_length = uint32_t(payload.size());
    size_t n = smbd_data_build(&hdr, buf);
    if (!payload.empty())
        std::memcpy(buf + n, payload.data(), payload.size());
    return post_slot(slot, uint32_t(n + payload.size()), hdr.credits_granted);
}

Status Client::post_slot(uint32_t slot, uint32_t len, uint16_t grant)
{
    obs_.messages_sent++;
    obs_.credits_granted += grant;
    if (response_due_) {
        obs_.keepalive_answers++;
        response_due_ = false;
    }
    if (auto st = rdma_->post_send(slot, len); !st) {
        qp_failed(st.error());
        return ended_error();
    }
    return {};
}

Status Client::wait_send_slot(Clock::time_point until)
{
    while (free_send_.empty()) {
        if (phase_ == Phase::broken)
            return ended_error();
        if (!pump(until))
            return make_error(Errc::timeout, "sends did not complete in " +
                                                 ms_text(opt_.timeout));
    }
    return {};
}

Status Client::wait_send_credit(uint16_t &grant)
{
    auto until = deadline(opt_.timeout);
    bool waited = false;
    grant = 0;
    for (;;) {
        if (phase_ == Phase::broken)
            return ended_error();
        if (auto st = wait_send_slot(until); !st)
            return st;
        // never the last credit without a grant (smbd_credits_send says so)
        if (smbd_credits_send(&credits_, &grant) == SMBD_SEND_OK)
            break;
        if (!waited)
            obs_.credit_waits++;
        waited = true;
        if (!pump(until))
            return make_error(
                Errc::timeout,
                "no send credit from the server in " + ms_text(opt_.timeout) +
                    " (" + std::to_string(credits_.send_credits) +
                    " credits left, " + std::to_string(credits_.recv_posted) +
                    " receives posted)");
    }
    return {};
}

Status Client::send_data(std::span<const uint8_t> payload, uint32_t remaining)
{
    uint16_t grant;
    if (auto st = wait_send_credit(grant); !st)
        return st;
    smbd_data_hdr hdr{};
    hdr.credits_granted = grant;
    hdr.remaining_data_length = remaining;
    return post_data(hdr, payload);
}

void Client::end_connection(Error why)
{
    if (!broken_)
        broken_ = std::move(why);
    phase_ = Phase::broken;
}

void Client::violation(const std::string &what)
{
    end_connection(
        make_error(Errc::protocol, "the server broke MS-SMBD: " + what));
    obs_.closed_locally = true;
    rdma_->disconnect();
}

void Client::qp_failed(Error why)
{
    if (rdma_->iwarp() && cm_grace_until_ == Clock::time_point{})
        cm_grace_until_ = deadline(kIwarpCmGrace);
    end_connection(std::move(why));
}

Error Client::ended_error()
{
    while (!cm_disconnected_ && Clock::now() < cm_grace_until_ &&
           pump(cm_grace_until_, false))
        ;
    if (broken_)
        return *broken_;
    return make_error(Errc::peer_disconnected, "the connection is down");
}

} // namespace smbd::client
