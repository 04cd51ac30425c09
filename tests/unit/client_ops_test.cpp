// The SMB2 messages of a session past SESSION_SETUP (smb2_ops.h): each
// request checked byte by byte at the offsets MS-SMB2 gives, its header
// read back by the protocol core's request parser; each response parser on
// a response written by hand, then on every way a hostile server can get
// the response wrong; compound chains built, split and refused.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "smb2_ops.h"
#include "smb2_wire.h"
#include "wire_bytes.h"

using namespace smbd::client;

namespace {

constexpr uint64_t kSession = 0x4f2a91c300000011ull;
constexpr uint32_t kTree = 0x00000007;
constexpr uint64_t kMessage = 0x1122;
constexpr uint64_t kAsync = 0x0123456789abcdefull;

const std::array<uint8_t, 16> kFileId{0x01, 0x02, 0x03, 0x04, 0x05, 0x06,
                                      0x07, 0x08, 0x11, 0x12, 0x13, 0x14,
                                      0x15, 0x16, 0x17, 0x18};
const std::array<uint8_t, 16> kLeaseKey{0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5,
                                        0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xab,
                                        0xac, 0xad, 0xae, 0xaf};

// The header a caller fills; the builders set only Command.
smb2_hdr request_header()
{
    smb2_hdr h{};
    h.credit_charge = 1;
    h.credits = 5;
    h.message_id = kMessage;
    h.process_id = 0xFEFF;
    h.tree_id = kTree;
    h.session_id = kSession;
    return h;
}

// Fields of a message; at() throws (and fails the test) past its end.
uint16_t le16_at(const std::vector<uint8_t> &b, size_t at)
{
    (void)b.at(at + 1);
    return smbd_get_le16(&b[at]);
}
uint32_t le32_at(const std::vector<uint8_t> &b, size_t at)
{
    (void)b.at(at + 3);
    return smbd_get_le32(&b[at]);
}
uint64_t le64_at(const std::vector<uint8_t> &b, size_t at)
{
    (void)b.at(at + 7);
    return smbd_get_le64(&b[at]);
}

// The header of a built request: the caller's fields kept, @command set,
// and the protocol core's request parser takes it.
void ExpectRequestHeader(const std::vector<uint8_t> &b, uint16_t command,
                         const smb2_hdr &want = request_header())
{
    ASSERT_GE(b.size(), 64u);
    EXPECT_EQ(0, std::memcmp(b.data(), "\xfeSMB", 4)); // ProtocolId
    EXPECT_EQ(le16_at(b, 4), 64);                      // StructureSize
    EXPECT_EQ(le16_at(b, 6), want.credit_charge);      // CreditCharge
    EXPECT_EQ(le32_at(b, 8), 0u);                      // ChannelSequence
    EXPECT_EQ(le16_at(b, 12), command);                // Command
    EXPECT_EQ(le16_at(b, 14), want.credits);           // CreditRequest
    EXPECT_EQ(le32_at(b, 16), want.flags);             // Flags
    EXPECT_EQ(le32_at(b, 20), 0u);                     // NextCommand
    EXPECT_EQ(le64_at(b, 24), want.message_id);        // MessageId
    EXPECT_EQ(le32_at(b, 32), want.process_id);        // Reserved (ProcessId)
    EXPECT_EQ(le32_at(b, 36), want.tree_id);           // TreeId
    EXPECT_EQ(le64_at(b, 40), want.session_id);        // SessionId
    smb2_hdr parsed{};
    ASSERT_PROTO_ERR(smb2_hdr_parse(b.data(), b.size(), &parsed), SMBD_E_OK);
    EXPECT_EQ(parsed.command, command);
    EXPECT_EQ(parsed.message_id, want.message_id);
}

std::vector<uint8_t> ascii_utf16(std::string_view s)
{
    std::vector<uint8_t> u;
    for (char c : s)
        u.push_back(uint8_t(c)), u.push_back(0);
    return u;
}

// A response header as a server writes it, field by field.
Bytes ResponseHeader(uint16_t command, uint32_t status = NT_STATUS_SUCCESS,
                     uint32_t flags = SMB2_FLAGS_SERVER_TO_REDIR)
{
    Bytes w;
    w.u8(0xfe).u8('S').u8('M').u8('B'); // ProtocolId
    w.le16(64);                         // StructureSize
    w.le16(1);                          // CreditCharge
    w.le32(status);                     // Status
    w.le16(command);                    // Command
    w.le16(5);                          // CreditResponse
    w.le32(flags);                      // Flags
    w.le32(0);                          // NextCommand
    w.le64(kMessage);                   // MessageId
    w.le32(0xFEFF);                     // Reserved (ProcessId)
    w.le32(kTree);                      // TreeId
    w.le64(kSession);                   // SessionId
    w.zeros(16);                        // Signature
    return w;
}

// The ERROR response (2.2.2) Samba sends.
std::vector<uint8_t> ErrorResponse(uint16_t command, uint32_t status,
                                   uint32_t flags = SMB2_FLAGS_SERVER_TO_REDIR)
{
    Bytes w = ResponseHeader(command, status, flags);
    w.le16(9); // StructureSize
    w.u8(0);   // ErrorContextCount
    w.u8(0);   // Reserved
    w.le32(0); // ByteCount
    w.u8(0);   // ErrorData
    return w.b;
}

template <class T>
void ExpectError(const Result<T> &r, Errc code, std::string_view text = {})
{
    ASSERT_FALSE(r.ok()) << "accepted";
    EXPECT_EQ(r.error().code, make_error_code(code)) << r.error().message;
    EXPECT_NE(r.error().message.find(text), std::string::npos)
        << "\"" << r.error().message << "\" does not say \"" << text << "\"";
}

// The ways every response parser must refuse a response, whatever the
// command: @valid is a good one of @command.
template <class Parse>
void ExpectCommonRefusals(const std::vector<uint8_t> &valid, uint16_t command,
                          Parse parse)
{
    SCOPED_TRACE(smb2_command_text(command));
    ASSERT_TRUE(parse(valid).ok()) << parse(valid).error().message;

    // header truncated
    auto b = std::vector<uint8_t>(valid.begin(), valid.begin() + 63);
    ExpectError(parse(b), Errc::protocol, "63 bytes");
    // fixed body truncated
    b.assign(valid.begin(), valid.end() - 1);
    ExpectError(parse(b), Errc::protocol, std::to_string(b.size()));
    // protocol id
    b = valid;
    b[0] = 0xff;
    ExpectError(parse(b), Errc::protocol, "protocol id");
    // body StructureSize one more
    b = valid;
    smbd_put_le16(&b[64], le16_at(valid, 64) + 1);
    ExpectError(parse(b), Errc::protocol, "StructureSize");
    // another command's response
    b = valid;
    smbd_put_le16(&b[12], command == SMB2_CLOSE ? SMB2_CREATE : SMB2_CLOSE);
    ExpectError(parse(b), Errc::protocol, "got");
    // a request, not a response
    b = valid;
    smbd_put_le32(&b[16], le32_at(valid, 16) & ~SMB2_FLAGS_SERVER_TO_REDIR);
    ExpectError(parse(b), Errc::protocol, "SERVER_TO_REDIR");
    // an error status, with its ERROR body
    ExpectError(parse(ErrorResponse(command, NT_STATUS_ACCESS_DENIED)),
                Errc::smb2_status, "STATUS_ACCESS_DENIED (0xc0000022)");
}

// --- the status check every response goes through (2.2.1.2, 2.2.2) ----

TEST(ClientCheckStatus, SuccessPasses)
{
    Bytes w = ResponseHeader(SMB2_LOGOFF);
    w.le16(4).le16(0); // StructureSize, Reserved
    EXPECT_TRUE(smb2_check_status(w.b, SMB2_LOGOFF).ok());
}

TEST(ClientCheckStatus, ErrorStatusNamed)
{
    auto b = ErrorResponse(SMB2_CREATE, NT_STATUS_CANCELLED);
    ExpectError(smb2_check_status(b, SMB2_CREATE), Errc::smb2_status,
                "CREATE (0x0005) with STATUS_CANCELLED (0xc0000120)");
}

TEST(ClientCheckStatus, InterimIsAnErrorAndIsInterim)
{
    auto b =
        ErrorResponse(SMB2_READ, NT_STATUS_PENDING,
                      SMB2_FLAGS_SERVER_TO_REDIR | SMB2_FLAGS_ASYNC_COMMAND);
    smb2_set_async_id(std::span<uint8_t>(b), kAsync);
    ExpectError(smb2_check_status(b, SMB2_READ), Errc::smb2_status,
                "STATUS_PENDING");
    auto h = parse_smb2_response_header(b);
    ASSERT_TRUE(h.ok());
    EXPECT_TRUE(is_interim(*h));
    EXPECT_EQ(smb2_async_id(*h), kAsync);
}

TEST(ClientCheckStatus, InterimNeedsPendingAndAsync)
{
    smb2_hdr h{};
    h.status = NT_STATUS_PENDING;
    EXPECT_FALSE(is_interim(h)) << "a sync STATUS_PENDING";
    h.flags = SMB2_FLAGS_ASYNC_COMMAND;
    EXPECT_TRUE(is_interim(h));
    h.status = NT_STATUS_SUCCESS;
    EXPECT_FALSE(is_interim(h)) << "the final async response";
}

TEST(ClientCheckStatus, WrongCommandNamed)
{
    auto b = ErrorResponse(SMB2_CLOSE, NT_STATUS_SUCCESS);
    ExpectError(smb2_check_status(b, SMB2_CREATE), Errc::protocol,
                "expected a CREATE (0x0005) response, got CLOSE (0x0006)");
    ExpectError(smb2_check_status(b, 0x10006), Errc::protocol, "65542");
}

TEST(ClientCheckStatus, RequestRefused)
{
    auto b = ErrorResponse(SMB2_CLOSE, NT_STATUS_SUCCESS, 0);
    ExpectError(smb2_check_status(b, SMB2_CLOSE), Errc::protocol,
                "SERVER_TO_REDIR");
}

TEST(ClientCheckStatus, HeaderRefused)
{
    auto b = ErrorResponse(SMB2_CLOSE, NT_STATUS_SUCCESS);
    ExpectError(smb2_check_status(std::span(b).first(10), SMB2_CLOSE),
                Errc::protocol, "10 bytes");
    smbd_put_le16(&b[4], 65); // header StructureSize
    ExpectError(smb2_check_status(b, SMB2_CLOSE), Errc::protocol,
                "StructureSize");
}

TEST(ClientCheckStatus, MalformedErrorBodyRefused)
{
    auto good = ErrorResponse(SMB2_CLOSE, NT_STATUS_ACCESS_DENIED);
    // shorter than the ERROR body's 8 bytes
    ExpectError(smb2_check_status(std::span(good).first(64 + 7), SMB2_CLOSE),
                Errc::protocol, "71-byte message");
    // ERROR StructureSize 8
    auto b = good;
    smbd_put_le16(&b[64], 8);
    ExpectError(smb2_check_status(b, SMB2_CLOSE), Errc::protocol,
                "StructureSize is 8, not 9");
    // ByteCount past the message, and at its largest
    b = good;
    smbd_put_le32(&b[64 + 4], 2);
    ExpectError(smb2_check_status(b, SMB2_CLOSE), Errc::protocol,
                "ByteCount 2 runs past the 73-byte message");
    smbd_put_le32(&b[64 + 4], 0xffffffffu);
    ExpectError(smb2_check_status(b, SMB2_CLOSE), Errc::protocol,
                "ByteCount 4294967295");
    // the ERROR body without its ErrorData byte is still one
    ExpectError(smb2_check_status(std::span(good).first(72), SMB2_CLOSE),
                Errc::smb2_status, "STATUS_ACCESS_DENIED");
}

TEST(ClientCheckStatus, NewStatusesHaveNames)
{
    EXPECT_EQ(nt_status_text(NT_STATUS_PENDING), "STATUS_PENDING (0x00000103)");
    EXPECT_EQ(nt_status_text(NT_STATUS_CANCELLED),
              "STATUS_CANCELLED (0xc0000120)");
    EXPECT_EQ(nt_status_text(NT_STATUS_ACCESS_DENIED),
              "STATUS_ACCESS_DENIED (0xc0000022)");
    EXPECT_EQ(smb2_command_text(SMB2_TREE_CONNECT), "TREE_CONNECT (0x0003)");
    EXPECT_EQ(smb2_command_text(0x0042), "0x0042");
}

// --- TREE_CONNECT (2.2.9, 2.2.10) ---------------------------------------

TEST(ClientTreeConnect, BuiltFieldByField)
{
    auto r = build_tree_connect(request_header(), "\\\\srv\\share");
    ASSERT_TRUE(r.ok()) << r.error().message;
    const auto &b = *r;
    auto path = ascii_utf16("\\\\srv\\share");
    ExpectRequestHeader(b, 0x0003);
    ASSERT_EQ(b.size(), 64u + 8 + path.size());
    EXPECT_EQ(le16_at(b, 64 + 0), 9);           // StructureSize
    EXPECT_EQ(le16_at(b, 64 + 2), 0);           // Flags/Reserved
    EXPECT_EQ(le16_at(b, 64 + 4), 72);          // PathOffset
    EXPECT_EQ(le16_at(b, 64 + 6), path.size()); // PathLength
    EXPECT_EQ(std::vector<uint8_t>(b.begin() + 72, b.end()), path);
}

TEST(ClientTreeConnect, PathInUtf16)
{
    // U+00E5 is one UTF-16 unit, U+1F600 a surrogate pair
    auto r =
        build_tree_connect(request_header(), "\\\\s\\\xc3\xa5\xf0\x9f\x98\x80");
    ASSERT_TRUE(r.ok());
    std::vector<uint8_t> want = ascii_utf16("\\\\s\\");
    for (uint8_t c : {0xe5, 0x00, 0x3d, 0xd8, 0x00, 0xde})
        want.push_back(c);
    EXPECT_EQ(le16_at(*r, 64 + 6), want.size());
    EXPECT_EQ(std::vector<uint8_t>(r->begin() + 72, r->end()), want);
}

TEST(ClientTreeConnect, EmptyPathKeepsTheBufferByte)
{
    auto r = build_tree_connect(request_header(), "");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->size(), 64u + 9);
    EXPECT_EQ(le16_at(*r, 64 + 6), 0);
}

