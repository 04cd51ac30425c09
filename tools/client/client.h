// An SMB Direct client that speaks like a Windows client on an RDMA
// channel: MS-SMBD negotiate, credits, keepalive answers, fragmentation and
// reassembly (all rules from the protocol core), then SMB2 NEGOTIATE,
// SESSION_SETUP and arbitrary PDUs. Synchronous and single-threaded: every
// call services the completion queue and the rdma_cm channel, so a caller
// busy elsewhere for longer than the server's keepalive timeout must call
// poll_events() in between, or the server rightly disconnects.
#ifndef SMBD_CLIENT_CLIENT_H
#define SMBD_CLIENT_CLIENT_H

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "credits.h"
#include "data_transfer.h"
#include "error.h"
#include "ird_ord.h"
#include "negotiate.h"
#include "ports.h"
#include "smb2_wire.h"
#include "transport.h"

struct ibv_pd;
struct ibv_send_wr;
struct ibv_wc;

namespace smbd::client {

class RdmaConnection;
struct CmEvent;

// The client's side of the MS-SMBD negotiate (defaults as Windows sends).
struct ConnectOptions {
    uint16_t receive_credit_max =
        255; // receives posted, and CreditsRequested's bound
    uint16_t send_credit_target = 255; // our CreditsRequested
    uint32_t preferred_send_size = 1364;
    uint32_t max_receive_size = 8192;
    uint32_t max_fragmented_size = 1u << 20;
    uint32_t send_slots = 32;         // sends in flight at most
    uint8_t responder_resources = 16; // so the server may RDMA READ from us
    uint32_t memory_ops = 64;         // window binds in flight at most
    std::chrono::milliseconds timeout{10000}; // each step that waits
    std::string source; // local address to connect from; "": the route's
};

// What happened on the connection, for reports and tests.
struct Observed {
    bool peer_disconnected = false;  // the server ended the connection
    bool closed_locally = false;     // we did
    uint32_t keepalive_requests = 0; // messages with RESPONSE_REQUESTED
    uint32_t keepalive_answers = 0;  // messages sent while one was due
    uint64_t messages_sent = 0;      // SMB Direct messages, negotiate included
    uint64_t messages_received = 0;
    uint64_t empty_sent = 0; // credit/keepalive carriers
    uint64_t empty_received = 0;
    uint64_t pdus_sent = 0; // whole upper-layer PDUs
    uint64_t pdus_received = 0;
    uint64_t bytes_sent = 0; // PDU bytes
    uint64_t bytes_received = 0;
    uint64_t credits_granted = 0;  // receive credits we granted in total
    uint64_t credits_received = 0; // send credits the server granted in total
    uint64_t credit_waits = 0;     // sends that had to wait for a credit
    uint64_t remote_invalidations = 0; // receives that invalidated an rkey
    std::optional<uint32_t>
        negotiate_status; // Status of the negotiate response
    uint32_t negotiate_response_length = 0;
};

class Client final : public PduTransport {
  public:
    using Clock = std::chrono::steady_clock;

    // rdma_cm connect to @addr:@port (kPortByTransport: 445 on IB/RoCE,
    // 5445 on iWARP); no SMB Direct message is sent yet.
    static Result<std::unique_ptr<Client>>
    connect(const std::string &addr, uint16_t port,
            const ConnectOptions &opt = {});
    ~Client() override;
    Client(const Client &) = delete;
    Client &operator=(const Client &) = delete;

    // The Negotiate Request negotiate() sends for @opt.
    static smbd_negotiate_req negotiate_request(const ConnectOptions &opt);
    // MS-SMBD negotiate; afterwards receives are posted and the data path
    // runs. Errc::negotiate_rejected when the server answers with a failure
    // (observed().negotiate_status has its Status).
    Status negotiate();
    // The same with any request bytes (hostile modes).
    Status negotiate_with(std::span<const uint8_t> request);

