// SMB2 sessions as a Windows client runs them, on any PduTransport (TCP or
// SMB Direct): NEGOTIATE with the 3.1.1 preauth integrity hash,
// SESSION_SETUP by SPNEGO and NTLMv2 (smb2sec), every request signed and
// every response's signature verified once the session signs (or every
// message encrypted, AES-128-CCM or -GCM, when it must be), credits and
// MessageIds kept as MS-SMB2 3.2.4.1 asks, responses matched to their
// requests (interim responses and break notifications kept apart), and a
// binding SESSION_SETUP that adds another connection to the session: the
// Windows flow, a TCP session first and then an RDMA channel.
#ifndef SMBD_CLIENT_SMB2_SESSION_H
#define SMBD_CLIENT_SMB2_SESSION_H

#include <sys/random.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "keys.h"
#include "signing.h"
#include "smb2_wire.h"
#include "transform.h"
#include "transport.h"

namespace smbd::client {

// @out filled from the kernel's random pool (ClientGuids, lease keys,
// nonces, NTLM challenges).
template <size_t N> void random_bytes(std::array<uint8_t, N> &out)
{
    size_t done = 0;
    while (done < N) {
        ssize_t n = getrandom(out.data() + done, N - done, 0);
        if (n > 0)
            done += size_t(n);
    }
}

struct Credentials {
    std::string user;
    std::string password;
    std::string domain;                   // "" for a local account
    std::string workstation = "SMBDTEST"; // our NetBIOS name
};

// One connection (a channel once a session binds it): its dialect, credit
// window, MessageIds, the signing keys of the sessions on it, and the
// responses that came in while the caller waited for another.
class Connection {
  public:
    Connection(PduTransport &transport, std::chrono::milliseconds timeout);

    // SMB2 NEGOTIATE (MessageId 0). The response is checked for a dialect
    // offered and, on 3.1.1, for SHA-512 preauth.
    Result<Smb2NegotiateResponse> negotiate(const Smb2NegotiateOptions &opt);
    const Smb2NegotiateResponse &negotiated() const { return neg_; }
    uint16_t dialect() const { return neg_.dialect; }
    smb2sec::SigningAlgorithm signing_algorithm() const;
    // The connection's preauth hash: over NEGOTIATE request and response.
    const smb2sec::PreauthHash &preauth() const { return preauth_; }
    PduTransport &transport() { return t_; }
    std::chrono::milliseconds timeout() const { return timeout_; }
    void set_timeout(std::chrono::milliseconds t) { timeout_ = t; }

    // The key of session @session_id on this connection (nullopt: none).
    // With @all, every request is signed and every response must be;
    // without, only what MS-SMB2 3.2.4.1.1 always signs (a 3.1.1
    // TREE_CONNECT), and responses are verified when flagged signed.
    void set_signing_key(uint64_t session_id,
                         std::optional<smb2sec::Bytes16> key, bool all = true);
    // Encrypt every request of session @session_id with @keys and take
    // none of its responses in clear (MS-SMB2 3.2.4.1.8, 3.2.5.1.1.1);
    // Errc::invalid_argument when the connection's cipher is none this
    // client does (keys.h: AES-128 only).
    Status set_encryption(uint64_t session_id,
                          const smb2sec::SessionKeys &keys);

    // Send one request: its header's CreditCharge is taken as it stands
    // (at least 1), MessageId is the next in the window, Credits asks for
    // more; signed when its session signs. Returns the MessageId.
    Result<uint64_t> send(std::vector<uint8_t> &pdu);
    // A compound chain (smb2_ops.h) of @elements, each stamped and signed
    // as send() does; their MessageIds.
    Result<std::vector<uint64_t>>
    send_compound(std::vector<std::vector<uint8_t>> elements, bool related);
    // SMB2 CANCEL for the request @message_id of @session_id, by its
    // AsyncId once an interim response gave one; takes no credit and no
    // MessageId.
    Status cancel(uint64_t message_id, uint64_t session_id);

    // The final response to @message_id, signature verified unless
    // @verify is false (SESSION_SETUP, whose key comes with it);
    // STATUS_PENDING interim responses on the way are recorded (interim()).
    Result<ReceivedPdu> response(uint64_t message_id, bool verify = true);
    // The next final response to any request, within @timeout.
    Result<ReceivedPdu> next_response(std::chrono::milliseconds timeout);
    // Whether an interim response came for @message_id, and its AsyncId.
    std::optional<uint64_t> interim(uint64_t message_id) const;
    // Wait for the interim response to @message_id: its AsyncId;
    // Errc::protocol when the final response came instead.
    Result<uint64_t> wait_interim(uint64_t message_id);
    // The next oplock or lease break notification (MessageId all ones),
    // Errc::timeout when none came within @timeout.
    Result<ReceivedPdu> notification(std::chrono::milliseconds timeout);
    // Credits granted and not yet spent.
    uint32_t credits() const { return credits_; }