TEST(ClientTreeConnect, BadPathRefused)
{
    ExpectError(build_tree_connect(request_header(), "\\\\s\\\xff"),
                Errc::invalid_argument, "UTF-8");
    ExpectError(build_tree_connect(request_header(), std::string(40000, 'a')),
                Errc::invalid_argument, "80000 bytes");
}

std::vector<uint8_t> TreeConnectResponseBytes()
{
    Bytes w = ResponseHeader(SMB2_TREE_CONNECT);
    w.le16(16);         // StructureSize
    w.u8(0x01);         // ShareType: DISK
    w.u8(0);            // Reserved
    w.le32(0x00000030); // ShareFlags: no caching
    w.le32(0x00000008); // Capabilities: SCALEOUT
    w.le32(0x001f01ff); // MaximalAccess: all
    return w.b;
}

TEST(ClientTreeConnectResponse, Parses)
{
    auto r = parse_tree_connect_response(TreeConnectResponseBytes());
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->hdr.tree_id, kTree);
    EXPECT_EQ(r->hdr.session_id, kSession);
    EXPECT_EQ(r->share_type, 1);
    EXPECT_EQ(r->share_flags, 0x30u);
    EXPECT_EQ(r->capabilities, 0x8u);
    EXPECT_EQ(r->maximal_access, 0x1f01ffu);
}

