// READ and WRITE decisions and answers; see file_server.h.
#include "file_server.h"

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>

#include "buffer_desc.h"

namespace smbd::responder {

using namespace smbd::smb2rw;

namespace {

std::string format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    return buf;
}

std::optional<uint32_t> invalidate_token(uint32_t channel, uint16_t dialect,
                                         std::span<const uint8_t> info)
{
    if (channel != CHANNEL_RDMA_V1_INVALIDATE ||
        !channel_allowed(channel, dialect) ||
        info.size() < SMBD_BUFFER_DESC_SIZE)
        return std::nullopt;
    smbd_buffer_desc d;
    smbd_buffer_desc_get(info.data(), 0, &d);
    return d.token;
}

Decision refuse(const smb2_hdr &hdr, uint32_t status, const std::string &why,
                std::optional<uint32_t> invalidate)
{
    Decision d;
    d.response = build_error_response(hdr, credit_response(hdr), status);
    d.invalidate = invalidate;
    d.note = "refused: " + why;
    return d;
}

// The descriptors' total, or why they are not acceptable.
std::optional<uint64_t> descriptors_total(std::span<const uint8_t> info,
                                          const Limits &l, std::string &why)
{
    uint32_t count = 0;
    uint64_t total = 0;
    smbd_proto_error err =
        smbd_buffer_desc_validate(info.data(), info.size(), l.max_descriptors,
                                  UINT32_MAX, &count, &total);
    if (err != SMBD_E_OK) {
        why = std::string("buffer descriptors: ") + smbd_proto_error_text(err);
        return std::nullopt;
    }
    return total;
}

const char *channel_name(uint32_t channel)
{
    switch (channel) {
    case CHANNEL_NONE:
        return "inline";
    case CHANNEL_RDMA_V1:
        return "RDMA_V1";
    case CHANNEL_RDMA_V1_INVALIDATE:
        return "RDMA_V1_INVALIDATE";
    }
    return "?";
}

} // namespace

FileServer::FileServer(uint64_t file_size, Limits limits)
    : store_(file_size), limits_(limits)
{
}

bool FileServer::handles(std::span<const uint8_t> pdu)
{
    smb2_hdr h;
    return smb2_hdr_parse(pdu.data(), pdu.size(), &h) == SMBD_E_OK &&
           (h.command == SMB2_READ || h.command == SMB2_WRITE);
}

Decision FileServer::request(std::span<const uint8_t> pdu, uint16_t dialect)
{
    return smbd_get_le16(pdu.data() + 12) == SMB2_READ ? read(pdu, dialect)
                                                       : write(pdu, dialect);
}

Decision FileServer::read(std::span<const uint8_t> pdu, uint16_t dialect)
{
    ReadRequest r;
    Rule rule = parse_read_request(pdu, dialect, r);
    auto inv = invalidate_token(r.channel, dialect, r.channel_info);
    if (rule != Rule::ok)
        return refuse(r.hdr, NT_STATUS_INVALID_PARAMETER, rule_text(rule), inv);
    if (r.length > limits_.max_io)
        return refuse(
            r.hdr, NT_STATUS_INVALID_PARAMETER,
            format("READ of %u bytes, above %u", r.length, limits_.max_io),
            inv);
    Decision d;
    d.invalidate = inv;
    if (r.length == 0) {
        d.response = build_read_response(r.hdr, credit_response(r.hdr), 0);
        d.note = "READ of 0 bytes";
        return d;
    }
    if (r.offset >= store_.size())
        return refuse(r.hdr, NT_STATUS_END_OF_FILE,
                      format("READ at %" PRIu64 ", the file ends at %" PRIu64,
                             r.offset, store_.size()),
                      inv);
    // a short read at the end of the file, and no more than described
    uint32_t bytes = static_cast<uint32_t>(
        std::min<uint64_t>(r.length, store_.size() - r.offset));
    if (is_rdma(r.channel)) {
        std::string why;
        auto total = descriptors_total(r.channel_info, limits_, why);
        if (!total)
            return refuse(r.hdr, NT_STATUS_INVALID_PARAMETER, why, inv);
        bytes = static_cast<uint32_t>(std::min<uint64_t>(bytes, *total));
    }
    if (bytes < r.minimum_count)
        return refuse(r.hdr, NT_STATUS_END_OF_FILE,
                      format("READ of %u bytes at %" PRIu64
                             " is below MinimumCount %u",
                             bytes, r.offset, r.minimum_count),
                      inv);
    d.note = format("READ %u bytes at %" PRIu64 " (%s)", bytes, r.offset,
                    channel_name(r.channel));
    if (!is_rdma(r.channel)) {
        std::vector<uint8_t> data(bytes);
        store_.read(r.offset, data);
        d.response =
            build_read_response(r.hdr, credit_response(r.hdr), 0, data);
        return d;
    }
    d.transfer = Transfer{r.hdr,
                          false,
                          r.offset,
                          bytes,
                          {r.channel_info.begin(), r.channel_info.end()}};
    return d;
}

