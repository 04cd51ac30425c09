#include "smb2_session.h"

#include <algorithm>
#include <cstring>

#include "smb2_ops.h"
#include "spnego.h"

namespace smbd::client {

namespace {

using Clock = std::chrono::steady_clock;
namespace sec = smbd::smb2sec;

constexpr uint64_t kNotificationId = UINT64_MAX;
// Credits each request asks for beyond its charge: enough for a window of
// large transfers, as Windows asks for 256 at a time.
constexpr uint16_t kCreditAsk = 256;

Error protocol_error(const std::string &what)
{
    return make_error(Errc::protocol, what);
}

std::chrono::milliseconds left(Clock::time_point until)
{
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - Clock::now());
    return std::max(ms, std::chrono::milliseconds(0));
}

// Now as a FILETIME: 100 ns units since 1601.
uint64_t filetime_now()
{
    constexpr uint64_t kUnixEpoch = 116444736000000000ull;
    auto since = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::system_clock::now().time_since_epoch());
    return kUnixEpoch + uint64_t(since.count()) / 100;
}

} // namespace

Connection::Connection(PduTransport &transport,
                       std::chrono::milliseconds timeout)
    : t_(transport), timeout_(timeout)
{
    random_bytes(nonce_salt_);
}

Result<Smb2NegotiateResponse>
Connection::negotiate(const Smb2NegotiateOptions &opt)
{
    auto req = build_smb2_negotiate(opt);
    if (!req)
        return req.error();
    if (auto st = t_.send_pdu(*req); !st)
        return st.error();
    auto until = Clock::now() + timeout_;
    ReceivedPdu got;
    do {
        auto r = t_.recv(left(until));
        if (!r)
            return r.error();
        got = std::move(*r);
        // an interim response may come first
    } while (got.bytes.size() >= SMB2_HDR_SIZE &&
             smbd_get_le32(&got.bytes[SMB2_HDR_STATUS]) == NT_STATUS_PENDING);
    auto resp = parse_smb2_negotiate_response(got.bytes);
    if (!resp)
        return resp.error();
    if (auto st = check_negotiate_choice(opt, *resp); !st)
        return st.error();
    if (resp->dialect == SMB2_DIALECT_311) {
        preauth_.add(*req);
        preauth_.add(got.bytes);
    }
    neg_ = *resp;
    next_message_id_ = 1;
    credits_ = std::max<uint32_t>(resp->hdr.credits, 1);
    return resp;
}

sec::SigningAlgorithm Connection::signing_algorithm() const
{
    return sec::signing_algorithm(neg_.dialect, neg_.signing_algorithm);
}

void Connection::set_signing_key(uint64_t session_id,
                                 std::optional<sec::Bytes16> key, bool all)
{
    if (key)
        keys_[session_id] = {*key, all};
    else
        keys_.erase(session_id);
}

Status Connection::set_encryption(uint64_t session_id,
                                  const sec::SessionKeys &keys)
{
    auto cipher = sec::connection_cipher(neg_.dialect, neg_.cipher);
    if (!cipher)
        return make_error(Errc::invalid_argument,
                          "the session must be encrypted, and the "
                          "connection's cipher is none this client does");
    sealing_[session_id] = {*cipher, keys.encryption, keys.decryption};
    return {};
}

std::vector<uint8_t> Connection::seal(std::vector<uint8_t> pdu)
{
    if (pdu.size() < SMB2_HDR_SIZE)
        return pdu;
    uint64_t session_id = smbd_get_le64(&pdu[SMB2_HDR_SESSION_ID]);
    auto s = sealing_.find(session_id);
    if (s == sealing_.end())
        return pdu;
    // a count under a random mask: no nonce twice for the session's key,
    // whichever of its channels sends
    sec::Bytes16 nonce = nonce_salt_;
    uint64_t n = ++nonce_count_;
    for (size_t i = 0; i < 8; i++)
        nonce[i] ^= uint8_t(n >> (8 * i));
    return sec::seal_message(s->second.cipher, s->second.encryption, nonce,
                             session_id, pdu);
}

Status Connection::open(ReceivedPdu &got) const
{
    if (!sec::is_transform(got.bytes))
        return {};
    auto id = sec::transform_session(got.bytes);
    if (!id)
        return id.error();
    auto s = sealing_.find(*id);
    if (s == sealing_.end())
        return protocol_error("an encrypted message of SessionId " +
                              std::to_string(*id) +
                              ", which encrypts nothing here");
    auto m =
        sec::open_message(s->second.cipher, s->second.decryption, got.bytes);
    if (!m)
        return m.error();
    got.bytes = std::move(*m);
    got.sealed = true;
    return {};
}