TEST(ClientTreeConnectResponse, HostileRefused)
{
    ExpectCommonRefusals(TreeConnectResponseBytes(), SMB2_TREE_CONNECT,
                         [](const std::vector<uint8_t> &b) {
                             return parse_tree_connect_response(b);
                         });
}

// --- CREATE (2.2.13, 2.2.14) --------------------------------------------

TEST(ClientCreate, BuiltFieldByField)
{
    CreateRequest c;
    c.hdr = request_header();
    c.name = "dir\\file.txt";
    c.oplock_level = SMB2_OPLOCK_LEVEL_BATCH;
    c.desired_access = GENERIC_READ | GENERIC_WRITE | DELETE;
    c.disposition = FILE_OVERWRITE_IF;
    c.options = FILE_NON_DIRECTORY_FILE | FILE_DELETE_ON_CLOSE;
    auto r = build_create(c);
    ASSERT_TRUE(r.ok()) << r.error().message;
    const auto &b = *r;
    auto name = ascii_utf16("dir\\file.txt");
    ExpectRequestHeader(b, 0x0005);
    ASSERT_EQ(b.size(), 0x78 + name.size());
    EXPECT_EQ(le16_at(b, 64 + 0), 57);           // StructureSize
    EXPECT_EQ(b[64 + 2], 0);                     // SecurityFlags
    EXPECT_EQ(b[64 + 3], 0x09);                  // RequestedOplockLevel
    EXPECT_EQ(le32_at(b, 64 + 4), 2u);           // ImpersonationLevel
    EXPECT_EQ(le64_at(b, 64 + 8), 0u);           // SmbCreateFlags
    EXPECT_EQ(le64_at(b, 64 + 16), 0u);          // Reserved
    EXPECT_EQ(le32_at(b, 64 + 24), 0xc0010000u); // DesiredAccess
    EXPECT_EQ(le32_at(b, 64 + 28), 0x80u);       // FileAttributes
    EXPECT_EQ(le32_at(b, 64 + 32), 7u);          // ShareAccess
    EXPECT_EQ(le32_at(b, 64 + 36), 5u);          // CreateDisposition
    EXPECT_EQ(le32_at(b, 64 + 40), 0x1040u);     // CreateOptions
    EXPECT_EQ(le16_at(b, 64 + 44), 0x78);        // NameOffset
    EXPECT_EQ(le16_at(b, 64 + 46), name.size()); // NameLength
    EXPECT_EQ(le32_at(b, 64 + 48), 0u);          // CreateContextsOffset
    EXPECT_EQ(le32_at(b, 64 + 52), 0u);          // CreateContextsLength
    EXPECT_EQ(std::vector<uint8_t>(b.begin() + 0x78, b.end()), name);
}

TEST(ClientCreate, EmptyNameKeepsTheBufferByte)
{
    CreateRequest c;
    c.hdr = request_header();
    c.desired_access = FILE_READ_ATTRIBUTES;
    auto r = build_create(c);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->size(), 0x78u + 1);
    EXPECT_EQ(le16_at(*r, 64 + 44), 0x78);
    EXPECT_EQ(le16_at(*r, 64 + 46), 0);
    EXPECT_EQ((*r)[0x78], 0);
}

TEST(ClientCreate, LeaseContextAlignedAfterTheName)
{
    CreateRequest c;
    c.hdr = request_header();
    c.name = "a.txt"; // 10 bytes: the contexts start 6 bytes later
    c.oplock_level = SMB2_OPLOCK_LEVEL_LEASE;
    c.desired_access = GENERIC_READ;
    c.contexts = lease_context_v2(kLeaseKey, SMB2_LEASE_READ_CACHING |
                                                 SMB2_LEASE_HANDLE_CACHING);
    auto r = build_create(c);
    ASSERT_TRUE(r.ok());
    const auto &b = *r;
    EXPECT_EQ(b[64 + 3], 0xff);            // RequestedOplockLevel
    EXPECT_EQ(le16_at(b, 64 + 46), 10);    // NameLength
    EXPECT_EQ(le32_at(b, 64 + 48), 0x88u); // CreateContextsOffset
    EXPECT_EQ(le32_at(b, 64 + 52), 76u);   // CreateContextsLength
    ASSERT_EQ(b.size(), 0x88u + 76);
    for (size_t i = 0x78 + 10; i < 0x88; i++)
        EXPECT_EQ(b[i], 0) << "padding at " << i;
    EXPECT_EQ(std::vector<uint8_t>(b.begin() + 0x88, b.end()), c.contexts);
}

TEST(ClientCreate, EmptyNameContextsAtTheBuffer)
{
    CreateRequest c;
    c.hdr = request_header();
    c.contexts = lease_context_v2(kLeaseKey, SMB2_LEASE_READ_CACHING);
    auto r = build_create(c);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(le32_at(*r, 64 + 48), 0x78u);
    EXPECT_EQ(r->size(), 0x78u + 76);
}

TEST(ClientCreate, BadNameRefused)
{
    CreateRequest c;
    c.hdr = request_header();
    c.name = "\xc3";
    ExpectError(build_create(c), Errc::invalid_argument, "UTF-8");
    c.name = std::string(32768, 'x');
    ExpectError(build_create(c), Errc::invalid_argument, "65536 bytes");
}

TEST(ClientLeaseContext, V2FieldByField)
{
    auto c = lease_context_v2(kLeaseKey, SMB2_LEASE_READ_CACHING |
                                             SMB2_LEASE_HANDLE_CACHING |
                                             SMB2_LEASE_WRITE_CACHING);
    ASSERT_EQ(c.size(), 76u);
    EXPECT_EQ(le32_at(c, 0), 0u);                            // Next
    EXPECT_EQ(le16_at(c, 4), 16);                            // NameOffset
    EXPECT_EQ(le16_at(c, 6), 4);                             // NameLength
    EXPECT_EQ(le16_at(c, 8), 0);                             // Reserved
    EXPECT_EQ(le16_at(c, 10), 24);                           // DataOffset
    EXPECT_EQ(le32_at(c, 12), 52u);                          // DataLength
    EXPECT_EQ(0, std::memcmp(&c[16], "RqLs", 4));            // Name
    EXPECT_EQ(le32_at(c, 20), 0u);                           // padding
    EXPECT_EQ(0, std::memcmp(&c[24], kLeaseKey.data(), 16)); // LeaseKey
    EXPECT_EQ(le32_at(c, 40), 7u);                           // LeaseState
    EXPECT_EQ(le32_at(c, 44), 0u);                           // LeaseFlags
    EXPECT_EQ(le64_at(c, 48), 0u);                           // LeaseDuration
    for (size_t i = 56; i < 72; i++)                         // ParentLeaseKey
        EXPECT_EQ(c[i], 0) << i;
    EXPECT_EQ(le16_at(c, 72), 0); // Epoch
    EXPECT_EQ(le16_at(c, 74), 0); // Reserved
}

