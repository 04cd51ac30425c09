// The SMB2 session layer's bookkeeping on a scripted transport: MessageIds
// and credits, responses filed by MessageId (out of order, in compound
// chains), interim responses and CANCEL by AsyncId, break notifications
// kept apart, and which requests are signed and which responses must be.
// Sessions with real servers are the e2e scenarios (smbdirect-smb2).
#include <gtest/gtest.h>

#include <deque>

#include "smb2_ops.h"
#include "smb2_session.h"

using namespace smbd::client;
namespace sec = smbd::smb2sec;

namespace {

constexpr uint64_t kSession = 0x1122334455667788ull;
constexpr sec::Bytes16 kKey = {1, 2,  3,  4,  5,  6,  7,  8,
                               9, 10, 11, 12, 13, 14, 15, 16};

// Answers come from a script; what was sent is kept.
class ScriptedTransport final : public PduTransport {
  public:
    Status send_pdu(std::span<const uint8_t> pdu) override
    {
        sent.emplace_back(pdu.begin(), pdu.end());
        return {};
    }
    Result<ReceivedPdu> recv(std::chrono::milliseconds) override
    {
        if (answers.empty())
            return make_error(Errc::timeout, "script ended");
        ReceivedPdu r{answers.front(), std::nullopt};
        answers.pop_front();
        return r;
    }
    bool rdma() const override { return false; }

    std::vector<std::vector<uint8_t>> sent;
    std::deque<std::vector<uint8_t>> answers;
};

// A response of @command to @message_id with a 4-byte body (LOGOFF's).
std::vector<uint8_t> response(uint16_t command, uint64_t message_id,
                              uint16_t credits,
                              uint32_t status = NT_STATUS_SUCCESS)
{
    smb2_hdr h{};
    h.command = command;
    h.message_id = message_id;
    h.credits = credits;
    h.status = status;
    h.flags = SMB2_FLAGS_SERVER_TO_REDIR;
    h.session_id = kSession;
    std::vector<uint8_t> b(SMB2_HDR_SIZE + 4, 0);
    smb2_hdr_build(&h, b.data());
    b[SMB2_HDR_SIZE] = 4;
    return b;
}

// A 3.0.2 NEGOTIATE response granting @credits (AES-CMAC signing).
std::vector<uint8_t> negotiate_response(uint16_t credits)
{
    smb2_hdr h{};
    h.command = SMB2_NEGOTIATE;
    h.credits = credits;
    h.flags = SMB2_FLAGS_SERVER_TO_REDIR;
    std::vector<uint8_t> b(SMB2_HDR_SIZE + 64, 0);
    smb2_hdr_build(&h, b.data());
    uint8_t *body = &b[SMB2_HDR_SIZE];
    smbd_put_le16(body, 65); // StructureSize
    smbd_put_le16(body + 2, SMB2_NEGOTIATE_SIGNING_ENABLED);
    smbd_put_le16(body + 4, SMB2_DIALECT_302);    // DialectRevision
    smbd_put_le32(body + 28, 1u << 20);           // MaxTransactSize
    smbd_put_le32(body + 32, 1u << 20);           // MaxReadSize
    smbd_put_le32(body + 36, 1u << 20);           // MaxWriteSize
    smbd_put_le16(body + 56, SMB2_HDR_SIZE + 64); // SecurityBufferOffset
    return b;
}

std::vector<uint8_t> request(uint16_t command, uint16_t charge = 1)
{
    smb2_hdr h{};
    h.command = command;
    h.credit_charge = charge;
    h.session_id = kSession;
    std::vector<uint8_t> b = build_logoff(h);
    smbd_put_le16(&b[SMB2_HDR_COMMAND], command);
    return b;
}

struct Negotiated {
    ScriptedTransport t;
    Connection c{t, std::chrono::milliseconds(10)};
    explicit Negotiated(uint16_t credits)
    {
        t.answers.push_back(negotiate_response(credits));
        Smb2NegotiateOptions o;
        o.dialects = {SMB2_DIALECT_300, SMB2_DIALECT_302};
        auto n = c.negotiate(o);
        EXPECT_TRUE(n.ok()) << n.error().message;
        t.sent.clear();
    }
};

uint64_t message_id(const std::vector<uint8_t> &pdu)
{
    return smbd_get_le64(&pdu[SMB2_HDR_MESSAGE_ID]);
}

bool is_signed(const std::vector<uint8_t> &pdu)
{
    return smbd_get_le32(&pdu[SMB2_HDR_FLAGS]) & SMB2_FLAGS_SIGNED;
}

} // namespace