bool Connection::signs(const Signing &s, std::span<const uint8_t> pdu) const
{
    // 3.1.1 has no secure negotiate: a signed TREE_CONNECT proves the
    // NEGOTIATE was not tampered with
    return s.all ||
           (neg_.dialect == SMB2_DIALECT_311 &&
            smbd_get_le16(&pdu[SMB2_HDR_COMMAND]) == SMB2_TREE_CONNECT);
}

Status Connection::stamp(std::span<uint8_t> pdu)
{
    smb2_hdr h{};
    if (pdu.size() < SMB2_HDR_SIZE ||
        smb2_hdr_decode(pdu.data(), pdu.size(), &h) != SMBD_E_OK)
        return make_error(Errc::invalid_argument,
                          "a request without an SMB2 header");
    uint16_t charge = std::max<uint16_t>(h.credit_charge, 1);
    if (credits_ < charge)
        return make_error(Errc::invalid_argument,
                          "a request of " + std::to_string(charge) +
                              " credits with " + std::to_string(credits_) +
                              " granted");
    credits_ -= charge;
    h.credit_charge = charge;
    h.credits = std::max(charge, kCreditAsk);
    h.message_id = next_message_id_;
    next_message_id_ += charge;
    smb2_hdr_build(&h, pdu.data());
    pending_[h.message_id] = h.session_id;
    // an encrypted message is not signed (MS-SMB2 3.2.4.1.1)
    if (auto k = keys_.find(h.session_id); k != keys_.end() &&
                                           !sealing_.contains(h.session_id) &&
                                           signs(k->second, pdu))
        return sec::sign_pdu(signing_algorithm(), k->second.key, pdu);
    return {};
}

Result<uint64_t> Connection::send(std::vector<uint8_t> &pdu)
{
    if (auto st = stamp(pdu); !st)
        return st.error();
    uint64_t id = smbd_get_le64(&pdu[SMB2_HDR_MESSAGE_ID]);
    if (auto st = t_.send_pdu(seal(pdu)); !st)
        return st.error();
    return id;
}

Result<std::vector<uint64_t>>
Connection::send_compound(std::vector<std::vector<uint8_t>> elements,
                          bool related)
{
    std::vector<uint8_t> chain = build_compound(std::move(elements), related);
    std::vector<uint64_t> ids;
    // each element signed over its bytes and padding (MS-SMB2 3.2.4.1.4)
    for (std::span<uint8_t> e : compound_elements(chain)) {
        if (auto st = stamp(e); !st)
            return st.error();
        ids.push_back(smbd_get_le64(&e[SMB2_HDR_MESSAGE_ID]));
    }
    // one transform for the whole chain (MS-SMB2 3.2.4.1.8)
    if (auto st = t_.send_pdu(seal(std::move(chain))); !st)
        return st.error();
    return ids;
}

Status Connection::cancel(uint64_t message_id, uint64_t session_id)
{
    smb2_hdr h{};
    h.command = SMB2_CANCEL;
    h.message_id = message_id;
    h.session_id = session_id;
    auto async = async_ids_.find(message_id);
    if (async != async_ids_.end())
        h.flags |= SMB2_FLAGS_ASYNC_COMMAND;
    std::vector<uint8_t> pdu = build_cancel(h);
    if (async != async_ids_.end())
        smb2_set_async_id(pdu, async->second);
    if (auto k = keys_.find(session_id); k != keys_.end() &&
                                         !sealing_.contains(session_id) &&
                                         signs(k->second, pdu))
        if (auto st = sec::sign_pdu(signing_algorithm(), k->second.key, pdu);
            !st)
            return st;
    return t_.send_pdu(seal(std::move(pdu)));
}

Status Connection::check_signature(const ReceivedPdu &got,
                                   uint64_t session_id) const
{
    smb2_hdr h{};
    smb2_hdr_decode(got.bytes.data(), got.bytes.size(), &h);
    // the request's session decides, whatever the response claims
    // (MS-SMB2 3.2.5.1.3)
    if (sealing_.contains(session_id)) {
        if (got.sealed)
            return {};
        return make_error(Errc::protocol, "a response in clear (MessageId " +
                                              std::to_string(h.message_id) +
                                              ") in a session that encrypts");
    }
    auto k = keys_.find(session_id);
    if (k == keys_.end())
        return {};
    if (!(h.flags & SMB2_FLAGS_SIGNED)) {
        // an interim response may go unsigned (MS-SMB2 3.3.4.2)
        if (!k->second.all || h.status == NT_STATUS_PENDING)
            return {};
        return make_error(Errc::protocol, "an unsigned response (MessageId " +
                                              std::to_string(h.message_id) +
                                              ") in a session that signs");
    }
    if (auto st =
            sec::verify_pdu(signing_algorithm(), k->second.key, got.bytes);
        !st)
        return Error{st.error().code,
                     "the response to " + smb2_command_text(h.command) +
                         " MessageId " + std::to_string(h.message_id) + ": " +
                         st.error().message};
    return {};
}

