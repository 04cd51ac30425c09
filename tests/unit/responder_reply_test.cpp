// The bytes the test responder answers with: SESSION_SETUP responses for new
// and bound sessions, and echoes of received PDUs.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "reply.h"
#include "smb2.h"
#include "wire_bytes.h"

namespace {

using smbd::responder::accept_completed_blob;
using smbd::responder::echo_response;
using smbd::responder::session_setup_response;

constexpr uint64_t kNewSession = 0x0000123400000001ull;
constexpr uint64_t kBoundSession = 0x4f2a91c300000011ull;

// A SESSION_SETUP request with a 4-byte security buffer.
std::vector<uint8_t> setup_request(uint64_t session_id, uint32_t flags,
                                   uint8_t setup_flags)
{
    Bytes w;
    w.u8(0xfe).u8('S').u8('M').u8('B').le16(64); // ProtocolId, StructureSize
    w.le16(1).le32(0).le16(SMB2_SESSION_SETUP); // CreditCharge, Status, Command
    w.le16(130).le32(flags).le32(0);            // Credits, Flags, NextCommand
    w.le64(5).le32(0xfeff).le32(0);             // MessageId, ProcessId, TreeId
    w.le64(session_id).zeros(16);               // SessionId, Signature
    w.le16(25).u8(setup_flags).u8(1); // StructureSize, Flags, SecurityMode
    w.le32(0).le32(0).le16(88).le16(4).le64(
        0); // Caps, Channel, SecBuf, PrevSession
    w.u8(0x60).u8(0x02).u8(0x05).u8(0x00);
    return w.b;
}

// What the responder must send: the request's header as smbd answers it,
// with the new SessionId, the blob at offset 72, and @flags besides the
// response's own.
std::vector<uint8_t> setup_response(uint64_t session_id, uint32_t flags = 0)
{
    Bytes w;
    w.u8(0xfe).u8('S').u8('M').u8('B').le16(64);
    w.le16(1).le32(NT_STATUS_SUCCESS).le16(SMB2_SESSION_SETUP);
    w.le16(130).le32(SMB2_FLAGS_SERVER_TO_REDIR | flags).le32(0);
    w.le64(5).le32(0xfeff).le32(0);
    w.le64(session_id).zeros(16);
    w.le16(9).le16(0).le16(72).le16(uint16_t(accept_completed_blob.size()));
    w.raw(accept_completed_blob);
    return w.b;
}

TEST(ResponderReply, NewSessionGetsItsIdAndTheBlobAtOffset72)
{
    auto req = setup_request(0, 0, 0);
    EXPECT_TRUE(SameBytes(session_setup_response(req, kNewSession),
                          setup_response(kNewSession)));
}

// A binding request is signed with a key the responder does not have; its
// answer says signed, as smbd's does, with a zero signature: the driver
// looks at the flag to lift the channel's setup limits.
TEST(ResponderReply, BoundSessionAnswerIsFlaggedSignedForTheBoundId)
{
    auto req = setup_request(kBoundSession, SMB2_FLAGS_SIGNED,
                             SMB2_SESSION_FLAG_BINDING);
    EXPECT_TRUE(SameBytes(session_setup_response(req, kBoundSession),
                          setup_response(kBoundSession, SMB2_FLAGS_SIGNED)));
}

TEST(ResponderReply, InvalidSessionSetupGetsNoAnswerAndAReason)
{
    auto req = setup_request(0, 0, 0);
    req[12] = SMB2_NEGOTIATE; // Command
    std::string why;
    EXPECT_TRUE(session_setup_response(req, kNewSession, &why).empty());
    EXPECT_EQ(why, smbd_proto_error_name(SMBD_E_SMB2_UNEXPECTED_COMMAND));
}

TEST(ResponderReply, EchoSetsServerToRedirAndKeepsEveryOtherByte)
{
    auto pdu = setup_request(kBoundSession, SMB2_FLAGS_SIGNED, 0);
    auto want = pdu;
    want[16] = uint8_t(SMB2_FLAGS_SIGNED | SMB2_FLAGS_SERVER_TO_REDIR);
    EXPECT_TRUE(SameBytes(echo_response(pdu), want));
}

TEST(ResponderReply, EchoOfAPduWithoutFlagsFieldIsUnchanged)
{
    std::vector<uint8_t> pdu = {0xfe, 'S', 'M', 'B', 64, 0};
    EXPECT_TRUE(SameBytes(echo_response(pdu), pdu));
}

} // namespace
