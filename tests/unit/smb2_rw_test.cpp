// SMB2 READ and WRITE over SMB Direct (MS-SMB2 2.2.19-2.2.22): byte-exact
// requests and responses, and one test per validation rule of the parsers
// the responder and the client tool share.
#include "smb2_rw.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <vector>

#include "wire_bytes.h"

namespace smbd::smb2rw {
// Failures print "channel_dialect" instead of a bare number.
static void PrintTo(Rule r, std::ostream *os) { *os << rule_name(r); }
} // namespace smbd::smb2rw

namespace {

using namespace smbd::smb2rw;

constexpr uint64_t kSession = 0x4f2a91c300000011ull;
constexpr uint32_t kToken0 = 0x1234abcd, kToken1 = 0x1234abce;

// Two descriptors as Windows splits 1 MiB: 0xFFFC0 + 0x40 bytes.
Bytes Descs()
{
    Bytes d;
    d.le64(0x7f1234567000).le32(kToken0).le32(0xfffc0);
    d.le64(0x7f1234666fc0).le32(kToken1).le32(0x40);
    return d;
}

void Header(Bytes &w, uint16_t command, uint32_t flags = 0)
{
    w.u8(0xfe).u8('S').u8('M').u8('B').le16(64); // ProtocolId, StructureSize
    w.le16(16).le32(0).le16(command).le16(
        32);                       // CreditCharge, Status, Command, Credits
    w.le32(flags).le32(0).le64(7); // Flags, NextCommand, MessageId
    w.le32(0xfeff).le32(5).le64(kSession).zeros(
        16); // ProcessId, TreeId, SessionId, Signature
}

// A READ request as a Windows client sends it on an RDMA channel.
struct ReadFields {
    uint16_t structure_size = 49;
    uint32_t length = 0x100000;
    uint32_t channel = CHANNEL_RDMA_V1_INVALIDATE;
    uint16_t info_offset = 112;
    uint16_t info_length = 32;
    Bytes info = Descs();
    uint32_t flags = 0;
};

std::vector<uint8_t> ReadPdu(const ReadFields &f = {})
{
    Bytes w;
    Header(w, SMB2_READ, f.flags);
    w.le16(f.structure_size).u8(0).u8(0); // StructureSize, Padding, Flags
    w.le32(f.length).le64(0x300000);      // Length, Offset
    w.le64(0x11).le64(0x22);              // FileId
    w.le32(1).le32(f.channel).le32(0); // MinimumCount, Channel, RemainingBytes
    w.le16(f.info_offset).le16(f.info_length); // ReadChannelInfoOffset/Length
    w.raw(f.info.b);
    return w.b;
}

struct WriteFields {
    uint16_t data_offset = 0;
    uint32_t length = 0;
    uint32_t channel = CHANNEL_RDMA_V1;
    uint32_t remaining = 0x100000;
    uint16_t info_offset = 112;
    uint16_t info_length = 32;
    Bytes tail = Descs();
};

std::vector<uint8_t> WritePdu(const WriteFields &f = {})
{
    Bytes w;
    Header(w, SMB2_WRITE);
    w.le16(49)
        .le16(f.data_offset)
        .le32(f.length);                    // StructureSize, DataOffset, Length
    w.le64(0x300000).le64(0x11).le64(0x22); // Offset, FileId
    w.le32(f.channel).le32(f.remaining);    // Channel, RemainingBytes
    w.le16(f.info_offset).le16(f.info_length); // WriteChannelInfoOffset/Length
    w.le32(1);                                 // Flags: WRITE_THROUGH
    w.raw(f.tail.b);
    return w.b;
}

Rule ParseRead(const std::vector<uint8_t> &pdu,
               uint16_t dialect = SMB2_DIALECT_311)
{
    ReadRequest r;
    return parse_read_request(pdu, dialect, r);
}

Rule ParseWrite(const std::vector<uint8_t> &pdu,
                uint16_t dialect = SMB2_DIALECT_311)
{
    WriteRequest r;
    return parse_write_request(pdu, dialect, r);
}

smb2_hdr RequestHeader(uint16_t command)
{
    smb2_hdr h{};
    h.credit_charge = 16;
    h.command = command;
    h.credits = 32;
    h.message_id = 7;
    h.process_id = 0xfeff;
    h.tree_id = 5;
    h.session_id = kSession;
    return h;
}

TEST(Smb2RwChannel, AllowedPerDialect)
{
    for (uint16_t d : {SMB2_DIALECT_300, SMB2_DIALECT_302, SMB2_DIALECT_311}) {
        EXPECT_TRUE(channel_allowed(CHANNEL_NONE, d));
        EXPECT_TRUE(channel_allowed(CHANNEL_RDMA_V1, d));
        EXPECT_EQ(channel_allowed(CHANNEL_RDMA_V1_INVALIDATE, d),
                  d != SMB2_DIALECT_300);
        EXPECT_FALSE(channel_allowed(CHANNEL_RDMA_TRANSFORM, d));
        EXPECT_FALSE(channel_allowed(4, d));
    }
}

TEST(Smb2RwReadRequest, ParsesWhatWindowsSends)
{
    Bytes pdu;
    pdu.b = ReadPdu();
    ReadRequest r;
    ASSERT_EQ(parse_read_request(pdu.b, SMB2_DIALECT_302, r), Rule::ok);
    EXPECT_EQ(r.hdr.message_id, 7u);
    EXPECT_EQ(r.hdr.credits, 32u);
    EXPECT_EQ(r.length, 0x100000u);
    EXPECT_EQ(r.offset, 0x300000u);
    EXPECT_EQ(r.file_id[0], 0x11);
    EXPECT_EQ(r.file_id[8], 0x22);
    EXPECT_EQ(r.minimum_count, 1u);
    EXPECT_EQ(r.channel, CHANNEL_RDMA_V1_INVALIDATE);
    EXPECT_TRUE(
        SameBytes({r.channel_info.begin(), r.channel_info.end()}, Descs().b));
}

TEST(Smb2RwReadRequest, BuilderWritesTheSameBytes)
{
    Bytes descs = Descs();
    ReadRequest r;
    r.hdr = RequestHeader(SMB2_READ);
    r.length = 0x100000;
    r.offset = 0x300000;
    r.file_id[0] = 0x11;
    r.file_id[8] = 0x22;
    r.minimum_count = 1;
    r.channel = CHANNEL_RDMA_V1_INVALIDATE;
    r.channel_info = descs.b;
    EXPECT_TRUE(SameBytes(build_read_request(r), ReadPdu()));
}

TEST(Smb2RwReadRequest, WithoutChannelInfoOneBufferByteFollows)
{
    ReadRequest r;
    r.hdr = RequestHeader(SMB2_READ);
    auto pdu = build_read_request(r);
    EXPECT_EQ(pdu.size(), 64u + 49u);
    ReadRequest back;
    EXPECT_EQ(parse_read_request(pdu, SMB2_DIALECT_300, back), Rule::ok);
    EXPECT_TRUE(back.channel_info.empty());
}

TEST(Smb2RwReadRequest, Truncated)
{
    auto pdu = ReadPdu();
    pdu.resize(63);
    EXPECT_EQ(ParseRead(pdu), Rule::truncated);
    pdu = ReadPdu();
    pdu.resize(64 + 47);
    EXPECT_EQ(ParseRead(pdu), Rule::truncated);
}

TEST(Smb2RwReadRequest, FixedPartWithoutBufferByteIsEnough)
{
    // Samba takes the Buffer byte as optional
    ReadFields f;
    f.channel = CHANNEL_NONE;
    f.info_offset = f.info_length = 0;
    f.info = {};
    EXPECT_EQ(ParseRead(ReadPdu(f)), Rule::ok);
}

TEST(Smb2RwReadRequest, HeaderProtocolId)
{
    auto pdu = ReadPdu();
    pdu[0] = 0xff;
    EXPECT_EQ(ParseRead(pdu), Rule::header);
}

TEST(Smb2RwReadRequest, ResponseFlagOnARequest)
{
    ReadFields f;
    f.flags = SMB2_FLAGS_SERVER_TO_REDIR;
    EXPECT_EQ(ParseRead(ReadPdu(f)), Rule::direction);
}

TEST(Smb2RwReadRequest, OtherCommand)
{
    EXPECT_EQ(ParseRead(WritePdu()), Rule::command);
}

TEST(Smb2RwReadRequest, StructureSize)
{
    for (uint16_t size : {48, 50, 0}) {
        ReadFields f;
        f.structure_size = size;
        EXPECT_EQ(ParseRead(ReadPdu(f)), Rule::structure_size) << size;
    }
}

TEST(Smb2RwReadRequest, UnknownChannel)
{
    ReadFields f;
    f.channel = 4;
    EXPECT_EQ(ParseRead(ReadPdu(f)), Rule::channel);
}

TEST(Smb2RwReadRequest, InvalidateChannelRefusedOn300)
{
    EXPECT_EQ(ParseRead(ReadPdu(), SMB2_DIALECT_300), Rule::channel_dialect);
    EXPECT_EQ(ParseRead(ReadPdu(), SMB2_DIALECT_302), Rule::ok);
    ReadFields f;
    f.channel = CHANNEL_RDMA_V1;
    EXPECT_EQ(ParseRead(ReadPdu(f), SMB2_DIALECT_300), Rule::ok);
}

TEST(Smb2RwReadRequest, TransformChannelRefused)
{
    ReadFields f;
    f.channel = CHANNEL_RDMA_TRANSFORM;
    EXPECT_EQ(ParseRead(ReadPdu(f)), Rule::channel_dialect);
}

TEST(Smb2RwReadRequest, RdmaChannelWithoutDescriptors)
{
    ReadFields f;
    f.info_length = 0;
    EXPECT_EQ(ParseRead(ReadPdu(f)), Rule::channel_info_missing);
}

TEST(Smb2RwReadRequest, ChannelInfoBeforeTheBufferField)
{
    for (uint16_t off : {0, 64, 111}) {
        ReadFields f;
        f.info_offset = off;
        EXPECT_EQ(ParseRead(ReadPdu(f)), Rule::channel_info_offset) << off;
    }
}

TEST(Smb2RwReadRequest, ChannelInfoNotWholeDescriptors)
{
    for (uint16_t len : {8, 24, 31}) {
        ReadFields f;
        f.info_length = len;
        EXPECT_EQ(ParseRead(ReadPdu(f)), Rule::channel_info_length) << len;
    }
}

TEST(Smb2RwReadRequest, ChannelInfoPastTheEnd)
{
    ReadFields f;
    f.info_length = 48;
    EXPECT_EQ(ParseRead(ReadPdu(f)), Rule::channel_info_range);
    f = {};
    f.info_offset = 128;
    EXPECT_EQ(ParseRead(ReadPdu(f)), Rule::channel_info_range);
}

TEST(Smb2RwReadRequest, ChannelNoneIgnoresChannelInfo)
{
    ReadFields f;
    f.channel = CHANNEL_NONE;
    f.info_offset = 3;
    f.info_length = 5;
    ReadRequest r;
    EXPECT_EQ(parse_read_request(ReadPdu(f), SMB2_DIALECT_311, r), Rule::ok);
    EXPECT_TRUE(r.channel_info.empty());
}

TEST(Smb2RwWriteRequest, ParsesAnRdmaWrite)
{
    auto pdu = WritePdu();
    WriteRequest r;
    ASSERT_EQ(parse_write_request(pdu, SMB2_DIALECT_300, r), Rule::ok);
    EXPECT_EQ(r.channel, CHANNEL_RDMA_V1);
    EXPECT_EQ(r.bytes(), 0x100000u);
    EXPECT_EQ(r.offset, 0x300000u);
    EXPECT_EQ(r.flags, 1u);
    EXPECT_TRUE(r.data.empty());
    EXPECT_TRUE(
        SameBytes({r.channel_info.begin(), r.channel_info.end()}, Descs().b));
}

TEST(Smb2RwWriteRequest, BuilderWritesTheSameBytes)
{
    Bytes descs = Descs();
    WriteRequest r;
    r.hdr = RequestHeader(SMB2_WRITE);
    r.offset = 0x300000;
    r.file_id[0] = 0x11;
    r.file_id[8] = 0x22;
    r.channel = CHANNEL_RDMA_V1;
    r.remaining_bytes = 0x100000;
    r.flags = 1;
    r.channel_info = descs.b;
    EXPECT_TRUE(SameBytes(build_write_request(r), WritePdu()));
}

TEST(Smb2RwWriteRequest, InlineDataRoundTrip)
{
    Bytes data;
    data.le32(0xdeadbeef).le32(0x01020304);
    WriteRequest r;
    r.hdr = RequestHeader(SMB2_WRITE);
    r.data = data.b;
    auto pdu = build_write_request(r);
    WriteRequest back;
    ASSERT_EQ(parse_write_request(pdu, SMB2_DIALECT_311, back), Rule::ok);
    EXPECT_EQ(back.bytes(), 8u);
    EXPECT_TRUE(SameBytes({back.data.begin(), back.data.end()}, data.b));
}

TEST(Smb2RwWriteRequest, RdmaWithLengthRefused)
{
    WriteFields f;
    f.length = 16;
    EXPECT_EQ(ParseWrite(WritePdu(f)), Rule::rdma_write_length);
}

TEST(Smb2RwWriteRequest, RdmaWithDataOffsetRefused)
{
    WriteFields f;
    f.data_offset = 112;
    EXPECT_EQ(ParseWrite(WritePdu(f)), Rule::rdma_write_offset);
}

TEST(Smb2RwWriteRequest, InvalidateChannelRefusedOn300)
{
    WriteFields f;
    f.channel = CHANNEL_RDMA_V1_INVALIDATE;
    EXPECT_EQ(ParseWrite(WritePdu(f), SMB2_DIALECT_300), Rule::channel_dialect);
    EXPECT_EQ(ParseWrite(WritePdu(f), SMB2_DIALECT_311), Rule::ok);
}

TEST(Smb2RwWriteRequest, UnknownChannel)
{
    WriteFields f;
    f.channel = 0x80000000u;
    EXPECT_EQ(ParseWrite(WritePdu(f)), Rule::channel);
}

TEST(Smb2RwWriteRequest, ChannelInfoRules)
{
    WriteFields f;
    f.info_length = 0;
    EXPECT_EQ(ParseWrite(WritePdu(f)), Rule::channel_info_missing);
    f = {};
    f.info_offset = 104; // the Flags field
    EXPECT_EQ(ParseWrite(WritePdu(f)), Rule::channel_info_offset);
    f = {};
    f.info_length = 20;
    EXPECT_EQ(ParseWrite(WritePdu(f)), Rule::channel_info_length);
    f = {};
    f.info_length = 64;
    EXPECT_EQ(ParseWrite(WritePdu(f)), Rule::channel_info_range);
}

TEST(Smb2RwWriteRequest, InlineDataOutOfRange)
{
    WriteFields f;
    f.channel = CHANNEL_NONE;
    f.info_offset = f.info_length = 0;
    f.data_offset = 112;
    f.length = 33; // one byte more than follows
    EXPECT_EQ(ParseWrite(WritePdu(f)), Rule::data_range);
    f.length = 32;
    EXPECT_EQ(ParseWrite(WritePdu(f)), Rule::ok);
    f.data_offset = 100; // inside the fixed body
    f.length = 8;
    EXPECT_EQ(ParseWrite(WritePdu(f)), Rule::data_range);
}

TEST(Smb2RwWriteRequest, StructureSizeAndTruncation)
{
    auto pdu = WritePdu();
    pdu[64] = 48;
    EXPECT_EQ(ParseWrite(pdu), Rule::structure_size);
    pdu = WritePdu();
    pdu.resize(64 + 40);
    EXPECT_EQ(ParseWrite(pdu), Rule::truncated);
}

// What the responder sends for a READ served by RDMA WRITE: DataOffset
// 0x50, DataLength 0, DataRemaining the bytes written, credits granted.
TEST(Smb2RwReadResponse, RdmaResponseBytes)
{
    Bytes w;
    w.u8(0xfe).u8('S').u8('M').u8('B').le16(64);
    w.le16(16).le32(NT_STATUS_SUCCESS).le16(SMB2_READ).le16(32);
    w.le32(SMB2_FLAGS_SERVER_TO_REDIR).le32(0).le64(7);
    w.le32(0xfeff).le32(5).le64(kSession).zeros(16);
    w.le16(17).u8(0x50).u8(0).le32(0).le32(0x12345).le32(0);
    smb2_hdr req = RequestHeader(SMB2_READ);
    req.flags = SMB2_FLAGS_SIGNED;
    req.signature[0] = 0x5a;
    EXPECT_TRUE(SameBytes(build_read_response(req, 32, 0x12345), w.b));
}

TEST(Smb2RwReadResponse, ParsesRdmaAndInline)
{
    smb2_hdr req = RequestHeader(SMB2_READ);
    ReadResponse r;
    ASSERT_EQ(parse_read_response(build_read_response(req, 1, 4096), r),
              Rule::ok);
    EXPECT_EQ(r.hdr.message_id, 7u);
    EXPECT_EQ(r.data_offset, 0x50);
    EXPECT_EQ(r.data_length, 0u);
    EXPECT_EQ(r.data_remaining, 4096u);
    Bytes data;
    data.le32(0xcafef00d);
    auto pdu = build_read_response(req, 1, 0, data.b);
    ASSERT_EQ(parse_read_response(pdu, r), Rule::ok);
    EXPECT_TRUE(SameBytes({r.data.begin(), r.data.end()}, data.b));
}

TEST(Smb2RwReadResponse, DataOutOfRange)
{
    auto pdu = build_read_response(RequestHeader(SMB2_READ), 1, 0);
    pdu[64 + 4] = 1; // DataLength 1, nothing follows
    ReadResponse r;
    EXPECT_EQ(parse_read_response(pdu, r), Rule::data_range);
    pdu.push_back(0);
    pdu[64 + 2] = 0x40; // DataOffset inside the header
    EXPECT_EQ(parse_read_response(pdu, r), Rule::data_range);
}

TEST(Smb2RwReadResponse, HeaderRules)
{
    ReadResponse r;
    auto pdu = build_read_response(RequestHeader(SMB2_READ), 1, 0);
    pdu[16] = 0; // no SERVER_TO_REDIR
    EXPECT_EQ(parse_read_response(pdu, r), Rule::direction);
    EXPECT_EQ(parse_read_response(
                  build_write_response(RequestHeader(SMB2_WRITE), 1, 0), r),
              Rule::command);
    pdu = build_read_response(RequestHeader(SMB2_READ), 1, 0);
    pdu[64] = 9;
    EXPECT_EQ(parse_read_response(pdu, r), Rule::structure_size);
    pdu.resize(64 + 15);
    EXPECT_EQ(parse_read_response(pdu, r), Rule::truncated);
}

TEST(Smb2RwWriteResponse, Bytes)
{
    Bytes w;
    w.u8(0xfe).u8('S').u8('M').u8('B').le16(64);
    w.le16(16).le32(NT_STATUS_SUCCESS).le16(SMB2_WRITE).le16(5);
    w.le32(SMB2_FLAGS_SERVER_TO_REDIR).le32(0).le64(7);
    w.le32(0xfeff).le32(5).le64(kSession).zeros(16);
    w.le16(17).le16(0).le32(0x100000).le32(0).le16(0).le16(0);
    EXPECT_TRUE(SameBytes(
        build_write_response(RequestHeader(SMB2_WRITE), 5, 0x100000), w.b));
    WriteResponse r;
    ASSERT_EQ(parse_write_response(w.b, r), Rule::ok);
    EXPECT_EQ(r.count, 0x100000u);
    EXPECT_EQ(r.hdr.credits, 5u);
}

TEST(Smb2RwErrorResponse, BytesAndParse)
{
    Bytes w;
    w.u8(0xfe).u8('S').u8('M').u8('B').le16(64);
    w.le16(16).le32(NT_STATUS_INVALID_PARAMETER).le16(SMB2_WRITE).le16(32);
    w.le32(SMB2_FLAGS_SERVER_TO_REDIR).le32(0).le64(7);
    w.le32(0xfeff).le32(5).le64(kSession).zeros(16);
    w.le16(9).u8(0).u8(0).le32(0).u8(0);
    auto pdu = build_error_response(RequestHeader(SMB2_WRITE), 32,
                                    NT_STATUS_INVALID_PARAMETER);
    EXPECT_TRUE(SameBytes(pdu, w.b));
    WriteResponse r;
    ASSERT_EQ(parse_write_response(pdu, r), Rule::ok);
    EXPECT_EQ(r.hdr.status, NT_STATUS_INVALID_PARAMETER);
    pdu[64] = 17;
    EXPECT_EQ(parse_write_response(pdu, r), Rule::structure_size);
    pdu.resize(64 + 7);
    EXPECT_EQ(parse_write_response(pdu, r), Rule::truncated);
}

TEST(Smb2RwCredits, ResponseGrantsTheRequestAtLeastOne)
{
    smb2_hdr h{};
    EXPECT_EQ(credit_response(h), 1u);
    h.credits = 64;
    EXPECT_EQ(credit_response(h), 64u);
}

TEST(Smb2RwRules, EveryRuleHasAName)
{
    for (int r = int(Rule::ok); r <= int(Rule::data_range); r++)
        EXPECT_STRNE(rule_name(Rule(r)), "unknown") << r;
}

} // namespace