Status Connection::receive_one(Clock::time_point until)
{
    auto got = t_.recv(left(until));
    if (!got)
        return got.error();
    if (auto st = open(*got); !st)
        return st;
    auto elements = split_compound(got->bytes);
    if (!elements)
        return elements.error();
    for (std::span<const uint8_t> e : *elements) {
        auto h = parse_smb2_response_header(e);
        if (!h)
            return h.error();
        ReceivedPdu one{
            {e.begin(), e.end()}, got->invalidated_rkey, got->sealed};
        if (h->message_id == kNotificationId) {
            breaks_.push_back(std::move(one));
            continue;
        }
        if (!pending_.contains(h->message_id) || done_.contains(h->message_id))
            return protocol_error("a response to MessageId " +
                                  std::to_string(h->message_id) +
                                  ", which no request waits for");
        credits_ += h->credits;
        if (is_interim(*h))
            async_ids_[h->message_id] = smb2_async_id(e);
        else
            done_[h->message_id] = std::move(one);
    }
    return {};
}

Result<ReceivedPdu> Connection::response(uint64_t message_id, bool verify)
{
    auto until = Clock::now() + timeout_;
    for (;;) {
        if (auto it = done_.find(message_id); it != done_.end()) {
            ReceivedPdu got = std::move(it->second);
            done_.erase(it);
            async_ids_.erase(message_id);
            uint64_t session_id = pending_[message_id];
            pending_.erase(message_id);
            if (verify)
                if (auto st = check_signature(got, session_id); !st)
                    return st.error();
            return got;
        }
        if (auto st = receive_one(until); !st)
            return st.error();
    }
}

Result<ReceivedPdu> Connection::next_response(std::chrono::milliseconds timeout)
{
    auto until = Clock::now() + timeout;
    while (done_.empty())
        if (auto st = receive_one(until); !st)
            return st.error();
    return response(done_.begin()->first);
}

std::optional<uint64_t> Connection::interim(uint64_t message_id) const
{
    auto it = async_ids_.find(message_id);
    if (it == async_ids_.end())
        return std::nullopt;
    return it->second;
}

Result<uint64_t> Connection::wait_interim(uint64_t message_id)
{
    auto until = Clock::now() + timeout_;
    for (;;) {
        if (auto id = interim(message_id))
            return *id;
        if (auto it = done_.find(message_id); it != done_.end())
            return protocol_error("MessageId " + std::to_string(message_id) +
                                  " was answered with " +
                                  nt_status_text(smbd_get_le32(
                                      &it->second.bytes[SMB2_HDR_STATUS])) +
                                  " before any interim response");
        if (auto st = receive_one(until); !st)
            return st.error();
    }
}

Result<ReceivedPdu> Connection::notification(std::chrono::milliseconds timeout)
{
    auto until = Clock::now() + timeout;
    while (breaks_.empty())
        if (auto st = receive_one(until); !st)
            return st.error();
    ReceivedPdu got = std::move(breaks_.front());
    breaks_.pop_front();
    return got;
}

Result<sec::Bytes16> Session::authenticate(Connection &conn,
                                           const Credentials &creds,
                                           bool binding, ReceivedPdu *final,
                                           sec::Bytes64 *preauth)
{
    sec::ntlm::ClientConfig cfg;
    cfg.user = creds.user;
    cfg.password = creds.password;
    cfg.domain = creds.domain;
    cfg.workstation = creds.workstation;
    sec::spnego::NtlmClient ntlm(cfg);
    std::vector<uint8_t> token = ntlm.start();
    sec::PreauthHash hash = conn.preauth();
    bool smb311 = conn.dialect() == SMB2_DIALECT_311;
    uint64_t session_id = binding ? id_ : 0;
    for (int leg = 0;; leg++) {
        // NTLMSSP takes two legs; a server asking for a third is broken
        if (leg == 2)
            return protocol_error("SESSION_SETUP still wants more after the "
                                  "NTLMSSP AUTHENTICATE");
        SessionSetupOptions o;
        o.binding = binding;
        o.session_id = session_id;
        o.security_mode = opt_.security_mode;
        o.capabilities = opt_.capabilities;
        o.security_blob = token;
        std::vector<uint8_t> pdu = build_smb2_session_setup(o);
        if (!binding)
            smbd_put_le64(&pdu[SMB2_HDR_SESSION_ID], session_id);
        auto id = conn.send(pdu);
        if (!id)
            return id.error();
        if (smb311)
            hash.add(pdu);
        auto got = conn.response(*id, false);
        if (!got)
            return got.error();
        auto resp = parse_smb2_session_setup_response(got->bytes);
        if (!resp)
            return resp.error();
        if (resp->hdr.status == NT_STATUS_SUCCESS) {
            if (auto st = ntlm.finish(resp->security_blob); !st)
                return st.error();
            *final = std::move(*got);
            *preauth = hash.value();
            return ntlm.session_key();
        }
        if (smb311)
            hash.add(got->bytes);
        session_id = resp->hdr.session_id;
        if (!binding)
            id_ = session_id;
        sec::ntlm::ClientNonces nonces;
        random_bytes(nonces.client_challenge);
        random_bytes(nonces.random_session_key);
        nonces.filetime = filetime_now();
        auto next = ntlm.step(resp->security_blob, nonces);
        if (!next)
            return next.error();
        token = std::move(*next);
    }
}