TEST(ClientLeaseContext, ChainPadsAndLinks)
{
    auto one = lease_context_v2(kLeaseKey, SMB2_LEASE_READ_CACHING);
    auto chain = chain_create_contexts({one, one});
    ASSERT_EQ(chain.size(), 80u + 76);
    EXPECT_EQ(le32_at(chain, 0), 80u); // Next of the first
    EXPECT_EQ(le32_at(chain, 76), 0u); // its padding
    EXPECT_EQ(le32_at(chain, 80), 0u); // Next of the last
    EXPECT_EQ(std::vector<uint8_t>(chain.begin() + 80, chain.end()), one);
}

// A CREATE response (Samba's for an existing file), then @contexts at the
// first 8-byte boundary after the fixed body.
std::vector<uint8_t>
CreateResponseBytes(const std::vector<uint8_t> &contexts = {})
{
    Bytes w = ResponseHeader(SMB2_CREATE);
    w.le16(89);                         // StructureSize
    w.u8(SMB2_OPLOCK_LEVEL_LEASE);      // OplockLevel
    w.u8(0);                            // Flags
    w.le32(1);                          // CreateAction: FILE_OPENED
    w.le64(0x01d9000000000001);         // CreationTime
    w.le64(0x01d9000000000002);         // LastAccessTime
    w.le64(0x01d9000000000003);         // LastWriteTime
    w.le64(0x01d9000000000004);         // ChangeTime
    w.le64(0x100000);                   // AllocationSize
    w.le64(0xfffff);                    // EndofFile
    w.le32(0x80);                       // FileAttributes
    w.le32(0);                          // Reserved2
    w.raw(kFileId);                     // FileId
    w.le32(contexts.empty() ? 0 : 152); // CreateContextsOffset
    w.le32(uint32_t(contexts.size()));  // CreateContextsLength
    w.raw(contexts);
    return w.b;
}

constexpr size_t kContextsAt = 64 + 88;

// A maximal access response context (2.2.14.2.5): "MxAc", 8 bytes.
Bytes MxAcContext(uint32_t next)
{
    Bytes w;
    w.le32(next);                      // Next
    w.le16(16).le16(4);                // NameOffset, NameLength
    w.le16(0);                         // Reserved
    w.le16(24).le32(8);                // DataOffset, DataLength
    w.u8('M').u8('x').u8('A').u8('c'); // Name
    w.zeros(4);                        // padding
    w.le32(0).le32(0x001f01ff);        // QueryStatus, MaximalAccess
    return w;
}

TEST(ClientCreateResponse, ParsesWithoutContexts)
{
    auto r = parse_create_response(CreateResponseBytes());
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->hdr.message_id, kMessage);
    EXPECT_EQ(r->oplock_level, 0xff);
    EXPECT_EQ(r->create_action, 1u);
    EXPECT_EQ(r->end_of_file, 0xfffffu);
    EXPECT_EQ(r->file_id, kFileId);
    EXPECT_FALSE(r->lease_state.has_value());
}

TEST(ClientCreateResponse, LeaseV2StateRoundTrips)
{
    // the server's lease context has the request's layout
    auto r = parse_create_response(CreateResponseBytes(lease_context_v2(
        kLeaseKey, SMB2_LEASE_READ_CACHING | SMB2_LEASE_HANDLE_CACHING)));
    ASSERT_TRUE(r.ok()) << r.error().message;
    ASSERT_TRUE(r->lease_state.has_value());
    EXPECT_EQ(*r->lease_state, 3u);
}

TEST(ClientDurableContext, V2FieldByField)
{
    auto c = durable_context_v2(kFileId, 60000);
    ASSERT_EQ(c.size(), 56u);
    EXPECT_EQ(le32_at(c, 0), 0u);                          // Next
    EXPECT_EQ(le16_at(c, 4), 16);                          // NameOffset
    EXPECT_EQ(le16_at(c, 6), 4);                           // NameLength
    EXPECT_EQ(le16_at(c, 10), 24);                         // DataOffset
    EXPECT_EQ(le32_at(c, 12), 32u);                        // DataLength
    EXPECT_EQ(0, std::memcmp(&c[16], "DH2Q", 4));          // Name
    EXPECT_EQ(le32_at(c, 24), 60000u);                     // Timeout
    EXPECT_EQ(le32_at(c, 28), 0u);                         // Flags
    EXPECT_EQ(le64_at(c, 32), 0u);                         // Reserved
    EXPECT_EQ(0, std::memcmp(&c[40], kFileId.data(), 16)); // CreateGuid
}

// A "DH2Q" response context (2.2.14.2.12) of @data_len bytes.
std::vector<uint8_t> DurableResponseContext(uint32_t data_len)
{
    Bytes w;
    w.le32(0).le16(16).le16(4).le16(0).le16(24).le32(data_len);
    w.u8('D').u8('H').u8('2').u8('Q').zeros(4);
    w.le32(60000).le32(0); // Timeout, Flags
    return w.b;
}

TEST(ClientCreateResponse, DurableV2Timeout)
{
    auto r = parse_create_response(CreateResponseBytes(chain_create_contexts(
        {lease_context_v2(kLeaseKey, 7), DurableResponseContext(8)})));
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->lease_state, 7u);
    EXPECT_EQ(r->durable_timeout, 60000u);
    r = parse_create_response(CreateResponseBytes(DurableResponseContext(4)));
    ExpectError(r, Errc::protocol, "DH2Q) with DataLength 4");
}

TEST(ClientCreateResponse, LeaseV1State)
{
    Bytes w;
    w.le32(0);                                  // Next
    w.le16(16).le16(4);                         // NameOffset, NameLength
    w.le16(0);                                  // Reserved
    w.le16(24).le32(32);                        // DataOffset, DataLength
    w.u8('R').u8('q').u8('L').u8('s').zeros(4); // Name, padding
    w.raw(kLeaseKey);                           // LeaseKey
    w.le32(1);                                  // LeaseState: R
    w.le32(0);                                  // LeaseFlags
    w.le64(0);                                  // LeaseDuration
    auto r = parse_create_response(CreateResponseBytes(w.b));
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->lease_state, 1u);
}

TEST(ClientCreateResponse, LeaseAfterAnotherContext)
{
    Bytes w = MxAcContext(32); // 24 + 8 bytes
    w.raw(lease_context_v2(kLeaseKey, SMB2_LEASE_READ_CACHING));
    auto r = parse_create_response(CreateResponseBytes(w.b));
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->lease_state, 1u);
    // only MxAc: no lease
    r = parse_create_response(CreateResponseBytes(MxAcContext(0).b));
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_FALSE(r->lease_state.has_value());
}