    // SMB2 NEGOTIATE (MessageId 0); the bytes stay available below.
    Result<Smb2NegotiateResponse>
    smb2_negotiate(const Smb2NegotiateOptions &opt);
    // SMB2 SESSION_SETUP; the response's SessionId becomes session_id().
    Result<SessionSetupResponse> session_setup(const SessionSetupOptions &opt);

    // One PDU of up to the server's MaxFragmentedSize, fragmented as needed.
    Status send_pdu(std::span<const uint8_t> pdu) override;
    // The next reassembled PDU; Errc::peer_disconnected once the server is
    // gone and nothing is left, Errc::timeout when nothing came in time.
    Result<std::vector<uint8_t>> recv_pdu(std::chrono::milliseconds timeout);
    // The same with the invalidation its receive reported.
    Result<ReceivedPdu> recv(std::chrono::milliseconds timeout) override;
    bool rdma() const override { return true; }

    // Client memory for the server's RDMA: registered in this domain.
    ibv_pd *protection_domain() const;
    // A memory operation (a window bind), posted on the send queue ahead
    // of the PDUs sent after it (so the server never sees a descriptor
    // before its binding); waits while all memory_ops are out.
    Status post_memory_op(ibv_send_wr &wr);
    // Memory registered on the protection domain holds it: a domain with
    // registrations cannot be freed, so while it is held close()
    // disconnects but frees the RDMA resources only when the last holder
    // lets go.
    void hold_domain() { domain_holders_++; }
    void release_domain();
    // Handle whatever has arrived (credits, keepalive requests, PDUs)
    // without waiting.
    void poll_events();
    // Disconnect and free the RDMA resources; idempotent.
    void close();

    // Hostile hooks: each lets a caller break one rule.
    // Send only the first @count fragments of @pdu.
    Status send_pdu_fragments(std::span<const uint8_t> pdu, uint32_t count);
    // Post @message as one SMB Direct message, spending a credit if there is
    // one. Its CreditsGranted (if it has the field) counts as a grant of as
    // many receives as are posted and not yet granted: the server may use
    // those, and cannot use what the message claims beyond them.
    Status send_raw_message(std::span<const uint8_t> message);
    // Post @message (at least the 4 bytes up to CreditsGranted) as one SMB
    // Direct message under the credit rules, as send_pdu sends: once a send
    // credit is there, with the grant due written into its CreditsGranted.
    // The rest of its header is the caller's to break.
    Status send_message(std::span<const uint8_t> message);
    // false: consumed receives are not posted again, so nothing more is
    // granted to the server; true again posts them and grants them at once.
    void set_repost_receives(bool on);
    // Posts up to @n consumed receives and grants them now, whatever
    // set_repost_receives() says: a peer that grants now and then.
    void grant_receives(uint32_t n);
    // false: no message goes out on its own (credit grants, keepalive
    // answers); only the caller's sends.
    void set_control_messages(bool on) { control_ = on; }
    // Wait until the server disconnects; with @process_completions false
    // the CQ is left alone (keepalive requests go unanswered).
    Status wait_peer_disconnect(std::chrono::milliseconds timeout,
                                bool process_completions = true);

    // How long each later step waits (the fuzzer bounds what follows a
    // mutation).
    void set_timeout(std::chrono::milliseconds timeout)
    {
        opt_.timeout = timeout;
    }