Result<std::unique_ptr<Session>> Session::setup(Connection &conn,
                                                const Credentials &creds,
                                                const SessionOptions &opt)
{
    std::unique_ptr<Session> s(new Session(0, opt));
    ReceivedPdu final;
    sec::Bytes64 preauth{};
    auto key = s->authenticate(conn, creds, false, &final, &preauth);
    if (!key)
        return key.error();
    smb2_hdr h{};
    smb2_hdr_decode(final.bytes.data(), final.bytes.size(), &h);
    s->id_ = h.session_id;
    s->server_guid_ = conn.negotiated().server_guid;
    s->flags_ = smbd_get_le16(&final.bytes[SMB2_HDR_SIZE + 2]);
    if (s->flags_ & (SMB2_SESSION_FLAG_IS_GUEST | SMB2_SESSION_FLAG_IS_NULL))
        return s; // nothing to sign with
    s->keys_ = sec::derive_keys(conn.dialect(), *key, preauth);
    s->signing_key_ = s->keys_.signing;
    // 3.1.1 signs the final response, so that the client knows the hash
    // matched (MS-SMB2 3.3.5.5.3)
    bool signed_resp = h.flags & SMB2_FLAGS_SIGNED;
    if (!signed_resp && conn.dialect() == SMB2_DIALECT_311)
        return protocol_error("the final 3.1.1 SESSION_SETUP response is "
                              "not signed");
    if (signed_resp)
        if (auto st = sec::verify_pdu(conn.signing_algorithm(), s->signing_key_,
                                      final.bytes);
            !st)
            return Error{st.error().code,
                         "final SESSION_SETUP response: " + st.error().message};
    s->signing_ = opt.sign || conn.negotiated().security_mode &
                                  SMB2_NEGOTIATE_SIGNING_REQUIRED;
    conn.set_signing_key(s->id_, s->signing_key_, s->signing_);
    if (s->encrypts())
        if (auto st = conn.set_encryption(s->id_, s->keys_); !st)
            return st.error();
    return s;
}

Status Session::bind(Connection &conn, const Credentials &creds)
{
    if (conn.negotiated().server_guid != server_guid_)
        return make_error(Errc::mismatch,
                          "the new channel's server answered NEGOTIATE with "
                          "another ServerGuid than the session's");
    // the binding requests are signed with Session.SigningKey; a guest or
    // anonymous session has none, and its unsigned binding is the
    // server's to refuse (MS-SMB2 3.3.5.5.2)
    if (!(flags_ & (SMB2_SESSION_FLAG_IS_GUEST | SMB2_SESSION_FLAG_IS_NULL)))
        conn.set_signing_key(id_, signing_key_);
    ReceivedPdu final;
    sec::Bytes64 preauth{};
    auto key = authenticate(conn, creds, true, &final, &preauth);
    if (!key) {
        conn.set_signing_key(id_, std::nullopt);
        return key.error();
    }
    // the channel's own key signs its final response and what follows
    sec::Bytes16 channel =
        sec::derive_keys(conn.dialect(), *key, preauth).signing;
    if (auto st =
            sec::verify_pdu(conn.signing_algorithm(), channel, final.bytes);
        !st) {
        conn.set_signing_key(id_, std::nullopt);
        return Error{st.error().code, "final binding SESSION_SETUP response: " +
                                          st.error().message};
    }
    conn.set_signing_key(id_, channel);
    // the session's cipher keys on every channel
    if (encrypts())
        return conn.set_encryption(id_, keys_);
    return {};
}

} // namespace smbd::client