TEST(ClientCreateResponse, HostileRefused)
{
    ExpectCommonRefusals(
        CreateResponseBytes(), SMB2_CREATE,
        [](const std::vector<uint8_t> &b) { return parse_create_response(b); });
}

TEST(ClientCreateResponse, ContextsOutsideThePduRefused)
{
    auto good = CreateResponseBytes(
        lease_context_v2(kLeaseKey, SMB2_LEASE_READ_CACHING));
    ASSERT_EQ(good.size(), kContextsAt + 76);
    // one byte past the end
    auto b = good;
    smbd_put_le32(&b[64 + 84], 77);
    ExpectError(parse_create_response(b), Errc::protocol,
                "CreateContextsOffset 152 + CreateContextsLength 77 is "
                "outside bytes 152 to 228");
    // offset past the end
    b = good;
    smbd_put_le32(&b[64 + 80], 232);
    ExpectError(parse_create_response(b), Errc::protocol,
                "CreateContextsOffset 232");
    // both at their largest: the sum must not wrap
    b = good;
    smbd_put_le32(&b[64 + 80], 0xffffffffu);
    smbd_put_le32(&b[64 + 84], 0xffffffffu);
    ExpectError(parse_create_response(b), Errc::protocol,
                "CreateContextsOffset 4294967295 + CreateContextsLength "
                "4294967295");
    // inside the fixed body
    b = good;
    smbd_put_le32(&b[64 + 80], 64);
    ExpectError(parse_create_response(b), Errc::protocol,
                "CreateContextsOffset 64");
}

// @mutate changes the lease context (at byte 0 of its bytes) of a valid
// response; the parser must refuse with @text.
template <class Mutate>
void ExpectContextRefused(Mutate mutate, std::string_view text)
{
    auto ctx = lease_context_v2(kLeaseKey, SMB2_LEASE_READ_CACHING);
    mutate(ctx);
    ExpectError(parse_create_response(CreateResponseBytes(ctx)), Errc::protocol,
                text);
}

TEST(ClientCreateResponse, HostileContextsRefused)
{
    // a chain shorter than one context header
    ExpectContextRefused([](auto &c) { c.resize(8); },
                         "16-byte header runs past the chain");
    // Next not a multiple of 8, below a header, past the chain, largest
    ExpectContextRefused([](auto &c) { smbd_put_le32(&c[0], 20); },
                         "Next 20 is not a multiple of 8");
    ExpectContextRefused([](auto &c) { smbd_put_le32(&c[0], 8); },
                         "Next 8 is not a multiple of 8 of at least 16");
    ExpectContextRefused([](auto &c) { smbd_put_le32(&c[0], 80); },
                         "Next 80 points past the chain's 76 remaining bytes");
    ExpectContextRefused([](auto &c) { smbd_put_le32(&c[0], 0xfffffff8u); },
                         "Next 4294967288 points past");
    // name outside the context: past its end, inside the header, largest
    ExpectContextRefused(
        [](auto &c) { smbd_put_le16(&c[4], 74); },
        "NameOffset 74 + NameLength 4 is not within bytes 16 to 76");
    ExpectContextRefused([](auto &c) { smbd_put_le16(&c[4], 8); },
                         "NameOffset 8");
    ExpectContextRefused(
        [](auto &c) {
            smbd_put_le16(&c[4], 0xffff);
            smbd_put_le16(&c[6], 0xffff);
        },
        "NameOffset 65535 + NameLength 65535");
    // data outside the context, with the largest values
    ExpectContextRefused(
        [](auto &c) { smbd_put_le32(&c[12], 53); },
        "DataOffset 24 + DataLength 53 is not within bytes 16 to 76");
    ExpectContextRefused(
        [](auto &c) {
            smbd_put_le16(&c[10], 0xffff);
            smbd_put_le32(&c[12], 0xffffffffu);
        },
        "DataOffset 65535 + DataLength 4294967295");
    ExpectContextRefused([](auto &c) { smbd_put_le16(&c[10], 0); },
                         "DataOffset 0");
    // a lease of neither size
    ExpectContextRefused([](auto &c) { smbd_put_le32(&c[12], 40); },
                         "RqLs) with DataLength 40, not 32 or 52");
}

TEST(ClientCreateResponse, HostileSecondContextRefused)
{
    // the first context links to a second whose data runs past the chain
    Bytes w = MxAcContext(32);
    auto lease = lease_context_v2(kLeaseKey, SMB2_LEASE_READ_CACHING);
    smbd_put_le32(&lease[12], 60);
    w.raw(lease);
    ExpectError(parse_create_response(CreateResponseBytes(w.b)), Errc::protocol,
                "context 1 (byte 32 of the 108-byte");
}

// --- CLOSE (2.2.15, 2.2.16) ---------------------------------------------

TEST(ClientClose, BuiltFieldByField)
{
    auto b = build_close(request_header(), kFileId);
    ExpectRequestHeader(b, 0x0006);
    ASSERT_EQ(b.size(), 64u + 24);
    EXPECT_EQ(le16_at(b, 64 + 0), 24);                         // StructureSize
    EXPECT_EQ(le16_at(b, 64 + 2), 0);                          // Flags
    EXPECT_EQ(le32_at(b, 64 + 4), 0u);                         // Reserved
    EXPECT_EQ(0, std::memcmp(&b[64 + 8], kFileId.data(), 16)); // FileId
}

std::vector<uint8_t> CloseResponseBytes()
{
    Bytes w = ResponseHeader(SMB2_CLOSE);
    w.le16(60);     // StructureSize
    w.le16(1);      // Flags: POSTQUERY_ATTRIB
    w.le32(0);      // Reserved
    w.le64(1);      // CreationTime
    w.le64(2);      // LastAccessTime
    w.le64(3);      // LastWriteTime
    w.le64(4);      // ChangeTime
    w.le64(0x2000); // AllocationSize
    w.le64(0x1234); // EndofFile
    w.le32(0x20);   // FileAttributes: ARCHIVE
    return w.b;
}

TEST(ClientCloseResponse, Parses)
{
    auto r = parse_close_response(CloseResponseBytes());
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->flags, 1);
    EXPECT_EQ(r->allocation_size, 0x2000u);
    EXPECT_EQ(r->end_of_file, 0x1234u);
    EXPECT_EQ(r->file_attributes, 0x20u);
}

TEST(ClientCloseResponse, HostileRefused)
{
    ExpectCommonRefusals(
        CloseResponseBytes(), SMB2_CLOSE,
        [](const std::vector<uint8_t> &b) { return parse_close_response(b); });
}

// --- LOGOFF, TREE_DISCONNECT (2.2.7, 2.2.8, 2.2.11, 2.2.12) -------------

TEST(ClientLogoffTreeDisconnect, BuiltFieldByField)
{
    for (auto [b, command] :
         {std::pair{build_logoff(request_header()), uint16_t(0x0002)},
          std::pair{build_tree_disconnect(request_header()), uint16_t(0x0004)},
          std::pair{build_echo(request_header()), uint16_t(0x000D)}}) {
        SCOPED_TRACE(command);
        ExpectRequestHeader(b, command);
        ASSERT_EQ(b.size(), 64u + 4);
        EXPECT_EQ(le16_at(b, 64 + 0), 4); // StructureSize
        EXPECT_EQ(le16_at(b, 64 + 2), 0); // Reserved
    }
}

