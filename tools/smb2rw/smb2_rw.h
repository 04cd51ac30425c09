// SMB2 READ and WRITE over SMB Direct (MS-SMB2 2.2.19-2.2.22): the requests
// the client tool builds and the responder parses, and the responses the
// responder builds and the client parses. One place for both sides, so that
// each rule is written (and unit-tested) once. Pure functions over bytes; the
// kernel never parses these, so this is C++ beside the protocol core.
#ifndef SMBD_TOOLS_SMB2_RW_H
#define SMBD_TOOLS_SMB2_RW_H

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "smb2.h"

namespace smbd::smb2rw {

inline constexpr uint16_t SMB2_READ = 0x0008;
inline constexpr uint16_t SMB2_WRITE = 0x0009;

// Channel of READ/WRITE requests (MS-SMB2 2.2.19)
inline constexpr uint32_t CHANNEL_NONE = 0;
inline constexpr uint32_t CHANNEL_RDMA_V1 = 1;
inline constexpr uint32_t CHANNEL_RDMA_V1_INVALIDATE = 2;
inline constexpr uint32_t CHANNEL_RDMA_TRANSFORM = 3;

inline constexpr uint32_t NT_STATUS_END_OF_FILE = 0xC0000011u;
inline constexpr uint32_t NT_STATUS_DISK_FULL = 0xC000007Fu;

// Fixed parts of the bodies (StructureSize minus the odd Buffer byte).
inline constexpr size_t READ_REQ_FIXED = 48;
inline constexpr size_t WRITE_REQ_FIXED = 48;
inline constexpr size_t READ_RESP_FIXED = 16;
inline constexpr size_t WRITE_RESP_FIXED = 16;
inline constexpr size_t ERROR_RESP_FIXED = 8;
// Fields of the request bodies, from the end of the header.
inline constexpr size_t READ_FLAGS = 3;
inline constexpr size_t READ_LENGTH = 4;
inline constexpr size_t READ_OFFSET = 8;
inline constexpr size_t READ_FILE_ID = 16;
inline constexpr size_t READ_MINIMUM_COUNT = 32;
inline constexpr size_t READ_CHANNEL = 36;
inline constexpr size_t READ_REMAINING_BYTES = 40;
inline constexpr size_t READ_CHANNEL_INFO_OFFSET = 44;
inline constexpr size_t READ_CHANNEL_INFO_LENGTH = 46;
inline constexpr size_t WRITE_DATA_OFFSET = 2;
inline constexpr size_t WRITE_LENGTH = 4;
inline constexpr size_t WRITE_OFFSET = 8;
inline constexpr size_t WRITE_FILE_ID = 16;
inline constexpr size_t WRITE_CHANNEL = 32;
inline constexpr size_t WRITE_REMAINING_BYTES = 36;
inline constexpr size_t WRITE_CHANNEL_INFO_OFFSET = 40;
inline constexpr size_t WRITE_CHANNEL_INFO_LENGTH = 42;
inline constexpr size_t WRITE_FLAGS = 44;
// Where the Buffer field starts, counted from the SMB2 header as the
// ChannelInfoOffset and DataOffset fields are.
inline constexpr uint16_t REQ_BUFFER_OFFSET = SMB2_HDR_SIZE + READ_REQ_FIXED;
// DataOffset of a READ response (Samba and ksmbd send 0x50 even when the
// data went by RDMA and DataLength is 0).
inline constexpr uint8_t READ_RESP_DATA_OFFSET =
    SMB2_HDR_SIZE + READ_RESP_FIXED;

// One rule per way a message can be wrong, so that tests and logs name it.
enum class Rule {
    ok,
    truncated,            // shorter than the header and the fixed body
    header,               // protocol id or header StructureSize wrong
    direction,            // a response flagged as request or the reverse
    command,              // not the command expected
    structure_size,       // body StructureSize wrong
    channel,              // Channel value unknown
    channel_dialect,      // Channel not allowed in the connection's dialect
    channel_info_missing, // RDMA channel without descriptors
    channel_info_offset,  // channel info before the Buffer field
    channel_info_length,  // channel info not whole 16-byte descriptors
    channel_info_range,   // channel info past the end of the PDU
    rdma_write_length,    // WRITE with an RDMA channel and Length != 0
    rdma_write_offset,    // WRITE with an RDMA channel and DataOffset != 0
    data_range,           // inline data outside the PDU or before Buffer
};

const char *rule_name(Rule r);
// A sentence for logs: "channel info not a multiple of 16 bytes".
const char *rule_text(Rule r);

// Whether @channel may be used on a connection of @dialect (MS-SMB2
// 3.3.5.12: 3.0 allows NONE and RDMA_V1, 3.0.2 and 3.1.1 also
// RDMA_V1_INVALIDATE). RDMA_TRANSFORM needs a negotiated transform, which
// this project never offers.
bool channel_allowed(uint32_t channel, uint16_t dialect);
inline bool is_rdma(uint32_t channel)
{
    return channel == CHANNEL_RDMA_V1 || channel == CHANNEL_RDMA_V1_INVALIDATE;
}

using FileId = std::array<uint8_t, 16>;

struct ReadRequest {
    smb2_hdr hdr{};
    uint8_t flags = 0;
    uint32_t length = 0;
    uint64_t offset = 0;
    FileId file_id{};
    uint32_t minimum_count = 0;
    uint32_t channel = CHANNEL_NONE;
    uint32_t remaining_bytes = 0;
    // raw Buffer Descriptor V1 entries; parsed: a view into the PDU
    std::span<const uint8_t> channel_info;
};

struct WriteRequest {
    smb2_hdr hdr{};
    uint32_t length = 0;
    uint64_t offset = 0;
    FileId file_id{};
    uint32_t channel = CHANNEL_NONE;
    // RDMA: the bytes to pull with RDMA READ
    uint32_t remaining_bytes = 0;
    uint32_t flags = 0;
    std::span<const uint8_t> channel_info;
    // CHANNEL_NONE: the data in the message
    std::span<const uint8_t> data;
    // The write's length: RemainingBytes for RDMA, else Length.
    uint32_t bytes() const
    {
        return is_rdma(channel) ? remaining_bytes : length;
    }
};

// Requests on a connection of @dialect; views point into @pdu. On failure
// @out keeps the fields read before the rule that failed, so that a server
// can still answer (and invalidate the token of) a request it refuses.
Rule parse_read_request(std::span<const uint8_t> pdu, uint16_t dialect,
                        ReadRequest &out);
Rule parse_write_request(std::span<const uint8_t> pdu, uint16_t dialect,
                         WriteRequest &out);

// The channel info goes right at the Buffer field; with none, one zero
// byte stands for the Buffer as Windows sends it. The header's command is
// set here; the rest of @r.hdr is written as given.
std::vector<uint8_t> build_read_request(const ReadRequest &r);
// RDMA channels: DataOffset and Length 0, RemainingBytes as given. NONE:
// @r.data inline at the Buffer field.
std::vector<uint8_t> build_write_request(const WriteRequest &r);

// Responses. @credits is CreditResponse. The responder holds no session
// key: responses are never signed.

// The header of a response to @req: Samba's, unsigned.
void put_response_header(const smb2_hdr &req, uint32_t status, uint16_t credits,
                         uint8_t out[SMB2_HDR_SIZE]);

struct ReadResponse {
    smb2_hdr hdr{};
    uint8_t data_offset = 0;
    uint32_t data_length = 0;
    uint32_t data_remaining = 0;
    std::span<const uint8_t> data;
};

struct WriteResponse {
    smb2_hdr hdr{};
    uint32_t count = 0;
    uint32_t remaining = 0;
};

// A READ answered by RDMA: DataOffset 0x50, DataLength 0, DataRemaining
// @rdma_bytes; or with @data inline (DataLength its size, DataRemaining 0).
std::vector<uint8_t> build_read_response(const smb2_hdr &req, uint16_t credits,
                                         uint32_t rdma_bytes,
                                         std::span<const uint8_t> data = {});
std::vector<uint8_t> build_write_response(const smb2_hdr &req, uint16_t credits,
                                          uint32_t count);
// The SMB2 ERROR response (2.2.2) with @status.
std::vector<uint8_t> build_error_response(const smb2_hdr &req, uint16_t credits,
                                          uint32_t status);

// Response header checks: protocol id, size, SERVER_TO_REDIR, @command.
Rule parse_response_header(std::span<const uint8_t> pdu, uint16_t command,
                           smb2_hdr &out);
// A READ/WRITE response; a non-success status needs only a valid ERROR
// body, and then only out.hdr is filled.
Rule parse_read_response(std::span<const uint8_t> pdu, ReadResponse &out);
Rule parse_write_response(std::span<const uint8_t> pdu, WriteResponse &out);

// What the server answers a request with: what it asked for, at least 1.
inline uint16_t credit_response(const smb2_hdr &req)
{
    return req.credits ? req.credits : 1;
}

} // namespace smbd::smb2rw

#endif // SMBD_TOOLS_SMB2_RW_H