  private:
    // Receive until a PDU arrives and file it: a final response into
    // done_, a notification into breaks_.
    Status receive_one(std::chrono::steady_clock::time_point until);
    Status stamp(std::span<uint8_t> pdu);
    // @pdu (a request, or a compound chain) as it goes out: in a transform
    // when its session encrypts.
    std::vector<uint8_t> seal(std::vector<uint8_t> pdu);
    // A received PDU opened when it came in a transform.
    Status open(ReceivedPdu &got) const;
    // @got answers a request of @session_id.
    Status check_signature(const ReceivedPdu &got, uint64_t session_id) const;

    PduTransport &t_;
    std::chrono::milliseconds timeout_;
    Smb2NegotiateResponse neg_{};
    smb2sec::PreauthHash preauth_;
    uint64_t next_message_id_ = 0;
    uint32_t credits_ = 1;
    struct Signing {
        smb2sec::Bytes16 key;
        bool all;
    };
    // Whether @pdu, a request of @s, is signed.
    bool signs(const Signing &s, std::span<const uint8_t> pdu) const;
    std::map<uint64_t, Signing> keys_; // by SessionId
    struct Sealing {
        smb2sec::Cipher cipher;
        smb2sec::Bytes16 encryption;
        smb2sec::Bytes16 decryption;
    };
    std::map<uint64_t, Sealing> sealing_; // by SessionId
    uint64_t nonce_count_ = 0;            // with a random part, never reused
    smb2sec::Bytes16 nonce_salt_{};
    std::map<uint64_t, uint64_t> pending_;   // SessionId by MessageId
    std::map<uint64_t, ReceivedPdu> done_;   // by MessageId
    std::map<uint64_t, uint64_t> async_ids_; // by MessageId
    std::deque<ReceivedPdu> breaks_;
};

// SESSION_SETUP response SessionFlags (MS-SMB2 2.2.6)
inline constexpr uint16_t SMB2_SESSION_FLAG_IS_GUEST = 0x0001;
inline constexpr uint16_t SMB2_SESSION_FLAG_IS_NULL = 0x0002;
inline constexpr uint16_t SMB2_SESSION_FLAG_ENCRYPT_DATA = 0x0004;

struct SessionOptions {
    // Sign every request even when the server does not require it.
    bool sign = true;
    uint8_t security_mode = SMB2_NEGOTIATE_SIGNING_ENABLED;
    uint32_t capabilities = SMB2_GLOBAL_CAP_DFS;
};

// An authenticated session and the channels it has.
class Session {
  public:
    // SESSION_SETUP on @conn until the server accepts @creds.
    static Result<std::unique_ptr<Session>>
    setup(Connection &conn, const Credentials &creds,
          const SessionOptions &opt = {});
    // A binding SESSION_SETUP: @conn (negotiated with the same dialect and
    // ClientGuid, MS-SMB2 3.2.4.2.3.1) becomes a channel of this session,
    // signed with the channel's own key afterwards. A channel whose server
    // answered with another ServerGuid is not the same server: refused
    // before anything is sent. A guest or anonymous session's binding goes
    // unsigned, for the server to refuse.
    Status bind(Connection &conn, const Credentials &creds);

    uint64_t id() const { return id_; }
    bool signing() const { return signing_; }
    // every message of it encrypted
    bool encrypts() const { return flags_ & SMB2_SESSION_FLAG_ENCRYPT_DATA; }
    uint16_t session_flags() const { return flags_; }

  private:
    Session(uint64_t id, const SessionOptions &opt) : id_(id), opt_(opt) {}
    // The SESSION_SETUP exchange on @conn; the final response is left
    // unverified in *final for the caller, who knows the key.
    Result<smb2sec::Bytes16> authenticate(Connection &conn,
                                          const Credentials &creds,
                                          bool binding, ReceivedPdu *final,
                                          smb2sec::Bytes64 *preauth);

    uint64_t id_;
    SessionOptions opt_;
    bool signing_ = false;
    uint16_t flags_ = 0;
    smb2sec::Bytes16 signing_key_{}; // Session.SigningKey
    smb2sec::SessionKeys keys_{};    // the cipher keys, when it encrypts
    std::array<uint8_t, 16> server_guid_{};
};

} // namespace smbd::client

#endif // SMBD_CLIENT_SMB2_SESSION_H