std::vector<uint8_t> EmptyResponseBytes(uint16_t command)
{
    Bytes w = ResponseHeader(command);
    w.le16(4); // StructureSize
    w.le16(0); // Reserved
    return w.b;
}

TEST(ClientLogoffTreeDisconnect, ResponsesParse)
{
    for (uint16_t command : {SMB2_LOGOFF, SMB2_TREE_DISCONNECT}) {
        auto r = parse_empty_response(EmptyResponseBytes(command), command);
        ASSERT_TRUE(r.ok()) << r.error().message;
        EXPECT_EQ(r->command, command);
        EXPECT_EQ(r->session_id, kSession);
    }
    ExpectError(parse_empty_response(EmptyResponseBytes(SMB2_LOGOFF),
                                     SMB2_TREE_DISCONNECT),
                Errc::protocol, "got LOGOFF (0x0002)");
}

TEST(ClientLogoffTreeDisconnect, HostileRefused)
{
    for (uint16_t command : {SMB2_LOGOFF, SMB2_TREE_DISCONNECT})
        ExpectCommonRefusals(EmptyResponseBytes(command), command,
                             [command](const std::vector<uint8_t> &b) {
                                 return parse_empty_response(b, command);
                             });
}

// --- lease breaks (2.2.23.2, 2.2.24.2, 2.2.25.2) ------------------------

// A Lease Break Notification as a server sends it: MessageId all ones,
// SessionId and TreeId 0, unsigned.
std::vector<uint8_t> LeaseBreakBytes()
{
    Bytes w;
    w.u8(0xfe).u8('S').u8('M').u8('B').le16(64).le16(0); // CreditCharge 0
    w.le32(NT_STATUS_SUCCESS).le16(0x0012).le16(0);
    w.le32(SMB2_FLAGS_SERVER_TO_REDIR).le32(0).le64(UINT64_MAX);
    w.le32(0).le32(0).le64(0).zeros(16);
    w.le16(44); // StructureSize
    w.le16(3);  // NewEpoch
    w.le32(1);  // Flags: ACK_REQUIRED
    w.raw(kLeaseKey);
    w.le32(7); // CurrentLeaseState: RWH
    w.le32(3); // NewLeaseState: RH
    w.le32(0); // BreakReason
    w.le32(0); // AccessMaskHint
    w.le32(0); // ShareMaskHint
    return w.b;
}

TEST(ClientLeaseBreak, NotificationParses)
{
    auto r = parse_lease_break(LeaseBreakBytes());
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->new_epoch, 3);
    EXPECT_EQ(r->flags, SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED);
    EXPECT_EQ(r->key, kLeaseKey);
    EXPECT_EQ(r->current_state, 7u);
    EXPECT_EQ(r->new_state, 3u);
}

TEST(ClientLeaseBreak, HostileNotificationRefused)
{
    ExpectCommonRefusals(
        LeaseBreakBytes(), SMB2_OPLOCK_BREAK,
        [](const std::vector<uint8_t> &b) { return parse_lease_break(b); });
    // an oplock break's StructureSize (2.2.23.1)
    auto b = LeaseBreakBytes();
    smbd_put_le16(&b[64], 24);
    ExpectError(parse_lease_break(b), Errc::protocol, "StructureSize is 24");
    // a response to a request, not a notification
    b = LeaseBreakBytes();
    smbd_put_le64(&b[24], 9);
    ExpectError(parse_lease_break(b), Errc::protocol, "MessageId 9");
}

TEST(ClientLeaseBreak, AckBuiltFieldByField)
{
    auto b = build_lease_break_ack(request_header(), kLeaseKey, 3);
    ExpectRequestHeader(b, 0x0012);
    ASSERT_EQ(b.size(), 64u + 36);
    EXPECT_EQ(le16_at(b, 64 + 0), 36); // StructureSize
    EXPECT_EQ(le16_at(b, 64 + 2), 0);  // Reserved
    EXPECT_EQ(le32_at(b, 64 + 4), 0u); // Flags
    EXPECT_EQ(0, std::memcmp(&b[64 + 8], kLeaseKey.data(), 16));
    EXPECT_EQ(le32_at(b, 64 + 24), 3u); // LeaseState
    EXPECT_EQ(le64_at(b, 64 + 28), 0u); // LeaseDuration
}

std::vector<uint8_t> LeaseBreakResponseBytes()
{
    Bytes w = ResponseHeader(SMB2_OPLOCK_BREAK);
    w.le16(36).le16(0).le32(0); // StructureSize, Reserved, Flags
    w.raw(kLeaseKey);
    w.le32(3).le64(0); // LeaseState, LeaseDuration
    return w.b;
}

TEST(ClientLeaseBreak, ResponseParses)
{
    auto r = parse_lease_break_response(LeaseBreakResponseBytes());
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->key, kLeaseKey);
    EXPECT_EQ(r->state, 3u);
    ExpectCommonRefusals(LeaseBreakResponseBytes(), SMB2_OPLOCK_BREAK,
                         [](const std::vector<uint8_t> &b) {
                             return parse_lease_break_response(b);
                         });
}

// --- IOCTL FSCTL_QUERY_NETWORK_INTERFACE_INFO (2.2.31, 2.2.32.5) --------

TEST(ClientQueryInterfaces, BuiltFieldByField)
{
    auto b = build_query_interfaces(request_header(), 0x10000);
    ExpectRequestHeader(b, 0x000B);
    ASSERT_EQ(b.size(), 64u + 56);
    EXPECT_EQ(le16_at(b, 64 + 0), 57);          // StructureSize
    EXPECT_EQ(le32_at(b, 64 + 4), 0x001401FCu); // CtlCode
    for (size_t i = 0; i < 16; i++)             // FileId: none
        EXPECT_EQ(b[64 + 8 + i], 0xff) << i;
    EXPECT_EQ(le32_at(b, 64 + 24), 0u);       // InputOffset
    EXPECT_EQ(le32_at(b, 64 + 28), 0u);       // InputCount
    EXPECT_EQ(le32_at(b, 64 + 32), 0u);       // MaxInputResponse
    EXPECT_EQ(le32_at(b, 64 + 36), 0u);       // OutputOffset
    EXPECT_EQ(le32_at(b, 64 + 40), 0u);       // OutputCount
    EXPECT_EQ(le32_at(b, 64 + 44), 0x10000u); // MaxOutputResponse
    EXPECT_EQ(le32_at(b, 64 + 48), 1u);       // Flags: IS_FSCTL
}

// Samba's answer for an IPv4 interface (RSS, RDMA) and an IPv6 one (RSS).
std::vector<uint8_t> InterfacesResponseBytes()
{
    Bytes w = ResponseHeader(SMB2_IOCTL);
    w.le16(49);         // StructureSize
    w.le16(0);          // Reserved
    w.le32(0x001401FC); // CtlCode
    w.zeros(16);        // FileId
    w.le32(112);        // InputOffset
    w.le32(0);          // InputCount
    w.le32(112);        // OutputOffset
    w.le32(2 * 152);    // OutputCount
    w.le32(0);          // Flags
    w.le32(0);          // Reserved2
    w.le32(152);        // Next
    w.le32(3);          // IfIndex
    w.le32(3);          // Capability: RSS, RDMA
    w.le32(0);          // Reserved
    w.le64(10000000000ull);
    w.le16(0x0002).le16(0); // AF_INET, Port
    w.u8(192).u8(0).u8(2).u8(1).zeros(120);
    w.le32(0); // Next: the last
    w.le32(4); // IfIndex
    w.le32(1); // Capability: RSS
    w.le32(0); // Reserved
    w.le64(1000000000ull);
    w.le16(0x0017).le16(0).le32(0); // AF_INET6, Port, FlowInfo
    w.u8(0x20).u8(0x01).u8(0x0d).u8(0xb8).zeros(11).u8(1).zeros(4).zeros(100);
    return w.b;
}