TEST(Smb2Connection, MessageIdsAdvanceByChargeWithinTheCredits)
{
    Negotiated n(3);
    auto a = request(SMB2_LOGOFF, 2);
    auto b = request(SMB2_LOGOFF, 1);
    auto c = request(SMB2_LOGOFF, 1);
    ASSERT_EQ(*n.c.send(a), 1u);
    ASSERT_EQ(*n.c.send(b), 3u);
    EXPECT_EQ(n.c.credits(), 0u);
    auto refused = n.c.send(c);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().code, make_error_code(Errc::invalid_argument));
    EXPECT_EQ(n.t.sent.size(), 2u);
    // a response's grant opens the window again
    n.t.answers.push_back(response(SMB2_LOGOFF, 1, 5));
    ASSERT_TRUE(n.c.response(1).ok());
    EXPECT_EQ(n.c.credits(), 5u);
    EXPECT_EQ(*n.c.send(c), 4u);
    EXPECT_EQ(smbd_get_le16(&c[SMB2_HDR_CREDIT_CHARGE]), 1);
}

TEST(Smb2Connection, ResponsesFiledByMessageIdFromChains)
{
    Negotiated n(8);
    for (int i = 0; i < 3; i++) {
        auto r = request(SMB2_LOGOFF);
        ASSERT_TRUE(n.c.send(r).ok());
    }
    // 3 and 1 in one chain, then 2
    n.t.answers.push_back(build_compound(
        {response(SMB2_LOGOFF, 3, 1), response(SMB2_LOGOFF, 1, 1)}, false));
    n.t.answers.push_back(response(SMB2_LOGOFF, 2, 1));
    auto two = n.c.response(2);
    ASSERT_TRUE(two.ok()) << two.error().message;
    EXPECT_EQ(message_id(two->bytes), 2u);
    // already here: no more receives
    auto one = n.c.response(1);
    ASSERT_TRUE(one.ok()) << one.error().message;
    EXPECT_EQ(message_id(one->bytes), 1u);
    auto three = n.c.next_response(std::chrono::milliseconds(0));
    ASSERT_TRUE(three.ok()) << three.error().message;
    EXPECT_EQ(message_id(three->bytes), 3u);
}

TEST(Smb2Connection, InterimGivesTheAsyncIdCancelUses)
{
    Negotiated n(8);
    n.c.set_signing_key(kSession, kKey);
    auto r = request(SMB2_LOGOFF);
    ASSERT_TRUE(n.c.send(r).ok());
    auto interim = response(SMB2_LOGOFF, 1, 1, NT_STATUS_PENDING);
    smbd_put_le32(&interim[SMB2_HDR_FLAGS],
                  SMB2_FLAGS_SERVER_TO_REDIR | SMB2_FLAGS_ASYNC_COMMAND);
    smb2_set_async_id(interim, 0x77);
    n.t.answers.push_back(interim);
    auto final = n.c.response(1);
    ASSERT_FALSE(final.ok());
    EXPECT_EQ(final.error().code, make_error_code(Errc::timeout));
    ASSERT_EQ(n.c.interim(1), 0x77u);

    ASSERT_TRUE(n.c.cancel(1, kSession).ok());
    const std::vector<uint8_t> &cancel = n.t.sent.back();
    smb2_hdr h{};
    ASSERT_EQ(smb2_hdr_decode(cancel.data(), cancel.size(), &h), SMBD_E_OK);
    EXPECT_EQ(h.command, SMB2_CANCEL);
    EXPECT_EQ(h.message_id, 1u);
    EXPECT_TRUE(h.flags & SMB2_FLAGS_ASYNC_COMMAND);
    EXPECT_EQ(smb2_async_id(cancel), 0x77u);
    EXPECT_TRUE(sec::verify_pdu(n.c.signing_algorithm(), kKey, cancel).ok());
    // CANCEL spends no credit
    EXPECT_EQ(n.c.credits(), 8u);
}

