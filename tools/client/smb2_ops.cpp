// TREE_CONNECT, CREATE, CLOSE, LOGOFF, TREE_DISCONNECT, ECHO, CANCEL, lease
// breaks and compound chains; see smb2_ops.h.
#include "smb2_ops.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "ntlmssp.h"
#include "smb2_wire.h"

namespace smbd::client {

namespace {

// Body fields, from the end of the header (MS-SMB2 2.2.9-2.2.16).
constexpr size_t TREE_CONNECT_REQ_PATH_OFFSET = 4;
constexpr size_t TREE_CONNECT_REQ_PATH_LENGTH = 6;
constexpr size_t TREE_CONNECT_RESP_SHARE_TYPE = 2;
constexpr size_t TREE_CONNECT_RESP_SHARE_FLAGS = 4;
constexpr size_t TREE_CONNECT_RESP_CAPABILITIES = 8;
constexpr size_t TREE_CONNECT_RESP_MAXIMAL_ACCESS = 12;
constexpr size_t CREATE_REQ_OPLOCK_LEVEL = 3;
constexpr size_t CREATE_REQ_IMPERSONATION = 4;
constexpr size_t CREATE_REQ_DESIRED_ACCESS = 24;
constexpr size_t CREATE_REQ_FILE_ATTRIBUTES = 28;
constexpr size_t CREATE_REQ_SHARE_ACCESS = 32;
constexpr size_t CREATE_REQ_DISPOSITION = 36;
constexpr size_t CREATE_REQ_OPTIONS = 40;
constexpr size_t CREATE_REQ_NAME_OFFSET = 44;
constexpr size_t CREATE_REQ_NAME_LENGTH = 46;
constexpr size_t CREATE_REQ_CONTEXTS_OFFSET = 48;
constexpr size_t CREATE_REQ_CONTEXTS_LENGTH = 52;
constexpr size_t CREATE_RESP_OPLOCK_LEVEL = 2;
constexpr size_t CREATE_RESP_CREATE_ACTION = 4;
constexpr size_t CREATE_RESP_END_OF_FILE = 48;
constexpr size_t CREATE_RESP_FILE_ID = 64;
constexpr size_t CREATE_RESP_CONTEXTS_OFFSET = 80;
constexpr size_t CREATE_RESP_CONTEXTS_LENGTH = 84;
constexpr size_t CLOSE_FILE_ID = 8;
constexpr size_t CLOSE_RESP_FLAGS = 2;
constexpr size_t CLOSE_RESP_ALLOCATION_SIZE = 40;
constexpr size_t CLOSE_RESP_END_OF_FILE = 48;
constexpr size_t CLOSE_RESP_FILE_ATTRIBUTES = 56;
// Lease Break Notification (2.2.23.2), and Acknowledgment and Response
// (2.2.24.2, 2.2.25.2), which share a layout.
constexpr uint16_t LEASE_BREAK_SIZE = 44;
constexpr size_t LEASE_BREAK_NEW_EPOCH = 2;
constexpr size_t LEASE_BREAK_FLAGS = 4;
constexpr size_t LEASE_BREAK_KEY = 8;
constexpr size_t LEASE_BREAK_CURRENT_STATE = 24;
constexpr size_t LEASE_BREAK_NEW_STATE = 28;
constexpr uint16_t LEASE_ACK_SIZE = 36;
constexpr size_t LEASE_ACK_KEY = 8;
constexpr size_t LEASE_ACK_STATE = 24;
// The ERROR response (2.2.2): StructureSize 9, ErrorContextCount,
// Reserved, ByteCount, ErrorData.
constexpr size_t ERROR_RESP_FIXED = 8;
constexpr size_t ERROR_RESP_BYTE_COUNT = 4;
// A create context (2.2.13.2), from its start.
constexpr size_t CONTEXT_NEXT = 0;
constexpr size_t CONTEXT_NAME_OFFSET = 4;
constexpr size_t CONTEXT_NAME_LENGTH = 6;
constexpr size_t CONTEXT_DATA_OFFSET = 10;
constexpr size_t CONTEXT_DATA_LENGTH = 12;
// The lease contexts' data (2.2.13.2.8, 2.2.13.2.10), from its start.
constexpr size_t LEASE_KEY = 0;
constexpr size_t LEASE_STATE = 16;
constexpr char LEASE_CONTEXT_NAME[4] = {'R', 'q', 'L', 's'};
// The durable handle v2 contexts (2.2.13.2.11, 2.2.14.2.12): Timeout,
// Flags, Reserved (request only), CreateGuid (request only).
constexpr char DURABLE_V2_CONTEXT_NAME[4] = {'D', 'H', '2', 'Q'};
constexpr size_t DURABLE_V2_REQ_DATA_SIZE = 32;
constexpr size_t DURABLE_V2_RESP_DATA_SIZE = 8;
constexpr size_t DURABLE_V2_TIMEOUT = 0;
constexpr size_t DURABLE_V2_REQ_CREATE_GUID = 16;

// Where the Buffer field of a CREATE request starts: NameOffset 0x78.
constexpr uint16_t CREATE_REQ_BUFFER = SMB2_HDR_SIZE + CREATE_REQ_FIXED;

constexpr size_t align8(size_t n) { return (n + 7) & ~size_t(7); }

std::string hex16(uint16_t v)
{
    char buf[8];
    std::snprintf(buf, sizeof(buf), "0x%04x", v);
    return buf;
}

std::string num(uint64_t v) { return std::to_string(v); }

Error protocol_error(std::string what)
{
    return make_error(Errc::protocol, std::move(what));
}

const char *command_name(uint16_t command)
{
    switch (command) {
    case SMB2_NEGOTIATE:
        return "NEGOTIATE";
    case SMB2_SESSION_SETUP:
        return "SESSION_SETUP";
    case SMB2_LOGOFF:
        return "LOGOFF";
    case SMB2_TREE_CONNECT:
        return "TREE_CONNECT";
    case SMB2_TREE_DISCONNECT:
        return "TREE_DISCONNECT";
    case SMB2_CREATE:
        return "CREATE";
    case SMB2_CLOSE:
        return "CLOSE";
    case SMB2_READ:
        return "READ";
    case SMB2_WRITE:
        return "WRITE";
    case SMB2_IOCTL:
        return "IOCTL";
    case SMB2_CANCEL:
        return "CANCEL";
    case SMB2_ECHO:
        return "ECHO";
    case SMB2_CHANGE_NOTIFY:
        return "CHANGE_NOTIFY";
    case SMB2_OPLOCK_BREAK:
        return "OPLOCK_BREAK";
    }
    return nullptr;
}

// The header of a response to @command and its status: what
// smb2_check_status() says, with the decoded header.
Result<smb2_hdr> check_response(std::span<const uint8_t> pdu, uint32_t command)
{
    auto hdr = parse_smb2_response_header(pdu);
    if (!hdr)
        return hdr.error();
    if (hdr->command != command)
        return protocol_error(
            "expected a " +
            (command <= 0xffff ? smb2_command_text(uint16_t(command))
                               : "command " + num(command)) +
            " response, got " + smb2_command_text(hdr->command));
    if (hdr->status == NT_STATUS_SUCCESS)
        return hdr;

    std::string what = "the server answered " +
                       smb2_command_text(hdr->command) + " with " +
                       nt_status_text(hdr->status);
    if (pdu.size() < SMB2_HDR_SIZE + ERROR_RESP_FIXED)
        return protocol_error(what + " in a " + num(pdu.size()) +
                              "-byte message, shorter than an ERROR "
                              "response's header and 8-byte body");
    const uint8_t *body = &pdu[SMB2_HDR_SIZE];
    uint16_t size = smbd_get_le16(body);
    if (size != ERROR_RESP_FIXED + 1)
        return protocol_error(what +
                              ", but its ERROR body's StructureSize is " +
                              num(size) + ", not 9");
    uint32_t byte_count = smbd_get_le32(body + ERROR_RESP_BYTE_COUNT);
    if (uint64_t(SMB2_HDR_SIZE) + ERROR_RESP_FIXED + byte_count > pdu.size())
        return protocol_error(what + ", but its ERROR body's ByteCount " +
                              num(byte_count) + " runs past the " +
                              num(pdu.size()) + "-byte message");
    return make_error(Errc::smb2_status, what);
}

// A response's header, status and fixed body: at least @fixed bytes after
// the header, StructureSize @structure_size.
Result<smb2_hdr> check_body(std::span<const uint8_t> pdu, uint16_t command,
                            size_t fixed, uint16_t structure_size)
{
    auto hdr = check_response(pdu, command);
    if (!hdr)
        return hdr;
    std::string name = smb2_command_text(command);
    if (pdu.size() < SMB2_HDR_SIZE + fixed)
        return protocol_error(name + " response of " + num(pdu.size()) +
                              " bytes is shorter than its header and " +
                              num(fixed) + "-byte body");
    uint16_t size = smbd_get_le16(&pdu[SMB2_HDR_SIZE]);
    if (size != structure_size)
        return protocol_error(name + " response StructureSize is " + num(size) +
                              ", not " + num(structure_size));
    return hdr;
}

// A header for @command, the rest of the body zeros: StructureSize is the
// caller's to write.
std::vector<uint8_t> start_request(const smb2_hdr &hdr, uint16_t command,
                                   size_t body_size)
{
    std::vector<uint8_t> b(SMB2_HDR_SIZE + body_size, 0);
    smb2_hdr h = hdr;
    h.command = command;
    smb2_hdr_build(&h, b.data());
    return b;
}

std::vector<uint8_t> empty_request(const smb2_hdr &hdr, uint16_t command)
{
    auto b = start_request(hdr, command, EMPTY_BODY_SIZE);
    smbd_put_le16(&b[SMB2_HDR_SIZE], EMPTY_BODY_SIZE);
    return b;
}

Result<std::vector<uint8_t>> utf16(std::string_view s, const char *what)
{
    auto u = smb2sec::ntlm::utf16le(s);
    if (!u)
        return make_error(Errc::invalid_argument,
                          std::string(what) + " is not valid UTF-8");
    if (u->size() > 0xffff)
        return make_error(Errc::invalid_argument,
                          std::string(what) + " is " + num(u->size()) +
                              " bytes in UTF-16, more than a 16-bit "
                              "length can say");
    return std::move(*u);
}

// The create contexts of a CREATE response: @chain is the
// CreateContextsOffset/Length region, already inside the PDU.
Status parse_create_contexts(std::span<const uint8_t> chain, CreateResponse &r)
{
    size_t pos = 0;
    for (unsigned i = 0;; i++) {
        std::string ctx = "CREATE response context " + num(i) + " (byte " +
                          num(pos) + " of the " + num(chain.size()) +
                          "-byte CreateContexts)";
        size_t rest = chain.size() - pos;
        if (rest < CREATE_CONTEXT_HDR_SIZE)
            return protocol_error(ctx + ": its 16-byte header runs past the "
                                        "chain");
        const uint8_t *c = &chain[pos];
        uint32_t next = smbd_get_le32(c + CONTEXT_NEXT);
        uint16_t name_off = smbd_get_le16(c + CONTEXT_NAME_OFFSET);
        uint16_t name_len = smbd_get_le16(c + CONTEXT_NAME_LENGTH);
        uint16_t data_off = smbd_get_le16(c + CONTEXT_DATA_OFFSET);
        uint32_t data_len = smbd_get_le32(c + CONTEXT_DATA_LENGTH);
        if (next != 0) {
            if (next % 8 != 0 || next < CREATE_CONTEXT_HDR_SIZE)
                return protocol_error(ctx + ": Next " + num(next) +
                                      " is not a multiple of 8 of at least "
                                      "16");
            if (next >= rest)
                return protocol_error(ctx + ": Next " + num(next) +
                                      " points past the chain's " + num(rest) +
                                      " remaining bytes");
        }
        // the bytes this context may use: up to the next, or the rest
        uint64_t extent = next ? next : rest;
        if (name_off < CREATE_CONTEXT_HDR_SIZE ||
            uint64_t(name_off) + name_len > extent)
            return protocol_error(ctx + ": NameOffset " + num(name_off) +
                                  " + NameLength " + num(name_len) +
                                  " is not within bytes 16 to " + num(extent) +
                                  " of the context");
        if (data_len != 0 && (data_off < CREATE_CONTEXT_HDR_SIZE ||
                              uint64_t(data_off) + data_len > extent))
            return protocol_error(ctx + ": DataOffset " + num(data_off) +
                                  " + DataLength " + num(data_len) +
                                  " is not within bytes 16 to " + num(extent) +
                                  " of the context");
        if (name_len == sizeof(LEASE_CONTEXT_NAME) &&
            std::memcmp(c + name_off, LEASE_CONTEXT_NAME, name_len) == 0) {
            if (data_len != LEASE_V1_DATA_SIZE &&
                data_len != LEASE_V2_DATA_SIZE)
                return protocol_error(ctx +
                                      ": a lease (RqLs) with DataLength " +
                                      num(data_len) + ", not 32 or 52");
            r.lease_state = smbd_get_le32(c + data_off + LEASE_STATE);
        }
        if (name_len == sizeof(DURABLE_V2_CONTEXT_NAME) &&
            std::memcmp(c + name_off, DURABLE_V2_CONTEXT_NAME, name_len) == 0) {
            if (data_len != DURABLE_V2_RESP_DATA_SIZE)
                return protocol_error(ctx +
                                      ": a durable handle (DH2Q) with "
                                      "DataLength " +
                                      num(data_len) + ", not 8");
            r.durable_timeout =
                smbd_get_le32(c + data_off + DURABLE_V2_TIMEOUT);
        }
        if (next == 0)
            return {};
        pos += next;
    }
}

} // namespace

std::string smb2_command_text(uint16_t command)
{
    const char *name = command_name(command);
    return name ? std::string(name) + " (" + hex16(command) + ")"
                : hex16(command);
}

Status smb2_check_status(std::span<const uint8_t> pdu,
                         uint32_t expected_command)
{
    auto hdr = check_response(pdu, expected_command);
    if (!hdr)
        return hdr.error();
    return {};
}

bool is_interim(const smb2_hdr &hdr)
{
    return hdr.status == NT_STATUS_PENDING &&
           (hdr.flags & SMB2_FLAGS_ASYNC_COMMAND);
}

void smb2_set_async_id(std::span<uint8_t> pdu, uint64_t id)
{
    if (pdu.size() >= SMB2_HDR_SIZE)
        smbd_put_le64(&pdu[SMB2_HDR_PROCESS_ID], id);
}

uint64_t smb2_async_id(std::span<const uint8_t> pdu)
{
    return pdu.size() >= SMB2_HDR_SIZE
               ? smbd_get_le64(&pdu[SMB2_HDR_PROCESS_ID])
               : 0;
}

void smb2_set_async_id(smb2_hdr &hdr, uint64_t id)
{
    hdr.process_id = uint32_t(id);
    hdr.tree_id = uint32_t(id >> 32);
}

uint64_t smb2_async_id(const smb2_hdr &hdr)
{
    return uint64_t(hdr.process_id) | uint64_t(hdr.tree_id) << 32;
}

Result<std::vector<uint8_t>> build_tree_connect(const smb2_hdr &hdr,
                                                std::string_view unc)
{
    auto path = utf16(unc, "the share path");
    if (!path)
        return path.error();
    // an empty path still leaves the Buffer byte StructureSize 9 counts
    auto b = start_request(hdr, SMB2_TREE_CONNECT,
                           TREE_CONNECT_REQ_FIXED +
                               std::max<size_t>(path->size(), 1));
    uint8_t *body = &b[SMB2_HDR_SIZE];
    smbd_put_le16(body, TREE_CONNECT_REQ_FIXED + 1);
    // Flags/Reserved 0
    smbd_put_le16(body + TREE_CONNECT_REQ_PATH_OFFSET,
                  SMB2_HDR_SIZE + TREE_CONNECT_REQ_FIXED);
    smbd_put_le16(body + TREE_CONNECT_REQ_PATH_LENGTH, uint16_t(path->size()));
    std::copy(path->begin(), path->end(), body + TREE_CONNECT_REQ_FIXED);
    return b;
}

Result<TreeConnectResponse>
parse_tree_connect_response(std::span<const uint8_t> pdu)
{
    auto hdr = check_body(pdu, SMB2_TREE_CONNECT, TREE_CONNECT_RESP_SIZE,
                          TREE_CONNECT_RESP_SIZE);
    if (!hdr)
        return hdr.error();
    const uint8_t *body = &pdu[SMB2_HDR_SIZE];
    TreeConnectResponse r;
    r.hdr = *hdr;
    r.share_type = body[TREE_CONNECT_RESP_SHARE_TYPE];
    r.share_flags = smbd_get_le32(body + TREE_CONNECT_RESP_SHARE_FLAGS);
    r.capabilities = smbd_get_le32(body + TREE_CONNECT_RESP_CAPABILITIES);
    r.maximal_access = smbd_get_le32(body + TREE_CONNECT_RESP_MAXIMAL_ACCESS);
    return r;
}

Result<std::vector<uint8_t>> build_create(const CreateRequest &r)
{
    auto name = utf16(r.name, "the file name");
    if (!name)
        return name.error();
    if (r.contexts.size() > 0xffffffffu)
        return make_error(Errc::invalid_argument,
                          "create contexts of " + num(r.contexts.size()) +
                              " bytes, more than CreateContextsLength can "
                              "say");
    size_t contexts_offset =
        r.contexts.empty() ? 0 : CREATE_REQ_BUFFER + align8(name->size());
    size_t end = r.contexts.empty()
                     ? CREATE_REQ_BUFFER + std::max<size_t>(name->size(), 1)
                     : contexts_offset + r.contexts.size();
    auto b = start_request(r.hdr, SMB2_CREATE, end - SMB2_HDR_SIZE);
    uint8_t *body = &b[SMB2_HDR_SIZE];
    // SecurityFlags, SmbCreateFlags and Reserved 0
    smbd_put_le16(body, CREATE_REQ_FIXED + 1);
    body[CREATE_REQ_OPLOCK_LEVEL] = r.oplock_level;
    smbd_put_le32(body + CREATE_REQ_IMPERSONATION, r.impersonation);
    smbd_put_le32(body + CREATE_REQ_DESIRED_ACCESS, r.desired_access);
    smbd_put_le32(body + CREATE_REQ_FILE_ATTRIBUTES, r.file_attributes);
    smbd_put_le32(body + CREATE_REQ_SHARE_ACCESS, r.share_access);
    smbd_put_le32(body + CREATE_REQ_DISPOSITION, r.disposition);
    smbd_put_le32(body + CREATE_REQ_OPTIONS, r.options);
    smbd_put_le16(body + CREATE_REQ_NAME_OFFSET, CREATE_REQ_BUFFER);
    smbd_put_le16(body + CREATE_REQ_NAME_LENGTH, uint16_t(name->size()));
    smbd_put_le32(body + CREATE_REQ_CONTEXTS_OFFSET, uint32_t(contexts_offset));
    smbd_put_le32(body + CREATE_REQ_CONTEXTS_LENGTH,
                  uint32_t(r.contexts.size()));
    std::copy(name->begin(), name->end(), &b[CREATE_REQ_BUFFER]);
    std::copy(r.contexts.begin(), r.contexts.end(), b.data() + contexts_offset);
    return b;
}

namespace {

// A create context with a 4-byte @name and @data_size bytes of data, all
// zero: the header, the name, 4 bytes to align the data, the data. The
// data starts at the returned offset.
std::vector<uint8_t> create_context(const char (&name)[4], size_t data_size,
                                    size_t &data_at)
{
    constexpr size_t name_at = CREATE_CONTEXT_HDR_SIZE;
    data_at = align8(name_at + sizeof(name));
    std::vector<uint8_t> c(data_at + data_size, 0);
    smbd_put_le16(&c[CONTEXT_NAME_OFFSET], name_at);
    smbd_put_le16(&c[CONTEXT_NAME_LENGTH], sizeof(name));
    smbd_put_le16(&c[CONTEXT_DATA_OFFSET], uint16_t(data_at));
    smbd_put_le32(&c[CONTEXT_DATA_LENGTH], uint32_t(data_size));
    std::memcpy(&c[name_at], name, sizeof(name));
    return c;
}

} // namespace

std::vector<uint8_t> lease_context_v2(const std::array<uint8_t, 16> &key,
                                      uint32_t state)
{
    size_t data_at = 0;
    auto c = create_context(LEASE_CONTEXT_NAME, LEASE_V2_DATA_SIZE, data_at);
    // LeaseFlags, LeaseDuration, ParentLeaseKey, Epoch, Reserved 0
    std::copy(key.begin(), key.end(), &c[data_at + LEASE_KEY]);
    smbd_put_le32(&c[data_at + LEASE_STATE], state);
    return c;
}

std::vector<uint8_t>
durable_context_v2(const std::array<uint8_t, 16> &create_guid,
                   uint32_t timeout_ms)
{
    size_t data_at = 0;
    auto c = create_context(DURABLE_V2_CONTEXT_NAME, DURABLE_V2_REQ_DATA_SIZE,
                            data_at);
    // Flags 0: not persistent
    smbd_put_le32(&c[data_at + DURABLE_V2_TIMEOUT], timeout_ms);
    std::copy(create_guid.begin(), create_guid.end(),
              &c[data_at + DURABLE_V2_REQ_CREATE_GUID]);
    return c;
}

std::vector<uint8_t>
chain_create_contexts(std::vector<std::vector<uint8_t>> contexts)
{
    std::vector<uint8_t> chain;
    for (size_t i = 0; i < contexts.size(); i++) {
        auto &c = contexts[i];
        bool last = i + 1 == contexts.size();
        if (!last)
            c.resize(align8(c.size()), 0);
        if (c.size() >= CREATE_CONTEXT_HDR_SIZE)
            smbd_put_le32(&c[CONTEXT_NEXT], last ? 0 : uint32_t(c.size()));
        chain.insert(chain.end(), c.begin(), c.end());
    }
    return chain;
}

Result<CreateResponse> parse_create_response(std::span<const uint8_t> pdu)
{
    auto hdr =
        check_body(pdu, SMB2_CREATE, CREATE_RESP_FIXED, CREATE_RESP_FIXED + 1);
    if (!hdr)
        return hdr.error();
    const uint8_t *body = &pdu[SMB2_HDR_SIZE];
    CreateResponse r;
    r.hdr = *hdr;
    r.oplock_level = body[CREATE_RESP_OPLOCK_LEVEL];
    r.create_action = smbd_get_le32(body + CREATE_RESP_CREATE_ACTION);
    r.end_of_file = smbd_get_le64(body + CREATE_RESP_END_OF_FILE);
    std::copy_n(body + CREATE_RESP_FILE_ID, r.file_id.size(),
                r.file_id.begin());
    uint32_t off = smbd_get_le32(body + CREATE_RESP_CONTEXTS_OFFSET);
    uint32_t len = smbd_get_le32(body + CREATE_RESP_CONTEXTS_LENGTH);
    if (len == 0)
        return r;
    if (off < SMB2_HDR_SIZE + CREATE_RESP_FIXED ||
        uint64_t(off) + len > pdu.size())
        return protocol_error("CREATE response CreateContextsOffset " +
                              num(off) + " + CreateContextsLength " + num(len) +
                              " is outside bytes " +
                              num(SMB2_HDR_SIZE + CREATE_RESP_FIXED) + " to " +
                              num(pdu.size()) + " of the response");
    if (auto st = parse_create_contexts(pdu.subspan(off, len), r); !st)
        return st.error();
    return r;
}

std::vector<uint8_t> build_close(const smb2_hdr &hdr,
                                 const std::array<uint8_t, 16> &file_id)
{
    auto b = start_request(hdr, SMB2_CLOSE, CLOSE_REQ_SIZE);
    uint8_t *body = &b[SMB2_HDR_SIZE];
    // Flags 0: no attributes in the response; Reserved 0
    smbd_put_le16(body, CLOSE_REQ_SIZE);
    std::copy(file_id.begin(), file_id.end(), body + CLOSE_FILE_ID);
    return b;
}

Result<CloseResponse> parse_close_response(std::span<const uint8_t> pdu)
{
    auto hdr = check_body(pdu, SMB2_CLOSE, CLOSE_RESP_SIZE, CLOSE_RESP_SIZE);
    if (!hdr)
        return hdr.error();
    const uint8_t *body = &pdu[SMB2_HDR_SIZE];
    CloseResponse r;
    r.hdr = *hdr;
    r.flags = smbd_get_le16(body + CLOSE_RESP_FLAGS);
    r.allocation_size = smbd_get_le64(body + CLOSE_RESP_ALLOCATION_SIZE);
    r.end_of_file = smbd_get_le64(body + CLOSE_RESP_END_OF_FILE);
    r.file_attributes = smbd_get_le32(body + CLOSE_RESP_FILE_ATTRIBUTES);
    return r;
}

std::vector<uint8_t> build_logoff(const smb2_hdr &hdr)
{
    return empty_request(hdr, SMB2_LOGOFF);
}

std::vector<uint8_t> build_tree_disconnect(const smb2_hdr &hdr)
{
    return empty_request(hdr, SMB2_TREE_DISCONNECT);
}

std::vector<uint8_t> build_echo(const smb2_hdr &hdr)
{
    return empty_request(hdr, SMB2_ECHO);
}

Result<LeaseBreak> parse_lease_break(std::span<const uint8_t> pdu)
{
    auto hdr =
        check_body(pdu, SMB2_OPLOCK_BREAK, LEASE_BREAK_SIZE, LEASE_BREAK_SIZE);
    if (!hdr)
        return hdr.error();
    if (hdr->message_id != UINT64_MAX)
        return protocol_error("a lease break with MessageId " +
                              num(hdr->message_id) + ", not all ones");
    const uint8_t *body = &pdu[SMB2_HDR_SIZE];
    LeaseBreak r;
    r.new_epoch = smbd_get_le16(body + LEASE_BREAK_NEW_EPOCH);
    r.flags = smbd_get_le32(body + LEASE_BREAK_FLAGS);
    std::copy_n(body + LEASE_BREAK_KEY, r.key.size(), r.key.begin());
    r.current_state = smbd_get_le32(body + LEASE_BREAK_CURRENT_STATE);
    r.new_state = smbd_get_le32(body + LEASE_BREAK_NEW_STATE);
    return r;
}

std::vector<uint8_t> build_lease_break_ack(const smb2_hdr &hdr,
                                           const std::array<uint8_t, 16> &key,
                                           uint32_t state)
{
    // Reserved, Flags and LeaseDuration 0
    auto b = start_request(hdr, SMB2_OPLOCK_BREAK, LEASE_ACK_SIZE);
    uint8_t *body = &b[SMB2_HDR_SIZE];
    smbd_put_le16(body, LEASE_ACK_SIZE);
    std::copy(key.begin(), key.end(), body + LEASE_ACK_KEY);
    smbd_put_le32(body + LEASE_ACK_STATE, state);
    return b;
}

Result<LeaseBreakResponse>
parse_lease_break_response(std::span<const uint8_t> pdu)
{
    auto hdr =
        check_body(pdu, SMB2_OPLOCK_BREAK, LEASE_ACK_SIZE, LEASE_ACK_SIZE);
    if (!hdr)
        return hdr.error();
    const uint8_t *body = &pdu[SMB2_HDR_SIZE];
    LeaseBreakResponse r;
    std::copy_n(body + LEASE_ACK_KEY, r.key.size(), r.key.begin());
    r.state = smbd_get_le32(body + LEASE_ACK_STATE);
    return r;
}

Result<smb2_hdr> parse_empty_response(std::span<const uint8_t> pdu,
                                      uint16_t command)
{
    return check_body(pdu, command, EMPTY_BODY_SIZE, EMPTY_BODY_SIZE);
}

std::vector<uint8_t> build_change_notify(const smb2_hdr &hdr,
                                         const std::array<uint8_t, 16> &dir,
                                         uint32_t filter,
                                         uint32_t output_length)
{
    // StructureSize 32, Flags 0 (this directory only), OutputBufferLength,
    // FileId, CompletionFilter, Reserved
    constexpr size_t kBody = 32;
    auto b = start_request(hdr, SMB2_CHANGE_NOTIFY, kBody);
    uint8_t *body = &b[SMB2_HDR_SIZE];
    smbd_put_le16(body, kBody);
    smbd_put_le32(body + 4, output_length);
    std::copy(dir.begin(), dir.end(), body + 8);
    smbd_put_le32(body + 24, filter);
    return b;
}

namespace {

// IOCTL request and response bodies (2.2.31, 2.2.32) and an interface
// entry (2.2.32.5), from their starts.
constexpr size_t IOCTL_REQ_FIXED = 56;
constexpr size_t IOCTL_CTL_CODE = 4;
constexpr size_t IOCTL_FILE_ID = 8;
constexpr size_t IOCTL_REQ_MAX_OUTPUT = 44;
constexpr size_t IOCTL_REQ_FLAGS = 48;
constexpr size_t IOCTL_RESP_FIXED = 48;
constexpr size_t IOCTL_RESP_OUTPUT_OFFSET = 32;
constexpr size_t IOCTL_RESP_OUTPUT_COUNT = 36;
constexpr uint32_t SMB2_0_IOCTL_IS_FSCTL = 1;
constexpr size_t IFACE_SIZE = 152;
constexpr size_t IFACE_NEXT = 0;
constexpr size_t IFACE_INDEX = 4;
constexpr size_t IFACE_CAPABILITY = 8;
constexpr size_t IFACE_LINK_SPEED = 16;
constexpr size_t IFACE_SOCKADDR = 24;
constexpr uint16_t IFACE_INET = 0x0002;
constexpr uint16_t IFACE_INET6 = 0x0017;

} // namespace

std::vector<uint8_t> build_query_interfaces(const smb2_hdr &hdr,
                                            uint32_t max_output)
{
    // StructureSize 57 counts one Buffer byte the request does not need
    auto b = start_request(hdr, SMB2_IOCTL, IOCTL_REQ_FIXED);
    uint8_t *body = &b[SMB2_HDR_SIZE];
    smbd_put_le16(body, IOCTL_REQ_FIXED + 1);
    smbd_put_le32(body + IOCTL_CTL_CODE, FSCTL_QUERY_NETWORK_INTERFACE_INFO);
    std::fill_n(body + IOCTL_FILE_ID, 16, uint8_t{0xff});
    smbd_put_le32(body + IOCTL_REQ_MAX_OUTPUT, max_output);
    smbd_put_le32(body + IOCTL_REQ_FLAGS, SMB2_0_IOCTL_IS_FSCTL);
    return b;
}

Result<std::vector<NetworkInterface>>
parse_query_interfaces_response(std::span<const uint8_t> pdu)
{
    auto hdr =
        check_body(pdu, SMB2_IOCTL, IOCTL_RESP_FIXED, IOCTL_RESP_FIXED + 1);
    if (!hdr)
        return hdr.error();
    const uint8_t *body = &pdu[SMB2_HDR_SIZE];
    if (uint32_t code = smbd_get_le32(body + IOCTL_CTL_CODE);
        code != FSCTL_QUERY_NETWORK_INTERFACE_INFO)
        return protocol_error("IOCTL response CtlCode " + num(code) +
                              " is not the one asked");
    uint64_t off = smbd_get_le32(body + IOCTL_RESP_OUTPUT_OFFSET);
    uint64_t count = smbd_get_le32(body + IOCTL_RESP_OUTPUT_COUNT);
    if (off + count > pdu.size() ||
        (count != 0 && off < SMB2_HDR_SIZE + IOCTL_RESP_FIXED))
        return protocol_error("IOCTL response output " + num(off) + "+" +
                              num(count) + " is outside the " +
                              num(pdu.size()) + "-byte message");
    std::span<const uint8_t> out = pdu.subspan(off, count);
    std::vector<NetworkInterface> ifaces;
    for (size_t at = 0; at < out.size();) {
        if (out.size() - at < IFACE_SIZE)
            return protocol_error("interface entry at " + num(at) +
                                  " runs past the " + num(out.size()) +
                                  "-byte output");
        const uint8_t *e = &out[at];
        NetworkInterface n;
        n.if_index = smbd_get_le32(e + IFACE_INDEX);
        n.capability = smbd_get_le32(e + IFACE_CAPABILITY);
        n.link_speed = smbd_get_le64(e + IFACE_LINK_SPEED);
        const uint8_t *sa = e + IFACE_SOCKADDR;
        char text[64] = "";
        uint16_t family = smbd_get_le16(sa);
        // the address is in network order after Family and Port
        if (family == IFACE_INET)
            inet_ntop(AF_INET, sa + 4, text, sizeof(text));
        else if (family == IFACE_INET6)
            inet_ntop(AF_INET6, sa + 8, text, sizeof(text));
        else
            return protocol_error("interface entry at " + num(at) +
                                  " has address family " + num(family));
        n.address = text;
        ifaces.push_back(std::move(n));
        uint32_t next = smbd_get_le32(e + IFACE_NEXT);
        if (next == 0)
            break;
        if (next < IFACE_SIZE)
            return protocol_error("interface entry at " + num(at) +
                                  " has Next " + num(next) + ", inside itself");
        at += next;
        if (at >= out.size())
            return protocol_error("interface entry Next runs past the " +
                                  num(out.size()) + "-byte output");
    }
    return ifaces;
}

std::vector<uint8_t> build_cancel(const smb2_hdr &hdr)
{
    return empty_request(hdr, SMB2_CANCEL);
}

std::vector<uint8_t> build_compound(std::vector<std::vector<uint8_t>> pdus,
                                    bool related)
{
    std::vector<uint8_t> chain;
    for (size_t i = 0; i < pdus.size(); i++) {
        auto &p = pdus[i];
        bool last = i + 1 == pdus.size();
        if (!last)
            p.resize(align8(p.size()), 0);
        if (p.size() >= SMB2_HDR_SIZE) {
            smbd_put_le32(&p[SMB2_HDR_NEXT_COMMAND],
                          last ? 0 : uint32_t(p.size()));
            if (related && i > 0)
                smbd_put_le32(&p[SMB2_HDR_FLAGS],
                              smbd_get_le32(&p[SMB2_HDR_FLAGS]) |
                                  SMB2_FLAGS_RELATED_OPERATIONS);
        }
        chain.insert(chain.end(), p.begin(), p.end());
    }
    return chain;
}

std::vector<std::span<uint8_t>> compound_elements(std::span<uint8_t> chain)
{
    std::vector<std::span<uint8_t>> out;
    size_t pos = 0;
    while (pos < chain.size()) {
        std::span<uint8_t> rest = chain.subspan(pos);
        uint32_t next = rest.size() >= SMB2_HDR_SIZE
                            ? smbd_get_le32(&rest[SMB2_HDR_NEXT_COMMAND])
                            : 0;
        if (next == 0 || next % 8 != 0 || next < SMB2_HDR_SIZE ||
            next >= rest.size()) {
            out.push_back(rest);
            break;
        }
        out.push_back(rest.first(next));
        pos += next;
    }
    return out;
}

Result<std::vector<std::span<const uint8_t>>>
split_compound(std::span<const uint8_t> chain)
{
    std::vector<std::span<const uint8_t>> out;
    size_t pos = 0;
    for (unsigned i = 0;; i++) {
        std::span<const uint8_t> rest = chain.subspan(pos);
        std::string el = "compound element " + num(i) + " at byte " + num(pos) +
                         " of the " + num(chain.size()) + "-byte chain";
        smb2_hdr h{};
        switch (smb2_hdr_decode(rest.data(), rest.size(), &h)) {
        case SMBD_E_OK:
            break;
        case SMBD_E_TRUNCATED:
            return protocol_error(el + ": " + num(rest.size()) +
                                  " bytes, shorter than a header");
        default:
            return protocol_error(el + ": no 0xFE 'SMB' protocol id or a "
                                       "header StructureSize other than 64");
        }
        uint32_t next = h.next_command;
        if (next == 0) {
            out.push_back(rest);
            return out;
        }
        if (next % 8 != 0)
            return protocol_error(el + ": NextCommand " + num(next) +
                                  " is not a multiple of 8");
        if (next < SMB2_HDR_SIZE)
            return protocol_error(el + ": NextCommand " + num(next) +
                                  " is shorter than its header");
        if (next >= rest.size())
            return protocol_error(el + ": NextCommand " + num(next) +
                                  " points past the chain's " +
                                  num(rest.size()) + " remaining bytes");
        out.push_back(rest.first(next));
        pos += next;
    }
}

} // namespace smbd::client