TEST(ClientQueryInterfaces, ResponseParses)
{
    auto r = parse_query_interfaces_response(InterfacesResponseBytes());
    ASSERT_TRUE(r.ok()) << r.error().message;
    ASSERT_EQ(r->size(), 2u);
    EXPECT_EQ((*r)[0].if_index, 3u);
    EXPECT_EQ((*r)[0].capability, IFACE_RSS_CAPABLE | IFACE_RDMA_CAPABLE);
    EXPECT_EQ((*r)[0].link_speed, 10000000000ull);
    EXPECT_EQ((*r)[0].address, "192.0.2.1");
    EXPECT_EQ((*r)[1].capability, IFACE_RSS_CAPABLE);
    EXPECT_EQ((*r)[1].address, "2001:db8::1");
}

TEST(ClientQueryInterfaces, HostileRefused)
{
    ExpectCommonRefusals(InterfacesResponseBytes(), SMB2_IOCTL,
                         [](const std::vector<uint8_t> &b) {
                             return parse_query_interfaces_response(b);
                         });
    const auto valid = InterfacesResponseBytes();
    auto b = valid;
    smbd_put_le32(&b[64 + 4], 0x00140204); // another FSCTL's answer
    ExpectError(parse_query_interfaces_response(b), Errc::protocol, "CtlCode");
    b = valid;
    smbd_put_le32(&b[64 + 36], 2 * 152 + 1); // output past the message
    ExpectError(parse_query_interfaces_response(b), Errc::protocol, "outside");
    b = valid;
    smbd_put_le32(&b[64 + 32], 8); // output over the header
    ExpectError(parse_query_interfaces_response(b), Errc::protocol, "outside");
    b = valid;
    smbd_put_le32(&b[64 + 36], 152 + 100); // second entry cut short
    b.resize(112 + 152 + 100);
    ExpectError(parse_query_interfaces_response(b), Errc::protocol,
                "runs past");
    b = valid;
    smbd_put_le32(&b[112], 100); // Next inside the entry
    ExpectError(parse_query_interfaces_response(b), Errc::protocol, "inside");
    b = valid;
    smbd_put_le32(&b[112], 4 * 152); // Next past the output
    ExpectError(parse_query_interfaces_response(b), Errc::protocol,
                "runs past");
    b = valid;
    smbd_put_le16(&b[112 + 24], 7); // an unknown family
    ExpectError(parse_query_interfaces_response(b), Errc::protocol, "family");
}

// --- CANCEL (2.2.30) and the async header (2.2.1.1) ---------------------

TEST(ClientChangeNotify, FieldsAtTheirOffsets)
{
    smb2_hdr h = request_header();
    std::array<uint8_t, 16> dir{};
    for (size_t i = 0; i < dir.size(); i++)
        dir[i] = uint8_t(0xD0 + i);
    auto b = build_change_notify(h, dir, 0x3, 4096);
    ExpectRequestHeader(b, 0x000F, h);
    ASSERT_EQ(b.size(), 64u + 32);
    EXPECT_EQ(le16_at(b, 64 + 0), 32);    // StructureSize
    EXPECT_EQ(le16_at(b, 64 + 2), 0);     // Flags: not the whole tree
    EXPECT_EQ(le32_at(b, 64 + 4), 4096u); // OutputBufferLength
    EXPECT_TRUE(std::equal(dir.begin(), dir.end(), b.begin() + 64 + 8));
    EXPECT_EQ(le32_at(b, 64 + 24), 3u); // CompletionFilter
    EXPECT_EQ(le32_at(b, 64 + 28), 0u); // Reserved
}

TEST(ClientCancel, SyncCarriesTheMessageId)
{
    smb2_hdr h = request_header();
    h.message_id = 42;
    h.credit_charge = 0;
    h.credits = 0;
    auto b = build_cancel(h);
    ExpectRequestHeader(b, 0x000C, h);
    ASSERT_EQ(b.size(), 64u + 4);
    EXPECT_EQ(le16_at(b, 64 + 0), 4); // StructureSize
    EXPECT_EQ(le16_at(b, 64 + 2), 0); // Reserved
}

TEST(ClientCancel, AsyncCarriesTheAsyncId)
{
    smb2_hdr h = request_header();
    h.flags = SMB2_FLAGS_ASYNC_COMMAND;
    smb2_set_async_id(h, kAsync);
    EXPECT_EQ(smb2_async_id(h), kAsync);
    auto b = build_cancel(h);
    EXPECT_EQ(le32_at(b, 16), SMB2_FLAGS_ASYNC_COMMAND); // Flags
    EXPECT_EQ(le64_at(b, 32), kAsync);                   // AsyncId
    EXPECT_EQ(smb2_async_id(std::span<const uint8_t>(b)), kAsync);
    EXPECT_EQ(le64_at(b, 40), kSession); // SessionId untouched

    // the same on the PDU of a sync-built CANCEL
    auto s = build_cancel(request_header());
    smb2_set_async_id(std::span<uint8_t>(s), kAsync);
    EXPECT_EQ(le64_at(s, 32), kAsync);
    EXPECT_EQ(le64_at(s, 24), kMessage); // MessageId untouched
    EXPECT_EQ(le64_at(s, 40), kSession);
}

TEST(ClientCancel, ShortSpansLeftAlone)
{
    std::vector<uint8_t> b(63, 0x5a);
    smb2_set_async_id(std::span<uint8_t>(b), kAsync);
    EXPECT_EQ(b, std::vector<uint8_t>(63, 0x5a));
    EXPECT_EQ(smb2_async_id(std::span<const uint8_t>(b)), 0u);
}

// --- compound chains (3.2.4.1.4, 3.3.5.2.7) -----------------------------

// A request of @size bytes: a header with @id as MessageId and a signature
// of 0xEE, then a body of @id bytes.
std::vector<uint8_t> Element(uint64_t id, size_t size)
{
    std::vector<uint8_t> b(size, uint8_t(id));
    smb2_hdr h = request_header();
    h.command = SMB2_IOCTL;
    h.message_id = id;
    std::memset(h.signature, 0xee, sizeof(h.signature));
    smb2_hdr_build(&h, b.data());
    return b;
}

