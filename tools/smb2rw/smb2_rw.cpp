// SMB2 READ and WRITE messages; see smb2_rw.h.
#include "smb2_rw.h"

#include <algorithm>
#include <cstring>
#include <iterator>

#include "buffer_desc.h"

namespace smbd::smb2rw {

namespace {

struct RuleInfo {
    const char *name;
    const char *text;
};

constexpr RuleInfo rules[] = {
    {"ok", "ok"},
    {"truncated", "message shorter than its header and fixed body"},
    {"header", "not an SMB2 header (protocol id or StructureSize)"},
    {"direction", "request/response flag wrong for this message"},
    {"command", "not the expected command"},
    {"structure_size", "body StructureSize wrong"},
    {"channel", "Channel value unknown"},
    {"channel_dialect", "Channel not allowed in this dialect"},
    {"channel_info_missing", "RDMA channel without buffer descriptors"},
    {"channel_info_offset", "channel info before the Buffer field"},
    {"channel_info_length", "channel info not a multiple of 16 bytes"},
    {"channel_info_range", "channel info past the end of the message"},
    {"rdma_write_length", "RDMA WRITE with Length not 0"},
    {"rdma_write_offset", "RDMA WRITE with DataOffset not 0"},
    {"data_range", "data outside the message or before the Buffer field"},
};
static_assert(std::size(rules) == size_t(Rule::data_range) + 1);

// Request header and fixed body: what READ and WRITE share.
Rule parse_request_start(std::span<const uint8_t> pdu, uint16_t command,
                         size_t fixed, smb2_hdr &hdr)
{
    switch (smb2_hdr_parse(pdu.data(), pdu.size(), &hdr)) {
    case SMBD_E_OK:
        break;
    case SMBD_E_TRUNCATED:
        return Rule::truncated;
    case SMBD_E_SMB2_NOT_REQUEST:
        return Rule::direction;
    default:
        return Rule::header;
    }
    if (hdr.command != command)
        return Rule::command;
    if (pdu.size() < SMB2_HDR_SIZE + fixed)
        return Rule::truncated;
    if (smbd_get_le16(&pdu[SMB2_HDR_SIZE]) != fixed + 1)
        return Rule::structure_size;
    return Rule::ok;
}

// Channel and channel info of a request: the same rules for READ and
// WRITE. Channel info is looked at only for RDMA channels; with NONE the
// fields are ignored, as MS-SMB2 says the server does.
Rule parse_channel(std::span<const uint8_t> pdu, uint16_t dialect,
                   uint32_t channel, uint16_t offset, uint16_t length,
                   std::span<const uint8_t> &info)
{
    if (channel > CHANNEL_RDMA_TRANSFORM)
        return Rule::channel;
    if (!channel_allowed(channel, dialect))
        return Rule::channel_dialect;
    if (!is_rdma(channel))
        return Rule::ok;
    if (length == 0)
        return Rule::channel_info_missing;
    if (offset < REQ_BUFFER_OFFSET)
        return Rule::channel_info_offset;
    if (length % SMBD_BUFFER_DESC_SIZE != 0)
        return Rule::channel_info_length;
    if (size_t(offset) + length > pdu.size())
        return Rule::channel_info_range;
    info = pdu.subspan(offset, length);
    return Rule::ok;
}

// With no channel info a Buffer byte still follows the fixed body.
size_t request_size(size_t fixed, size_t variable)
{
    return SMB2_HDR_SIZE + fixed + std::max<size_t>(variable, 1);
}

} // namespace

const char *rule_name(Rule r)
{
    return size_t(r) < std::size(rules) ? rules[size_t(r)].name : "unknown";
}

const char *rule_text(Rule r)
{
    return size_t(r) < std::size(rules) ? rules[size_t(r)].text
                                        : "unknown rule";
}

bool channel_allowed(uint32_t channel, uint16_t dialect)
{
    switch (channel) {
    case CHANNEL_NONE:
        return true;
    case CHANNEL_RDMA_V1:
        return dialect >= SMB2_DIALECT_300;
    case CHANNEL_RDMA_V1_INVALIDATE:
        return dialect >= SMB2_DIALECT_302;
    default:
        return false;
    }
}

Rule parse_read_request(std::span<const uint8_t> pdu, uint16_t dialect,
                        ReadRequest &out)
{
    ReadRequest &r = out = ReadRequest{};
    if (Rule e = parse_request_start(pdu, SMB2_READ, READ_REQ_FIXED, r.hdr);
        e != Rule::ok)
        return e;
    const uint8_t *b = &pdu[SMB2_HDR_SIZE];
    r.flags = b[READ_FLAGS];
    r.length = smbd_get_le32(b + READ_LENGTH);
    r.offset = smbd_get_le64(b + READ_OFFSET);
    std::copy_n(b + READ_FILE_ID, r.file_id.size(), r.file_id.begin());
    r.minimum_count = smbd_get_le32(b + READ_MINIMUM_COUNT);
    r.channel = smbd_get_le32(b + READ_CHANNEL);
    r.remaining_bytes = smbd_get_le32(b + READ_REMAINING_BYTES);
    if (Rule e = parse_channel(pdu, dialect, r.channel,
                               smbd_get_le16(b + READ_CHANNEL_INFO_OFFSET),
                               smbd_get_le16(b + READ_CHANNEL_INFO_LENGTH),
                               r.channel_info);
        e != Rule::ok)
        return e;
    return Rule::ok;
}

Rule parse_write_request(std::span<const uint8_t> pdu, uint16_t dialect,
                         WriteRequest &out)
{
    WriteRequest &r = out = WriteRequest{};
    if (Rule e = parse_request_start(pdu, SMB2_WRITE, WRITE_REQ_FIXED, r.hdr);
        e != Rule::ok)
        return e;
    const uint8_t *b = &pdu[SMB2_HDR_SIZE];
    uint16_t data_offset = smbd_get_le16(b + WRITE_DATA_OFFSET);
    r.length = smbd_get_le32(b + WRITE_LENGTH);
    r.offset = smbd_get_le64(b + WRITE_OFFSET);
    std::copy_n(b + WRITE_FILE_ID, r.file_id.size(), r.file_id.begin());
    r.channel = smbd_get_le32(b + WRITE_CHANNEL);
    r.remaining_bytes = smbd_get_le32(b + WRITE_REMAINING_BYTES);
    r.flags = smbd_get_le32(b + WRITE_FLAGS);
    if (Rule e = parse_channel(pdu, dialect, r.channel,
                               smbd_get_le16(b + WRITE_CHANNEL_INFO_OFFSET),
                               smbd_get_le16(b + WRITE_CHANNEL_INFO_LENGTH),
                               r.channel_info);
        e != Rule::ok)
        return e;
    if (is_rdma(r.channel)) {
        // the data comes by RDMA READ; ksmbd refuses anything inline too
        if (r.length != 0)
            return Rule::rdma_write_length;
        if (data_offset != 0)
            return Rule::rdma_write_offset;
    }
    else if (r.length) {
        if (data_offset < REQ_BUFFER_OFFSET ||
            size_t(data_offset) + r.length > pdu.size())
            return Rule::data_range;
        r.data = pdu.subspan(data_offset, r.length);
    }
    return Rule::ok;
}

void put_response_header(const smb2_hdr &req, uint32_t status, uint16_t credits,
                         uint8_t out[SMB2_HDR_SIZE])
{
    smb2_hdr h = req;
    h.flags &= ~SMB2_FLAGS_SIGNED;
    std::memset(h.signature, 0, sizeof(h.signature));
    smb2_resp_hdr_build(&h, status, credits, out);
}

std::vector<uint8_t> build_read_request(const ReadRequest &r)
{
    std::vector<uint8_t> b(request_size(READ_REQ_FIXED, r.channel_info.size()));
    smb2_hdr h = r.hdr;
    h.command = SMB2_READ;
    smb2_hdr_build(&h, b.data());
    uint8_t *body = &b[SMB2_HDR_SIZE];
    smbd_put_le16(body, READ_REQ_FIXED + 1);
    body[READ_FLAGS] = r.flags;
    smbd_put_le32(body + READ_LENGTH, r.length);
    smbd_put_le64(body + READ_OFFSET, r.offset);
    std::copy(r.file_id.begin(), r.file_id.end(), body + READ_FILE_ID);
    smbd_put_le32(body + READ_MINIMUM_COUNT, r.minimum_count);
    smbd_put_le32(body + READ_CHANNEL, r.channel);
    smbd_put_le32(body + READ_REMAINING_BYTES, r.remaining_bytes);
    if (!r.channel_info.empty()) {
        smbd_put_le16(body + READ_CHANNEL_INFO_OFFSET, REQ_BUFFER_OFFSET);
        smbd_put_le16(body + READ_CHANNEL_INFO_LENGTH,
                      uint16_t(r.channel_info.size()));
        std::copy(r.channel_info.begin(), r.channel_info.end(),
                  &b[REQ_BUFFER_OFFSET]);
    }
    return b;
}

std::vector<uint8_t> build_write_request(const WriteRequest &r)
{
    bool rdma = is_rdma(r.channel);
    std::span<const uint8_t> variable = rdma ? r.channel_info : r.data;
    std::vector<uint8_t> b(request_size(WRITE_REQ_FIXED, variable.size()));
    smb2_hdr h = r.hdr;
    h.command = SMB2_WRITE;
    smb2_hdr_build(&h, b.data());
    uint8_t *body = &b[SMB2_HDR_SIZE];
    smbd_put_le16(body, WRITE_REQ_FIXED + 1);
    smbd_put_le64(body + WRITE_OFFSET, r.offset);
    std::copy(r.file_id.begin(), r.file_id.end(), body + WRITE_FILE_ID);
    smbd_put_le32(body + WRITE_CHANNEL, r.channel);
    smbd_put_le32(body + WRITE_FLAGS, r.flags);
    if (rdma) {
        smbd_put_le32(body + WRITE_REMAINING_BYTES, r.remaining_bytes);
        smbd_put_le16(body + WRITE_CHANNEL_INFO_OFFSET, REQ_BUFFER_OFFSET);
        smbd_put_le16(body + WRITE_CHANNEL_INFO_LENGTH,
                      uint16_t(r.channel_info.size()));
    }
    else {
        smbd_put_le16(body + WRITE_DATA_OFFSET, REQ_BUFFER_OFFSET);
        smbd_put_le32(body + WRITE_LENGTH, uint32_t(r.data.size()));
    }
    std::copy(variable.begin(), variable.end(), &b[REQ_BUFFER_OFFSET]);
    return b;
}

std::vector<uint8_t> build_read_response(const smb2_hdr &req, uint16_t credits,
                                         uint32_t rdma_bytes,
                                         std::span<const uint8_t> data)
{
    std::vector<uint8_t> b(SMB2_HDR_SIZE + READ_RESP_FIXED + data.size());
    put_response_header(req, NT_STATUS_SUCCESS, credits, b.data());
    uint8_t *body = &b[SMB2_HDR_SIZE];
    smbd_put_le16(body, READ_RESP_FIXED + 1);
    body[2] = READ_RESP_DATA_OFFSET;
    smbd_put_le32(body + 4, uint32_t(data.size()));
    smbd_put_le32(body + 8, rdma_bytes);
    std::copy(data.begin(), data.end(), body + READ_RESP_FIXED);
    return b;
}

std::vector<uint8_t> build_write_response(const smb2_hdr &req, uint16_t credits,
                                          uint32_t count)
{
    std::vector<uint8_t> b(SMB2_HDR_SIZE + WRITE_RESP_FIXED);
    put_response_header(req, NT_STATUS_SUCCESS, credits, b.data());
    uint8_t *body = &b[SMB2_HDR_SIZE];
    smbd_put_le16(body, WRITE_RESP_FIXED + 1);
    smbd_put_le32(body + 4, count);
    return b;
}

std::vector<uint8_t> build_error_response(const smb2_hdr &req, uint16_t credits,
                                          uint32_t status)
{
    // StructureSize 9, no error contexts, ByteCount 0, one ErrorData byte
    std::vector<uint8_t> b(SMB2_HDR_SIZE + ERROR_RESP_FIXED + 1);
    put_response_header(req, status, credits, b.data());
    smbd_put_le16(&b[SMB2_HDR_SIZE], ERROR_RESP_FIXED + 1);
    return b;
}

Rule parse_response_header(std::span<const uint8_t> pdu, uint16_t command,
                           smb2_hdr &h)
{
    switch (smb2_hdr_decode(pdu.data(), pdu.size(), &h)) {
    case SMBD_E_OK:
        break;
    case SMBD_E_TRUNCATED:
        return Rule::truncated;
    default:
        return Rule::header;
    }
    if (!(h.flags & SMB2_FLAGS_SERVER_TO_REDIR))
        return Rule::direction;
    if (h.command != command)
        return Rule::command;
    if (h.status == NT_STATUS_SUCCESS)
        return Rule::ok;
    if (pdu.size() < SMB2_HDR_SIZE + ERROR_RESP_FIXED)
        return Rule::truncated;
    if (smbd_get_le16(&pdu[SMB2_HDR_SIZE]) != ERROR_RESP_FIXED + 1)
        return Rule::structure_size;
    return Rule::ok;
}

Rule parse_read_response(std::span<const uint8_t> pdu, ReadResponse &out)
{
    ReadResponse r;
    if (Rule e = parse_response_header(pdu, SMB2_READ, r.hdr); e != Rule::ok)
        return e;
    if (r.hdr.status == NT_STATUS_SUCCESS) {
        if (pdu.size() < SMB2_HDR_SIZE + READ_RESP_FIXED)
            return Rule::truncated;
        const uint8_t *b = &pdu[SMB2_HDR_SIZE];
        if (smbd_get_le16(b) != READ_RESP_FIXED + 1)
            return Rule::structure_size;
        r.data_offset = b[2];
        r.data_length = smbd_get_le32(b + 4);
        r.data_remaining = smbd_get_le32(b + 8);
        if (r.data_length) {
            if (r.data_offset < READ_RESP_DATA_OFFSET ||
                size_t(r.data_offset) + r.data_length > pdu.size())
                return Rule::data_range;
            r.data = pdu.subspan(r.data_offset, r.data_length);
        }
    }
    out = r;
    return Rule::ok;
}

Rule parse_write_response(std::span<const uint8_t> pdu, WriteResponse &out)
{
    WriteResponse r;
    if (Rule e = parse_response_header(pdu, SMB2_WRITE, r.hdr); e != Rule::ok)
        return e;
    if (r.hdr.status == NT_STATUS_SUCCESS) {
        if (pdu.size() < SMB2_HDR_SIZE + WRITE_RESP_FIXED)
            return Rule::truncated;
        const uint8_t *b = &pdu[SMB2_HDR_SIZE];
        if (smbd_get_le16(b) != WRITE_RESP_FIXED + 1)
            return Rule::structure_size;
        r.count = smbd_get_le32(b + 4);
        r.remaining = smbd_get_le32(b + 8);
    }
    out = r;
    return Rule::ok;
}

} // namespace smbd::smb2rw