TEST(Smb2Connection, BreaksKeptApartFromResponses)
{
    Negotiated n(8);
    auto r = request(SMB2_LOGOFF);
    ASSERT_TRUE(n.c.send(r).ok());
    n.t.answers.push_back(response(0x0012, UINT64_MAX, 0));
    n.t.answers.push_back(response(SMB2_LOGOFF, 1, 1));
    ASSERT_TRUE(n.c.response(1).ok());
    auto b = n.c.notification(std::chrono::milliseconds(0));
    ASSERT_TRUE(b.ok()) << b.error().message;
    EXPECT_EQ(message_id(b->bytes), UINT64_MAX);
}

TEST(Smb2Connection, SigningSessionRefusesUnsignedAndForgedResponses)
{
    Negotiated n(8);
    n.c.set_signing_key(kSession, kKey);
    std::vector<std::vector<uint8_t>> reqs(3, request(SMB2_LOGOFF));
    for (auto &q : reqs) {
        ASSERT_TRUE(n.c.send(q).ok());
        EXPECT_TRUE(
            sec::verify_pdu(n.c.signing_algorithm(), kKey, n.t.sent.back())
                .ok());
    }
    auto good = response(SMB2_LOGOFF, 1, 1);
    ASSERT_TRUE(sec::sign_pdu(n.c.signing_algorithm(), kKey, good).ok());
    auto forged = response(SMB2_LOGOFF, 2, 1);
    ASSERT_TRUE(sec::sign_pdu(n.c.signing_algorithm(), kKey, forged).ok());
    forged.back() ^= 1;
    n.t.answers = {good, forged, response(SMB2_LOGOFF, 3, 1)};
    EXPECT_TRUE(n.c.response(1).ok());
    auto f = n.c.response(2);
    ASSERT_FALSE(f.ok());
    EXPECT_EQ(f.error().code, make_error_code(sec::Errc::pdu_signature));
    auto u = n.c.response(3);
    ASSERT_FALSE(u.ok());
    EXPECT_EQ(u.error().code, make_error_code(Errc::protocol));
}

// 3.0.2: AES-128-CCM. Requests go out sealed and unsigned, a compound in
// one transform; sealed responses are taken, a clear one, a forged one
// and one sealed for another session are not.
TEST(Smb2Connection, EncryptingSessionSealsAndOpens)
{
    Negotiated n(8);
    sec::SessionKeys keys;
    keys.encryption = kKey;
    keys.decryption = {16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1};
    n.c.set_signing_key(kSession, kKey);
    ASSERT_TRUE(n.c.set_encryption(kSession, keys).ok());
    auto q = request(SMB2_LOGOFF);
    ASSERT_TRUE(n.c.send(q).ok());
    auto ids =
        n.c.send_compound({request(SMB2_LOGOFF), request(SMB2_LOGOFF)}, false);
    ASSERT_TRUE(ids.ok());
    ASSERT_EQ(n.t.sent.size(), 2u);
    std::vector<uint8_t> first_nonce;
    for (const auto &sent : n.t.sent) {
        ASSERT_TRUE(sec::is_transform(sent));
        EXPECT_EQ(*sec::transform_session(sent), kSession);
        auto m = sec::open_message(sec::Cipher::aes128_ccm, kKey, sent);
        ASSERT_TRUE(m.ok()) << m.error().message;
        EXPECT_FALSE(is_signed(*m));
        std::vector<uint8_t> nonce(sent.begin() + 20, sent.begin() + 36);
        EXPECT_NE(nonce, first_nonce);
        first_nonce = nonce;
    }
    EXPECT_EQ(message_id(q), 0u + 1);

    const sec::Bytes16 nonce{7};
    auto sealed = [&](uint64_t id, uint64_t session = kSession) {
        return sec::seal_message(sec::Cipher::aes128_ccm, keys.decryption,
                                 nonce, session, response(SMB2_LOGOFF, id, 1));
    };
    auto forged = sealed(2);
    forged.back() ^= 1;
    n.t.answers = {sealed(1), response(SMB2_LOGOFF, 2, 1)};
    auto r1 = n.c.response(1);
    EXPECT_TRUE(r1.ok()) << r1.error().message;
    auto clear = n.c.response(2);
    ASSERT_FALSE(clear.ok());
    EXPECT_EQ(clear.error().code, make_error_code(Errc::protocol));
    n.t.answers = {forged};
    auto f = n.c.response(3);
    ASSERT_FALSE(f.ok());
    EXPECT_EQ(f.error().code, make_error_code(sec::Errc::pdu_signature));
    n.t.answers = {sealed(3, kSession + 1)};
    auto other = n.c.response(3);
    ASSERT_FALSE(other.ok());
    EXPECT_EQ(other.error().code, make_error_code(Errc::protocol));
}