    bool negotiated() const { return phase_ == Phase::negotiated; }
    bool connected() const { return phase_ != Phase::broken; }
    const smbd_negotiate_resp &smbd_response() const { return resp_; }
    const smbd_conn_params &params() const { return params_; }
    const smbd_credits &credits() const { return credits_; }
    const Observed &observed() const { return obs_; }
    // Why the connection ended, if it did.
    const std::optional<Error> &end() const { return broken_; }
    const std::vector<uint8_t> &smb2_negotiate_request_bytes() const
    {
        return smb2_neg_req_;
    }
    const std::vector<uint8_t> &smb2_negotiate_response_bytes() const
    {
        return smb2_neg_resp_;
    }
    uint64_t session_id() const { return session_id_; }
    const std::string &device_name() const { return device_; }
    uint8_t responder_resources() const { return responder_resources_; }
    uint8_t initiator_depth() const { return initiator_depth_; }
    // The RDMA port connected to, whether over iWARP, and there the IRD
    // and ORD the server answered in its accept.
    uint16_t port() const;
    bool iwarp() const;
    const std::optional<smbd_ird_ord> &server_ird_ord() const;

  private:
    enum class Phase { connected, negotiated, broken };

    Client(std::unique_ptr<RdmaConnection> rdma, const ConnectOptions &opt);
    Clock::time_point deadline(std::chrono::milliseconds ms) const;
    // Wait for and handle CM/CQ activity; false when @until passed first.
    bool pump(Clock::time_point until, bool cq = true);
    int drain_cq();
    void handle_completion(const ibv_wc &wc);
    void handle_cm(const CmEvent &ev);
    void on_negotiate_response(uint32_t idx, uint32_t len);
    void on_data_message(uint32_t idx, const ibv_wc &wc);
    void post_receives();
    void post_free_receives(uint32_t n);
    void send_due_control();
    // Post a Data Transfer message in a free send slot (one must be free).
    Status post_data(smbd_data_hdr &hdr, std::span<const uint8_t> payload);
    Status wait_send_slot(Clock::time_point until);
    // Wait for a send slot and a send credit and spend it; *grant is what
    // the message must grant.
    Status wait_send_credit(uint16_t &grant);
    // Post the @len bytes in send @slot, a message granting @grant.
    Status post_slot(uint32_t slot, uint32_t len, uint16_t grant);
    Status send_data(std::span<const uint8_t> payload, uint32_t remaining);
    void end_connection(Error why);
    // A work request failed or was refused. iWARP does so once the peer
    // closed the stream, before the CM reports the close: there the CM
    // gets kIwarpCmGrace to name the cause (ended_error() waits for it).
    void qp_failed(Error why);
    // The server broke the protocol: record it and disconnect.
    void violation(const std::string &what);
    // Why the connection ended, once the CM had its grace (qp_failed()).
    Error ended_error();

    std::unique_ptr<RdmaConnection> rdma_;
    ConnectOptions opt_;
    std::string device_;
    uint8_t responder_resources_ = 0;
    uint8_t initiator_depth_ = 0;
    Phase phase_ = Phase::connected;
    std::optional<Error> broken_;

    smbd_negotiate_resp resp_{};
    smbd_conn_params params_{};
    smbd_credits credits_{};
    smbd_reassembly reasm_{};
    std::vector<uint8_t> negotiate_resp_raw_;
    bool negotiate_resp_seen_ = false;
    bool data_phase_ = false;            // negotiated, maybe since ended
    bool cm_disconnected_ = false;       // DISCONNECTED seen, from either side
    Clock::time_point cm_grace_until_{}; // see qp_failed()

    std::vector<uint32_t> free_recv_;
    std::vector<uint32_t> free_send_;
    uint32_t memory_ops_free_ = 0;
    uint32_t domain_holders_ = 0;
    bool close_requested_ = false;
    bool response_due_ = false; // the server asked for a prompt reply
    bool repost_ = true;
    bool control_ = true;
    bool in_fragmented_send_ = false; // no interleaved control messages
    std::vector<uint8_t> partial_;
    std::optional<uint32_t> partial_invalidated_;
    std::deque<ReceivedPdu> inbox_;

    std::vector<uint8_t> smb2_neg_req_;
    std::vector<uint8_t> smb2_neg_resp_;
    uint64_t session_id_ = 0;
    Observed obs_;
};

} // namespace smbd::client

#endif // SMBD_CLIENT_CLIENT_H
