// The first SESSION_SETUP of an SMB Direct connection (MS-SMB2 2.2.5), which
// the driver parses to route the connection, and the SMB2 ERROR response
// (2.2.2) it sends, e.g. when a binding names an unknown session.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <span>
#include <vector>

#include "smb2.h"
#include "wire_bytes.h"

namespace {

constexpr uint64_t kSessionId =
    0x4f2a91c300000011ull; // smbd's session on channel 1

// The signature the client put on the binding request (signed with the
// session's key, which the driver does not have).
constexpr std::array<uint8_t, 16> kSignature = {
    0x8d, 0x1e, 0x44, 0x2b, 0xa7, 0x70, 0x3c, 0x95,
    0x0f, 0xe2, 0x61, 0xd8, 0x5b, 0x13, 0xc6, 0x7a,
};

// The start of an SPNEGO NegTokenInit; the parser treats it as opaque.
constexpr std::array<uint8_t, 20> kSecBuf = {
    0x60, 0x48, 0x06, 0x06, 0x2b, 0x06, 0x01, 0x05, 0x05, 0x02,
    0xa0, 0x3e, 0x30, 0x3c, 0xa0, 0x0e, 0x30, 0x0c, 0x06, 0x0a,
};

struct Req {
    uint16_t command = SMB2_SESSION_SETUP;
    uint32_t hdr_flags = SMB2_FLAGS_SIGNED;
    uint32_t next_command = 0;
    uint64_t message_id = 1;
    uint16_t credit_charge = 0;
    uint64_t session_id = kSessionId;
    uint16_t structure_size = 25;
    uint8_t flags = SMB2_SESSION_FLAG_BINDING;
    uint64_t previous_session_id = 0;
    uint16_t sec_offset = 88;
    uint16_t sec_len = kSecBuf.size();
};

// A SESSION_SETUP as the Linux cifs client 6.1 sends it; by default the
// binding of a new channel (multichannel) to kSessionId.
std::vector<uint8_t> build(const Req &r = {})
{
    Bytes w;
    w.u8(0xfe).u8('S').u8('M').u8('B'); //  0 ProtocolId
    w.le16(64);                         //  4 StructureSize
    w.le16(r.credit_charge);            //  6 CreditCharge
    w.le32(0);                          //  8 Status
    w.le16(r.command);                  // 12 Command
    w.le16(130);                        // 14 CreditRequest
    w.le32(r.hdr_flags);                // 16 Flags: a binding is signed
    w.le32(r.next_command);             // 20 NextCommand
    w.le64(r.message_id);               // 24 MessageId: 1, after NEGOTIATE
    w.le32(0x0000a1b2);                 // 32 ProcessId
    w.le32(0);                          // 36 TreeId
    w.le64(r.session_id);               // 40 SessionId
    w.raw(kSignature);                  // 48 Signature
    // SESSION_SETUP request body at 64
    w.le16(r.structure_size);             // 64 StructureSize
    w.u8(r.flags);                        // 66 Flags
    w.u8(SMB2_NEGOTIATE_SIGNING_ENABLED); // 67 SecurityMode
    w.le32(SMB2_GLOBAL_CAP_DFS);          // 68 Capabilities
    w.le32(0);                            // 72 Channel
    w.le16(r.sec_offset);                 // 76 SecurityBufferOffset
    w.le16(r.sec_len);                    // 78 SecurityBufferLength
    w.le64(r.previous_session_id);        // 80 PreviousSessionId
    w.raw(kSecBuf);                       // 88 Buffer
    return w.b;
}

smbd_proto_error parse(const std::vector<uint8_t> &buf,
                       smb2_session_setup_req *req)
{
    return smb2_session_setup_parse(buf.data(), buf.size(), req);
}

// ===========================================================================
// Parsing
// ===========================================================================

TEST(Smb2SessionSetupParse, LinuxBindingRequest)
{
    std::vector<uint8_t> buf = build();
    ASSERT_EQ(buf.size(), 108u);
    smb2_session_setup_req req;
    ASSERT_PROTO_ERR(parse(buf, &req), SMBD_E_OK);
    EXPECT_EQ(req.hdr.command, SMB2_SESSION_SETUP);
    EXPECT_EQ(req.hdr.flags, SMB2_FLAGS_SIGNED);
    EXPECT_EQ(req.hdr.message_id, 1u);
    EXPECT_EQ(req.hdr.session_id, kSessionId); // the session to bind to
    EXPECT_TRUE(
        std::equal(kSignature.begin(), kSignature.end(), req.hdr.signature));
    EXPECT_EQ(req.flags, SMB2_SESSION_FLAG_BINDING);
    EXPECT_EQ(req.security_mode, SMB2_NEGOTIATE_SIGNING_ENABLED);
    EXPECT_EQ(req.capabilities, SMB2_GLOBAL_CAP_DFS);
    EXPECT_EQ(req.channel, 0u);
    EXPECT_EQ(req.previous_session_id, 0u);
    // the buffer points into the request
    EXPECT_EQ(req.sec_buf, buf.data() + 88);
    EXPECT_EQ(req.sec_buf_len, kSecBuf.size());
}

TEST(Smb2SessionSetupParse, LinuxFirstSessionSetupIsNotBinding)
{
    // a fresh session after a reconnect: SessionId 0, the old session in
    // PreviousSessionId, unsigned
    Req r;
    r.hdr_flags = 0;
    r.session_id = 0;
    r.flags = 0;
    r.previous_session_id = 0x4f2a91c300000007ull;
    std::vector<uint8_t> buf = build(r);
    smb2_session_setup_req req;
    ASSERT_PROTO_ERR(parse(buf, &req), SMBD_E_OK);
    EXPECT_EQ(req.flags, 0);
    EXPECT_EQ(req.hdr.session_id, 0u);
    EXPECT_EQ(req.previous_session_id, 0x4f2a91c300000007ull);
}

TEST(Smb2SessionSetupParse, OtherFlagBitsAreReportedAsSent)
{
    // only BINDING is defined; the parser leaves the judgement to the caller
    Req r;
    r.flags = 0x81;
    std::vector<uint8_t> buf = build(r);
    smb2_session_setup_req req;
    ASSERT_PROTO_ERR(parse(buf, &req), SMBD_E_OK);
    EXPECT_EQ(req.flags, 0x81);
    EXPECT_TRUE(req.flags & SMB2_SESSION_FLAG_BINDING);
}

TEST(Smb2SessionSetupParse, NoSequenceRuleAfterNegotiate)
{
    // MessageId and CreditCharge are the credit layer's business here
    Req r;
    r.message_id = 5;
    r.credit_charge = 3;
    std::vector<uint8_t> buf = build(r);
    smb2_session_setup_req req;
    EXPECT_PROTO_ERR(parse(buf, &req), SMBD_E_OK);
}

TEST(Smb2SessionSetupParse, SecurityBufferMayEndExactlyAtPduEnd)
{
    std::vector<uint8_t> buf = build();
    smb2_session_setup_req req;
    ASSERT_PROTO_ERR(parse(buf, &req), SMBD_E_OK);
    EXPECT_EQ(req.sec_buf + req.sec_buf_len, buf.data() + buf.size());

    // bytes after the buffer (e.g. padding) are allowed
    buf.resize(buf.size() + 4, 0);
    ASSERT_PROTO_ERR(parse(buf, &req), SMBD_E_OK);
    EXPECT_EQ(req.sec_buf_len, kSecBuf.size());
}

// ===========================================================================
// Validation: one rule per test
// ===========================================================================

TEST(Smb2SessionSetupParse, RejectsTruncatedHeader)
{
    std::vector<uint8_t> full = build();
    for (size_t len : {0, 1, 12, 63}) {
        // exact-size copies, so that ASan sees any read past the end
        std::vector<uint8_t> cut(full.begin(), full.begin() + long(len));
        smb2_session_setup_req req;
        EXPECT_PROTO_ERR(parse(cut, &req), SMBD_E_TRUNCATED) << len;
    }
}

TEST(Smb2SessionSetupParse, RejectsWrongProtocolId)
{
    std::vector<uint8_t> buf = build();
    buf[0] = 0xfd; // a transform header is never routed
    smb2_session_setup_req req;
    EXPECT_PROTO_ERR(parse(buf, &req), SMBD_E_SMB2_PROTOCOL_ID);
}

TEST(Smb2SessionSetupParse, RejectsResponseFlag)
{
    Req r;
    r.hdr_flags |= SMB2_FLAGS_SERVER_TO_REDIR;
    smb2_session_setup_req req;
    EXPECT_PROTO_ERR(parse(build(r), &req), SMBD_E_SMB2_NOT_REQUEST);
}

TEST(Smb2SessionSetupParse, RejectsOtherCommand)
{
    for (uint16_t cmd : {SMB2_NEGOTIATE, 0x0002, 0x0003}) {
        Req r;
        r.command = cmd;
        smb2_session_setup_req req;
        EXPECT_PROTO_ERR(parse(build(r), &req), SMBD_E_SMB2_UNEXPECTED_COMMAND)
            << cmd;
    }
}

TEST(Smb2SessionSetupParse, RejectsCompound)
{
    Req r;
    r.next_command = 112;
    smb2_session_setup_req req;
    EXPECT_PROTO_ERR(parse(build(r), &req), SMBD_E_SMB2_COMPOUND);

    r = Req{};
    r.hdr_flags |= SMB2_FLAGS_RELATED_OPERATIONS;
    EXPECT_PROTO_ERR(parse(build(r), &req), SMBD_E_SMB2_COMPOUND);
}

TEST(Smb2SessionSetupParse, RejectsTruncatedBody)
{
    std::vector<uint8_t> full = build();
    for (size_t len : {64, 65, 76, 87}) {
        std::vector<uint8_t> cut(full.begin(), full.begin() + long(len));
        smb2_session_setup_req req;
        EXPECT_PROTO_ERR(parse(cut, &req), SMBD_E_TRUNCATED) << len;
    }
}

TEST(Smb2SessionSetupParse, RejectsStructureSizeNot25)
{
    for (uint16_t size : {0, 24, 26, 36, 0x0119}) {
        Req r;
        r.structure_size = size;
        smb2_session_setup_req req;
        EXPECT_PROTO_ERR(parse(build(r), &req), SMBD_E_SMB2_STRUCTURE_SIZE)
            << size;
    }
}

TEST(Smb2SessionSetupParse, RejectsSecurityBufferOffsetNot88)
{
    // Samba requires the buffer right after the fixed part
    for (uint16_t off : {0, 64, 80, 87, 89, 96}) {
        Req r;
        r.sec_offset = off;
        r.sec_len = 4; // inside the PDU wherever it starts
        smb2_session_setup_req req;
        EXPECT_PROTO_ERR(parse(build(r), &req), SMBD_E_SMB2_SECURITY_BUFFER)
            << off;
    }
}

TEST(Smb2SessionSetupParse, RejectsSecurityBufferPastEnd)
{
    for (uint16_t len : {uint16_t(kSecBuf.size() + 1), uint16_t(0xffff)}) {
        Req r;
        r.sec_len = len;
        smb2_session_setup_req req;
        EXPECT_PROTO_ERR(parse(build(r), &req), SMBD_E_SMB2_SECURITY_BUFFER)
            << len;
    }
}

// ===========================================================================
// ERROR response and response header
// ===========================================================================

TEST(Smb2ErrorResponse, UserSessionDeletedAnswerToBindingExactBytes)
{
    std::vector<uint8_t> reqbuf = build();
    smb2_session_setup_req req;
    ASSERT_PROTO_ERR(parse(reqbuf, &req), SMBD_E_OK);

    std::vector<uint8_t> out(SMB2_ERROR_RESP_SIZE);
    size_t len = 0;
    ASSERT_PROTO_ERR(smb2_error_resp_build(&req.hdr,
                                           NT_STATUS_USER_SESSION_DELETED,
                                           out.data(), out.size(), &len),
                     SMBD_E_OK);
    ASSERT_EQ(len, 73u);

    // smbd_smb2_request_setup_out() copies the request's header; with no
    // session key the response is not signed but keeps the copied flag and
    // signature, as smbd's own answer does
    Bytes w;
    w.u8(0xfe).u8('S').u8('M').u8('B'); //  0 ProtocolId
    w.le16(64);                         //  4 StructureSize
    w.le16(0);                          //  6 CreditCharge, copied
    w.le32(0xc0000203);                 //  8 STATUS_USER_SESSION_DELETED
    w.le16(SMB2_SESSION_SETUP);         // 12 Command
    w.le16(1);                          // 14 CreditResponse
    w.le32(SMB2_FLAGS_SIGNED | SMB2_FLAGS_SERVER_TO_REDIR); // 16 Flags
    w.le32(0);                                              // 20 NextCommand
    w.le64(1);          // 24 MessageId, copied
    w.le32(0x0000a1b2); // 32 ProcessId, copied
    w.le32(0);          // 36 TreeId, copied
    w.le64(kSessionId); // 40 SessionId, copied
    w.raw(kSignature);  // 48 Signature, copied
    w.le16(9);          // 64 StructureSize
    w.u8(0);            // 66 ErrorContextCount
    w.u8(0);            // 67 Reserved
    w.le32(0);          // 68 ByteCount
    w.u8(0);            // 72 ErrorData: one byte, always
    EXPECT_TRUE(SameBytes(out, w.b));
}

TEST(Smb2ErrorResponse, OutOfSpaceWhenCapBelow73)
{
    smb2_session_setup_req req;
    std::vector<uint8_t> reqbuf = build();
    ASSERT_PROTO_ERR(parse(reqbuf, &req), SMBD_E_OK);
    // exact-size buffers let ASan catch a write past the cap
    for (size_t cap = 0; cap < SMB2_ERROR_RESP_SIZE; cap++) {
        std::vector<uint8_t> out(cap);
        size_t len = 999;
        EXPECT_PROTO_ERR(smb2_error_resp_build(&req.hdr,
                                               NT_STATUS_USER_SESSION_DELETED,
                                               out.data(), cap, &len),
                         SMBD_E_OUT_OF_SPACE)
            << cap;
        EXPECT_EQ(len, 999u) << cap;
    }
}

TEST(Smb2ErrorResponse, LargerBufferHoldsExactly73Bytes)
{
    smb2_session_setup_req req;
    std::vector<uint8_t> reqbuf = build();
    ASSERT_PROTO_ERR(parse(reqbuf, &req), SMBD_E_OK);
    std::vector<uint8_t> out(128, 0xee);
    size_t len = 0;
    ASSERT_PROTO_ERR(smb2_error_resp_build(&req.hdr,
                                           NT_STATUS_INVALID_PARAMETER,
                                           out.data(), out.size(), &len),
                     SMBD_E_OK);
    EXPECT_EQ(len, size_t(SMB2_ERROR_RESP_SIZE));
    EXPECT_EQ(smbd_get_le32(&out[8]), NT_STATUS_INVALID_PARAMETER);
    // nothing written past the response
    EXPECT_TRUE(std::all_of(out.begin() + SMB2_ERROR_RESP_SIZE, out.end(),
                            [](uint8_t b) { return b == 0xee; }));
}

TEST(Smb2ResponseHeader, CopiesRequestIdsAndSetsServerFlag)
{
    smb2_hdr h{};
    h.credit_charge = 2;
    h.command = SMB2_SESSION_SETUP;
    h.credits = 64;
    h.flags = 0x20000000u; // a priority value in bits 4-6 would be copied too
    h.next_command = 0x70; // a response never chains here
    h.message_id = 0x0102030405060708ull;
    h.process_id = 0xfeff;
    h.tree_id = 0x11223344;
    h.session_id = kSessionId;
    std::copy(kSignature.begin(), kSignature.end(), h.signature);

    std::array<uint8_t, SMB2_HDR_SIZE> out{};
    smb2_resp_hdr_build(&h, 0xc0000016u, 7, out.data());

    Bytes w;
    w.u8(0xfe).u8('S').u8('M').u8('B').le16(64);
    w.le16(2);                  // CreditCharge
    w.le32(0xc0000016u);        // Status
    w.le16(SMB2_SESSION_SETUP); // Command
    w.le16(7);                  // CreditResponse: the caller's
    w.le32(0x20000000u | SMB2_FLAGS_SERVER_TO_REDIR); // Flags
    w.le32(0);                                        // NextCommand
    w.le64(0x0102030405060708ull);                    // MessageId
    w.le32(0xfeff);                                   // ProcessId
    w.le32(0x11223344);                               // TreeId
    w.le64(kSessionId);                               // SessionId
    w.raw(kSignature);                                // Signature
    EXPECT_TRUE(SameBytes({out.begin(), out.end()}, w.b));
}

// What confirms a bound channel: smbd's signed STATUS_SUCCESS to a
// SESSION_SETUP for the bound SessionId; nothing else, however dressed.
TEST(Smb2ProvesSession, OnlyTheSignedSuccessOfTheBoundSession)
{
    auto response = [](uint32_t status, uint16_t command, uint64_t session,
                       uint32_t flags) {
        smb2_hdr req{};
        req.command = command;
        req.session_id = session;
        req.flags = flags;
        std::vector<uint8_t> out(SMB2_HDR_SIZE + 9);
        smb2_resp_hdr_build(&req, status, 1, out.data());
        return out;
    };
    auto proves = [](const std::vector<uint8_t> &b) {
        return smb2_proves_session(b.data(), b.size(), kSessionId);
    };
    const auto ok = response(NT_STATUS_SUCCESS, SMB2_SESSION_SETUP, kSessionId,
                             SMB2_FLAGS_SIGNED);
    EXPECT_TRUE(proves(ok));
    // unsigned (a guest's, or anonymous)
    EXPECT_FALSE(
        proves(response(NT_STATUS_SUCCESS, SMB2_SESSION_SETUP, kSessionId, 0)));
    // another session's success: a new session set up on the channel
    EXPECT_FALSE(proves(response(NT_STATUS_SUCCESS, SMB2_SESSION_SETUP,
                                 kSessionId + 1, SMB2_FLAGS_SIGNED)));
    // the interim answer, and failures
    EXPECT_FALSE(proves(response(0xc0000016u, SMB2_SESSION_SETUP, kSessionId,
                                 SMB2_FLAGS_SIGNED)));
    EXPECT_FALSE(
        proves(response(NT_STATUS_USER_SESSION_DELETED, SMB2_SESSION_SETUP,
                        kSessionId, SMB2_FLAGS_SIGNED)));
    // another command's success
    EXPECT_FALSE(proves(response(NT_STATUS_SUCCESS, SMB2_NEGOTIATE, kSessionId,
                                 SMB2_FLAGS_SIGNED)));
    // a request's header, not a response
    auto req = ok;
    req[SMB2_HDR_FLAGS] &= ~SMB2_FLAGS_SERVER_TO_REDIR;
    EXPECT_FALSE(proves(req));
    // short, or not SMB2 at all
    EXPECT_FALSE(smb2_proves_session(ok.data(), SMB2_HDR_SIZE - 1, kSessionId));
    auto smb1 = ok;
    smb1[0] = 0xff;
    EXPECT_FALSE(proves(smb1));
    auto bad_size = ok;
    bad_size[SMB2_HDR_STRUCTURE_SIZE] = 65;
    EXPECT_FALSE(proves(bad_size));
    // an SMB2 TRANSFORM_HEADER (0xFD 'SMB'): smbd does not encrypt the
    // answer to a binding, so nothing encrypted confirms one
    std::vector<uint8_t> tf(52 + 64, 0);
    tf[0] = 0xfd;
    tf[1] = 'S';
    tf[2] = 'M';
    tf[3] = 'B';
    EXPECT_FALSE(proves(tf));
}

} // namespace