TEST(ClientCompound, RelatedChainPaddedAndLinked)
{
    auto e0 = Element(1, 69), e1 = Element(2, 75), e2 = Element(3, 67);
    auto chain = build_compound({e0, e1, e2}, true);
    ASSERT_EQ(chain.size(), 72u + 80 + 67);

    EXPECT_EQ(le32_at(chain, 20), 72u);      // NextCommand of element 0
    EXPECT_EQ(le32_at(chain, 72 + 20), 80u); // of element 1
    EXPECT_EQ(le32_at(chain, 152 + 20), 0u); // of the last
    EXPECT_EQ(le32_at(chain, 16) & SMB2_FLAGS_RELATED_OPERATIONS, 0u);
    EXPECT_EQ(le32_at(chain, 72 + 16), SMB2_FLAGS_RELATED_OPERATIONS);
    EXPECT_EQ(le32_at(chain, 152 + 16), SMB2_FLAGS_RELATED_OPERATIONS);
    for (size_t i : {69, 70, 71})
        EXPECT_EQ(chain[i], 0) << "padding at " << i;
    for (size_t i = 72 + 75; i < 152; i++)
        EXPECT_EQ(chain[i], 0) << "padding at " << i;
    // everything else as given, signatures included
    for (auto [at, e] : {std::pair{size_t(0), &e0}, std::pair{size_t(72), &e1},
                         std::pair{size_t(152), &e2}}) {
        for (size_t i = 0; i < e->size(); i++) {
            if (i >= 16 && i < 24)
                continue; // Flags, NextCommand
            EXPECT_EQ(chain[at + i], (*e)[i]) << "byte " << at + i;
        }
    }

    auto split = split_compound(chain);
    ASSERT_TRUE(split.ok()) << split.error().message;
    ASSERT_EQ(split->size(), 3u);
    EXPECT_EQ((*split)[0].data(), chain.data());
    EXPECT_EQ((*split)[0].size(), 72u);
    EXPECT_EQ((*split)[1].data(), chain.data() + 72);
    EXPECT_EQ((*split)[1].size(), 80u);
    EXPECT_EQ((*split)[2].data(), chain.data() + 152);
    EXPECT_EQ((*split)[2].size(), 67u);

    // the caller signs each element, padding included
    auto elements = compound_elements(chain);
    ASSERT_EQ(elements.size(), 3u);
    for (size_t i = 0; i < 3; i++) {
        EXPECT_EQ(elements[i].data(), (*split)[i].data());
        EXPECT_EQ(elements[i].size(), (*split)[i].size());
    }
}

TEST(ClientCompound, UnrelatedChainHasNoRelatedFlag)
{
    auto chain = build_compound({Element(1, 64), Element(2, 99)}, false);
    ASSERT_EQ(chain.size(), 64u + 99);
    EXPECT_EQ(le32_at(chain, 20), 64u); // already a multiple of 8
    EXPECT_EQ(le32_at(chain, 16), 0u);
    EXPECT_EQ(le32_at(chain, 64 + 16), 0u);
    auto split = split_compound(chain);
    ASSERT_TRUE(split.ok());
    EXPECT_EQ(split->size(), 2u);
}

TEST(ClientCompound, OneElementIsItself)
{
    auto e = Element(1, 67);
    EXPECT_EQ(build_compound({e}, true), e);
    auto split = split_compound(e);
    ASSERT_TRUE(split.ok());
    ASSERT_EQ(split->size(), 1u);
    EXPECT_EQ((*split)[0].size(), 67u);
}

TEST(ClientCompound, BuildersChainAndSplitBack)
{
    smb2_hdr h = request_header();
    auto tc = build_tree_connect(h, "\\\\s\\sh"); // 72 + 12 bytes
    ASSERT_TRUE(tc.ok());
    CreateRequest c;
    c.hdr = h;
    c.hdr.message_id = kMessage + 1;
    c.name = "a"; // 0x78 + 2
    c.desired_access = GENERIC_READ;
    auto cr = build_create(c);
    ASSERT_TRUE(cr.ok());
    smb2_hdr last = h;
    last.message_id = kMessage + 2;
    auto chain = build_compound({*tc, *cr, build_close(last, kFileId)}, true);
    auto split = split_compound(chain);
    ASSERT_TRUE(split.ok()) << split.error().message;
    ASSERT_EQ(split->size(), 3u);
    uint16_t commands[] = {SMB2_TREE_CONNECT, SMB2_CREATE, SMB2_CLOSE};
    for (size_t i = 0; i < 3; i++) {
        smb2_hdr p{};
        const auto &s = (*split)[i];
        ASSERT_PROTO_ERR(smb2_hdr_parse(s.data(), s.size(), &p), SMBD_E_OK);
        EXPECT_EQ(p.command, commands[i]);
        EXPECT_EQ(p.message_id, kMessage + i);
    }
    EXPECT_EQ((*split)[0].size(), 88u);
    EXPECT_EQ((*split)[1].size(), 128u);
    EXPECT_EQ((*split)[2].size(), 88u);
}

// A chain of two: element 0 of 72 bytes, then element 1 of 67.
std::vector<uint8_t> TwoChain()
{
    return build_compound({Element(1, 69), Element(2, 67)}, true);
}

TEST(ClientCompound, HostileNextCommandRefused)
{
    auto bad = [](uint32_t next) {
        auto chain = TwoChain();
        smbd_put_le32(&chain[20], next);
        return split_compound(chain);
    };
    ExpectError(bad(76), Errc::protocol,
                "NextCommand 76 is not a multiple of 8");
    ExpectError(bad(1), Errc::protocol, "NextCommand 1 is not a multiple of 8");
    ExpectError(bad(56), Errc::protocol,
                "NextCommand 56 is shorter than its header");
    ExpectError(bad(144), Errc::protocol,
                "NextCommand 144 points past the chain's 139 remaining bytes");
    ExpectError(bad(0xfffffff8u), Errc::protocol,
                "NextCommand 4294967288 points past");
    // the next element is left fewer bytes than a header
    ExpectError(bad(80), Errc::protocol,
                "compound element 1 at byte 80 of the 139-byte chain: 59 "
                "bytes, shorter than a header");
}

TEST(ClientCompound, HostileElementRefused)
{
    auto chain = TwoChain();
    chain[72] = 0xff; // element 1's protocol id
    ExpectError(split_compound(chain), Errc::protocol,
                "compound element 1 at byte 72");
    chain = TwoChain();
    smbd_put_le16(&chain[72 + 4], 65); // its header StructureSize
    ExpectError(split_compound(chain), Errc::protocol, "StructureSize");
    ExpectError(split_compound({}), Errc::protocol,
                "0 bytes, shorter than a header");
    // a NextCommand in the last element that points past the end
    chain = TwoChain();
    smbd_put_le32(&chain[72 + 20], 72);
    ExpectError(split_compound(chain), Errc::protocol,
                "compound element 1 at byte 72 of the 139-byte chain: "
                "NextCommand 72 points past the chain's 67 remaining bytes");
    // one that leaves a stub too short for a header after it
    smbd_put_le32(&chain[72 + 20], 64);
    ExpectError(split_compound(chain), Errc::protocol,
                "compound element 2 at byte 136 of the 139-byte chain: 3 "
                "bytes, shorter than a header");
}

TEST(ClientCompound, ElementsStopAtABadNextCommand)
{
    for (uint32_t next : {0u, 56u, 76u, 139u, 0xfffffff8u}) {
        auto chain = TwoChain();
        smbd_put_le32(&chain[20], next);
        auto e = compound_elements(chain);
        ASSERT_EQ(e.size(), 1u) << next;
        EXPECT_EQ(e[0].size(), chain.size());
    }
    std::vector<uint8_t> tiny(10);
    auto e = compound_elements(tiny);
    ASSERT_EQ(e.size(), 1u);
    EXPECT_EQ(e[0].size(), 10u);
    EXPECT_TRUE(compound_elements({}).empty());
}

} // namespace