TEST(Smb2Connection, WithoutSigningOnlyUnsignedRequests)
{
    Negotiated n(8);
    n.c.set_signing_key(kSession, kKey, false);
    auto logoff = request(SMB2_LOGOFF);
    auto tree = request(SMB2_TREE_CONNECT);
    ASSERT_TRUE(n.c.send(logoff).ok());
    ASSERT_TRUE(n.c.send(tree).ok());
    EXPECT_FALSE(is_signed(n.t.sent[0]));
    // 3.0.2: TREE_CONNECT is signed only on 3.1.1
    EXPECT_FALSE(is_signed(n.t.sent[1]));
    // an unsigned response is fine, a signed one still verified
    auto forged = response(SMB2_LOGOFF, 2, 1);
    ASSERT_TRUE(sec::sign_pdu(n.c.signing_algorithm(), kKey, forged).ok());
    forged[SMB2_HDR_SIZE + 2] ^= 1;
    n.t.answers = {response(SMB2_LOGOFF, 1, 1), forged};
    EXPECT_TRUE(n.c.response(1).ok());
    EXPECT_FALSE(n.c.response(2).ok());
}

TEST(Smb2Connection, ResponsesOnlyToRequestsThatWait)
{
    Negotiated n(8);
    auto r = request(SMB2_LOGOFF);
    ASSERT_TRUE(n.c.send(r).ok());
    // MessageId 7 was never sent
    n.t.answers = {response(SMB2_LOGOFF, 7, 1)};
    auto stray = n.c.response(1);
    ASSERT_FALSE(stray.ok());
    EXPECT_EQ(stray.error().code, make_error_code(Errc::protocol));
    // 1 answered twice
    n.t.answers = {response(SMB2_LOGOFF, 1, 1), response(SMB2_LOGOFF, 1, 1)};
    auto r2 = request(SMB2_LOGOFF);
    ASSERT_TRUE(n.c.send(r2).ok());
    auto twice = n.c.response(2);
    ASSERT_FALSE(twice.ok());
    EXPECT_EQ(twice.error().code, make_error_code(Errc::protocol));
}

TEST(Smb2Connection, VerifiedUnderTheRequestsSession)
{
    Negotiated n(8);
    n.c.set_signing_key(kSession, kKey);
    auto r = request(SMB2_LOGOFF);
    ASSERT_TRUE(n.c.send(r).ok());
    // an unsigned answer that claims no session is still this session's
    auto claims_none = response(SMB2_LOGOFF, 1, 1);
    smbd_put_le64(&claims_none[SMB2_HDR_SESSION_ID], 0);
    n.t.answers = {claims_none};
    auto got = n.c.response(1);
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.error().code, make_error_code(Errc::protocol));
}