Decision FileServer::write(std::span<const uint8_t> pdu, uint16_t dialect)
{
    WriteRequest r;
    Rule rule = parse_write_request(pdu, dialect, r);
    auto inv = invalidate_token(r.channel, dialect, r.channel_info);
    if (rule != Rule::ok)
        return refuse(r.hdr, NT_STATUS_INVALID_PARAMETER, rule_text(rule), inv);
    uint32_t bytes = r.bytes();
    if (bytes > limits_.max_io)
        return refuse(
            r.hdr, NT_STATUS_INVALID_PARAMETER,
            format("WRITE of %u bytes, above %u", bytes, limits_.max_io), inv);
    if (r.offset > store_.size() || bytes > store_.size() - r.offset)
        return refuse(r.hdr, NT_STATUS_DISK_FULL,
                      format("WRITE of %u bytes at %" PRIu64
                             ", the file ends at %" PRIu64,
                             bytes, r.offset, store_.size()),
                      inv);
    Decision d;
    d.invalidate = inv;
    d.note = format("WRITE %u bytes at %" PRIu64 " (%s)", bytes, r.offset,
                    channel_name(r.channel));
    if (!is_rdma(r.channel) || bytes == 0) {
        store_.write(r.offset, r.data);
        d.response = build_write_response(r.hdr, credit_response(r.hdr),
                                          static_cast<uint32_t>(r.data.size()));
        return d;
    }
    std::string why;
    auto total = descriptors_total(r.channel_info, limits_, why);
    if (!total)
        return refuse(r.hdr, NT_STATUS_INVALID_PARAMETER, why, inv);
    if (*total < bytes)
        return refuse(r.hdr, NT_STATUS_INVALID_PARAMETER,
                      format("descriptors hold %" PRIu64
                             " bytes, RemainingBytes is %u",
                             *total, bytes),
                      inv);
    d.transfer = Transfer{r.hdr,
                          true,
                          r.offset,
                          bytes,
                          {r.channel_info.begin(), r.channel_info.end()}};
    return d;
}

void FileServer::fill(const Transfer &t,
                      std::span<const std::span<uint8_t>> memory) const
{
    uint64_t offset = t.offset;
    uint32_t left = t.bytes;
    for (std::span<uint8_t> m : memory) {
        size_t n = std::min<size_t>(m.size(), left);
        store_.read(offset, m.first(n));
        offset += n;
        left -= static_cast<uint32_t>(n);
    }
}

std::vector<uint8_t>
FileServer::complete(const Transfer &t, uint32_t moved,
                     std::span<const std::span<uint8_t>> memory)
{
    uint16_t credits = credit_response(t.hdr);
    if (!t.write)
        return build_read_response(t.hdr, credits, moved);
    uint64_t offset = t.offset;
    uint32_t left = std::min(moved, t.bytes);
    for (std::span<uint8_t> m : memory) {
        size_t n = std::min<size_t>(m.size(), left);
        store_.write(offset, m.first(n));
        offset += n;
        left -= static_cast<uint32_t>(n);
    }
    return build_write_response(t.hdr, credits, moved);
}

} // namespace smbd::responder
