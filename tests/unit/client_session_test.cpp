// The client's SESSION_SETUP request, proven by the protocol core's parser
// (the driver routes the connection by it), and the response parser.
#include <gtest/gtest.h>

#include <cstring>

#include "smb2_wire.h"
#include "wire_bytes.h"

using namespace smbd::client;

namespace {

constexpr uint64_t kSession = 0x4f2a91c300000011ull;

TEST(ClientSessionSetup, NewSessionParses)
{
    SessionSetupOptions o;
    auto b = build_smb2_session_setup(o);
    smb2_session_setup_req req;
    ASSERT_PROTO_ERR(smb2_session_setup_parse(b.data(), b.size(), &req),
                     SMBD_E_OK);
    EXPECT_EQ(req.flags, 0);
    EXPECT_EQ(req.hdr.session_id, 0u);
    EXPECT_EQ(req.hdr.message_id, 1u);
    EXPECT_EQ(req.hdr.flags & SMB2_FLAGS_SIGNED, 0u);
    EXPECT_EQ(req.security_mode, SMB2_NEGOTIATE_SIGNING_ENABLED);
    EXPECT_EQ(req.previous_session_id, 0u);
    ASSERT_EQ(req.sec_buf_len, o.security_blob.size());
    EXPECT_EQ(std::vector<uint8_t>(req.sec_buf, req.sec_buf + req.sec_buf_len),
              o.security_blob);
}

TEST(ClientSessionSetup, BindingParsesSignedWithTheSession)
{
    SessionSetupOptions o;
    o.binding = true;
    o.session_id = kSession;
    o.message_id = 7;
    auto b = build_smb2_session_setup(o);
    smb2_session_setup_req req;
    ASSERT_PROTO_ERR(smb2_session_setup_parse(b.data(), b.size(), &req),
                     SMBD_E_OK);
    EXPECT_EQ(req.flags, SMB2_SESSION_FLAG_BINDING);
    EXPECT_EQ(req.hdr.session_id, kSession);
    EXPECT_EQ(req.hdr.message_id, 7u);
    EXPECT_NE(req.hdr.flags & SMB2_FLAGS_SIGNED, 0u);
    bool signature = false;
    for (uint8_t s : req.hdr.signature)
        signature |= s != 0;
    EXPECT_TRUE(signature) << "a signed request carries a signature";
}

TEST(ClientSessionSetup, SecurityBlobStartsAsNtlmssp)
{
    auto blob = default_security_blob();
    ASSERT_GE(blob.size(), 8u);
    EXPECT_EQ(0, std::memcmp(blob.data(), "NTLMSSP", 8));
}

std::vector<uint8_t> response(uint32_t status, uint64_t session_id,
                              std::vector<uint8_t> blob = {})
{
    Bytes w;
    w.u8(0xfe).u8('S').u8('M').u8('B').le16(64).le16(1).le32(status);
    w.le16(SMB2_SESSION_SETUP)
        .le16(32)
        .le32(SMB2_FLAGS_SERVER_TO_REDIR)
        .le32(0);
    w.le64(1).le32(0xFEFF).le32(0).le64(session_id).zeros(16);
    w.le16(9).le16(0).le16(blob.empty() ? 0 : 72).le16(uint16_t(blob.size()));
    w.raw(blob);
    return w.b;
}

TEST(ClientSessionSetupResponse, SuccessGivesTheSession)
{
    auto r =
        parse_smb2_session_setup_response(response(0, kSession, {1, 2, 3}));
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->hdr.session_id, kSession);
    EXPECT_EQ(r->security_blob, (std::vector<uint8_t>{1, 2, 3}));
}

TEST(ClientSessionSetupResponse, MoreProcessingIsAnAnswer)
{
    auto r = parse_smb2_session_setup_response(
        response(NT_STATUS_MORE_PROCESSING_REQUIRED, kSession, {9}));
    EXPECT_TRUE(r.ok());
}

TEST(ClientSessionSetupResponse, ErrorStatusNamed)
{
    auto r = parse_smb2_session_setup_response(
        response(NT_STATUS_USER_SESSION_DELETED, kSession));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, make_error_code(Errc::smb2_status));
    EXPECT_NE(r.error().message.find("STATUS_USER_SESSION_DELETED"),
              std::string::npos);
}

TEST(ClientSessionSetupResponse, BlobOutOfRangeRefused)
{
    auto b = response(0, kSession, {1, 2, 3});
    smbd_put_le16(&b[64 + 6], 4);
    auto r = parse_smb2_session_setup_response(b);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, make_error_code(Errc::protocol));
}

TEST(ClientSessionSetupResponse, WrongCommandRefused)
{
    auto b = response(0, kSession);
    smbd_put_le16(&b[12], SMB2_NEGOTIATE);
    EXPECT_FALSE(parse_smb2_session_setup_response(b).ok());
}

} // namespace
