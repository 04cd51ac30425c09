// The responder's READ/WRITE logic without a device: what each request
// decides (answer now, or a transfer with which descriptors and which
// token to invalidate), the file's bytes across pool slices, the pool's
// free list and the sparse file.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "buffer_desc.h"
#include "file_server.h"
#include "smb2_rw.h"
#include "store.h"

namespace {

using namespace smbd::responder;
using namespace smbd::smb2rw;

constexpr uint32_t kMaxIo = 8u << 20;
constexpr uint64_t kFileSize = 64u << 20;
constexpr uint32_t kToken0 = 0xa1b2c3d4, kToken1 = 0x0badf00d;

FileServer Server() { return FileServer(kFileSize, Limits{kMaxIo, 16}); }

std::vector<uint8_t> Descs(std::initializer_list<uint32_t> lengths)
{
    std::vector<uint8_t> b(lengths.size() * SMBD_BUFFER_DESC_SIZE);
    uint32_t i = 0;
    uint64_t addr = 0x7f0000001000;
    for (uint32_t len : lengths) {
        smbd_buffer_desc d{addr, i == 0 ? kToken0 : kToken1 + i, len};
        smbd_buffer_desc_put(b.data(), i++, &d);
        addr += len + 4096;
    }
    return b;
}

smb2_hdr Hdr(uint16_t credits = 8)
{
    smb2_hdr h{};
    h.message_id = 42;
    h.credits = credits;
    h.credit_charge = 1;
    h.session_id = 0x77;
    return h;
}

std::vector<uint8_t> Read(uint64_t offset, uint32_t length, uint32_t channel,
                          const std::vector<uint8_t> &descs, uint32_t min = 0)
{
    ReadRequest r;
    r.hdr = Hdr();
    r.offset = offset;
    r.length = length;
    r.minimum_count = min;
    r.channel = channel;
    r.channel_info = descs;
    return build_read_request(r);
}

std::vector<uint8_t> Write(uint64_t offset, uint32_t bytes, uint32_t channel,
                           const std::vector<uint8_t> &descs)
{
    WriteRequest w;
    w.hdr = Hdr();
    w.offset = offset;
    w.remaining_bytes = bytes;
    w.channel = channel;
    w.channel_info = descs;
    return build_write_request(w);
}

uint32_t Status(const std::vector<uint8_t> &pdu)
{
    smb2_hdr h;
    EXPECT_EQ(parse_response_header(pdu, smbd_get_le16(pdu.data() + 12), h),
              Rule::ok);
    return h.status;
}

// @bytes over spans of @piece bytes each, like pool slices.
struct Memory {
    std::vector<std::vector<uint8_t>> pieces;
    std::vector<std::span<uint8_t>> spans;
    Memory(uint32_t bytes, uint32_t piece)
    {
        for (uint32_t left = bytes; left;) {
            uint32_t n = std::min(left, piece);
            pieces.emplace_back(n);
            left -= n;
        }
        for (auto &p : pieces)
            spans.emplace_back(p);
    }
};

TEST(ResponderIo, HandlesOnlyReadAndWriteRequests)
{
    EXPECT_TRUE(FileServer::handles(Read(0, 1, CHANNEL_NONE, {})));
    EXPECT_TRUE(FileServer::handles(Write(0, 0, CHANNEL_NONE, {})));
    auto echo = Read(0, 1, CHANNEL_NONE, {});
    echo[12] = 0x0B; // IOCTL
    EXPECT_FALSE(FileServer::handles(echo));
    auto response = build_read_response(Hdr(), 1, 0);
    EXPECT_FALSE(FileServer::handles(response));
    EXPECT_FALSE(FileServer::handles(std::vector<uint8_t>(10)));
}

TEST(ResponderIo, RdmaReadBecomesATransferWithInvalidation)
{
    FileServer fs = Server();
    auto descs = Descs({4096, 8192});
    Decision d = fs.request(
        Read(1000, 10000, CHANNEL_RDMA_V1_INVALIDATE, descs), SMB2_DIALECT_311);
    ASSERT_TRUE(d.transfer) << d.note;
    EXPECT_TRUE(d.response.empty());
    EXPECT_FALSE(d.transfer->write);
    EXPECT_EQ(d.transfer->offset, 1000u);
    EXPECT_EQ(d.transfer->bytes, 10000u);
    EXPECT_EQ(d.transfer->descriptors, descs);
    EXPECT_EQ(d.transfer->hdr.message_id, 42u);
    EXPECT_EQ(d.invalidate, kToken0);
}

TEST(ResponderIo, RdmaV1IsNotInvalidated)
{
    FileServer fs = Server();
    Decision d = fs.request(Read(0, 4096, CHANNEL_RDMA_V1, Descs({4096})),
                            SMB2_DIALECT_300);
    ASSERT_TRUE(d.transfer) << d.note;
    EXPECT_FALSE(d.invalidate);
}

TEST(ResponderIo, InvalidateChannelOn300IsInvalidParameter)
{
    FileServer fs = Server();
    Decision d =
        fs.request(Read(0, 4096, CHANNEL_RDMA_V1_INVALIDATE, Descs({4096})),
                   SMB2_DIALECT_300);
    EXPECT_FALSE(d.transfer);
    EXPECT_EQ(Status(d.response), NT_STATUS_INVALID_PARAMETER);
    // not a channel of this dialect: nothing to invalidate
    EXPECT_FALSE(d.invalidate);
}

TEST(ResponderIo, RefusalsOfInvalidateRequestsStillInvalidate)
{
    FileServer fs = Server();
    Decision d = fs.request(
        Read(0, kMaxIo + 1, CHANNEL_RDMA_V1_INVALIDATE, Descs({4096})),
        SMB2_DIALECT_302);
    EXPECT_EQ(Status(d.response), NT_STATUS_INVALID_PARAMETER);
    EXPECT_EQ(d.invalidate, kToken0);
    auto w = Write(0, 4096, CHANNEL_RDMA_V1_INVALIDATE, Descs({4096}));
    w[64 + 4] = 1; // Length 1: refused after the channel info was read
    d = fs.request(w, SMB2_DIALECT_311);
    EXPECT_EQ(Status(d.response), NT_STATUS_INVALID_PARAMETER);
    EXPECT_EQ(d.invalidate, kToken0);
}

TEST(ResponderIo, ResponseGrantsTheCreditsAskedFor)
{
    FileServer fs = Server();
    Decision d = fs.request(Read(0, 0, CHANNEL_NONE, {}), SMB2_DIALECT_311);
    smb2_hdr h;
    ASSERT_EQ(parse_response_header(d.response, SMB2_READ, h), Rule::ok);
    EXPECT_EQ(h.credits, 8u);
}

TEST(ResponderIo, BadDescriptorsAreInvalidParameter)
{
    FileServer fs = Server();
    Decision d = fs.request(Read(0, 4096, CHANNEL_RDMA_V1, Descs({4096, 0})),
                            SMB2_DIALECT_311);
    EXPECT_EQ(Status(d.response), NT_STATUS_INVALID_PARAMETER);
    EXPECT_NE(d.note.find("length 0"), std::string::npos) << d.note;
    std::vector<uint8_t> descs;
    for (uint32_t i = 0; i < 17; i++) {
        auto one = Descs({16});
        descs.insert(descs.end(), one.begin(), one.end());
    }
    d = fs.request(Read(0, 4096, CHANNEL_RDMA_V1, descs), SMB2_DIALECT_311);
    EXPECT_EQ(Status(d.response), NT_STATUS_INVALID_PARAMETER);
}

TEST(ResponderIo, ReadMovesNoMoreThanDescribed)
{
    FileServer fs = Server();
    Decision d = fs.request(Read(0, 65536, CHANNEL_RDMA_V1, Descs({1000, 24})),
                            SMB2_DIALECT_311);
    ASSERT_TRUE(d.transfer) << d.note;
    EXPECT_EQ(d.transfer->bytes, 1024u);
}

TEST(ResponderIo, ShortReadAtTheEndOfTheFile)
{
    FileServer fs = Server();
    Decision d =
        fs.request(Read(kFileSize - 100, 4096, CHANNEL_RDMA_V1, Descs({4096})),
                   SMB2_DIALECT_311);
    ASSERT_TRUE(d.transfer) << d.note;
    EXPECT_EQ(d.transfer->bytes, 100u);
    d = fs.request(Read(kFileSize, 4096, CHANNEL_RDMA_V1, Descs({4096})),
                   SMB2_DIALECT_311);
    EXPECT_EQ(Status(d.response), NT_STATUS_END_OF_FILE);
    d = fs.request(
        Read(kFileSize - 100, 4096, CHANNEL_RDMA_V1, Descs({4096}), 101),
        SMB2_DIALECT_311);
    EXPECT_EQ(Status(d.response), NT_STATUS_END_OF_FILE);
}

TEST(ResponderIo, RdmaWriteBecomesATransfer)
{
    FileServer fs = Server();
    auto descs = Descs({3000, 3000});
    Decision d =
        fs.request(Write(4096, 5000, CHANNEL_RDMA_V1, descs), SMB2_DIALECT_311);
    ASSERT_TRUE(d.transfer) << d.note;
    EXPECT_TRUE(d.transfer->write);
    EXPECT_EQ(d.transfer->bytes, 5000u);
    EXPECT_EQ(d.transfer->offset, 4096u);
    EXPECT_FALSE(d.invalidate);
}

TEST(ResponderIo, WriteNeedsDescriptorsForAllItsBytes)
{
    FileServer fs = Server();
    Decision d = fs.request(Write(0, 5000, CHANNEL_RDMA_V1, Descs({4999})),
                            SMB2_DIALECT_311);
    EXPECT_EQ(Status(d.response), NT_STATUS_INVALID_PARAMETER);
}

TEST(ResponderIo, WriteLimits)
{
    FileServer fs = Server();
    Decision d = fs.request(
        Write(0, kMaxIo + 1, CHANNEL_RDMA_V1, Descs({4096})), SMB2_DIALECT_311);
    EXPECT_EQ(Status(d.response), NT_STATUS_INVALID_PARAMETER);
    d = fs.request(Write(kFileSize - 10, 11, CHANNEL_RDMA_V1, Descs({4096})),
                   SMB2_DIALECT_311);
    EXPECT_EQ(Status(d.response), NT_STATUS_DISK_FULL);
    d = fs.request(Write(UINT64_MAX, 11, CHANNEL_RDMA_V1, Descs({4096})),
                   SMB2_DIALECT_311);
    EXPECT_EQ(Status(d.response), NT_STATUS_DISK_FULL);
}

TEST(ResponderIo, WriteThenReadAcrossSlices)
{
    FileServer fs = Server();
    const uint32_t bytes = 3 * 4096 + 7, piece = 4096;
    Decision w = fs.request(Write(10, bytes, CHANNEL_RDMA_V1, Descs({bytes})),
                            SMB2_DIALECT_311);
    ASSERT_TRUE(w.transfer);
    Memory in(bytes, piece);
    uint8_t v = 1;
    for (auto &p : in.pieces)
        for (auto &b : p)
            b = v++;
    auto resp = fs.complete(*w.transfer, bytes, in.spans);
    WriteResponse wr;
    ASSERT_EQ(parse_write_response(resp, wr), Rule::ok);
    EXPECT_EQ(wr.count, bytes);
    EXPECT_EQ(wr.hdr.credits, 8u);

    Decision r =
        fs.request(Read(10, bytes, CHANNEL_RDMA_V1_INVALIDATE, Descs({bytes})),
                   SMB2_DIALECT_311);
    ASSERT_TRUE(r.transfer);
    Memory out(bytes, piece);
    fs.fill(*r.transfer, out.spans);
    EXPECT_EQ(out.pieces, in.pieces);
    resp = fs.complete(*r.transfer, bytes, out.spans);
    ReadResponse rr;
    ASSERT_EQ(parse_read_response(resp, rr), Rule::ok);
    EXPECT_EQ(rr.data_offset, 0x50);
    EXPECT_EQ(rr.data_length, 0u);
    EXPECT_EQ(rr.data_remaining, bytes);
}

TEST(ResponderIo, InlineWriteAndRead)
{
    FileServer fs = Server();
    std::vector<uint8_t> data(100);
    std::iota(data.begin(), data.end(), uint8_t(1));
    WriteRequest w;
    w.hdr = Hdr();
    w.offset = 7;
    w.data = data;
    Decision d = fs.request(build_write_request(w), SMB2_DIALECT_300);
    ASSERT_FALSE(d.transfer);
    WriteResponse wr;
    ASSERT_EQ(parse_write_response(d.response, wr), Rule::ok);
    EXPECT_EQ(wr.count, 100u);
    d = fs.request(Read(7, 100, CHANNEL_NONE, {}), SMB2_DIALECT_300);
    ReadResponse rr;
    ASSERT_EQ(parse_read_response(d.response, rr), Rule::ok);
    EXPECT_EQ(std::vector<uint8_t>(rr.data.begin(), rr.data.end()), data);
}

TEST(ResponderStore, ZeroWhereNeverWrittenAndAcrossChunks)
{
    Store st(4u << 20);
    std::vector<uint8_t> in(3000, 0xab), out(5000, 0xff);
    st.write((1u << 20) - 1000, in);
    st.read((1u << 20) - 2000, out);
    for (size_t i = 0; i < out.size(); i++)
        ASSERT_EQ(out[i], i >= 1000 && i < 4000 ? 0xab : 0) << i;
}

} // namespace
