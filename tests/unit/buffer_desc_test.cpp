// SMB Direct Buffer Descriptor V1 lists (MS-SMBD 2.2.3.1): a byte-exact
// vector, get/put, and one test per validation rule.
#include "buffer_desc.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <ostream>
#include <vector>

// Failures print "DESC_WRAPS" instead of a bare number.
static void PrintTo(smbd_proto_error err, std::ostream *os)
{
    *os << "SMBD_E_" << smbd_proto_error_name(err);
}

namespace {

using Bytes = std::vector<uint8_t>;

// A 1 MiB I/O described the way Windows does it: 0xFFFC0 + 0x40 bytes.
constexpr std::array<uint8_t, 2 *SMBD_BUFFER_DESC_SIZE> kTwoDescs = {
    0x00, 0x70, 0x56, 0x34, 0x12, 0x7f, 0x00, 0x00, // Offset 0x7f1234567000
    0xcd, 0xab, 0x34, 0x12,                         // Token 0x1234abcd
    0xc0, 0xff, 0x0f, 0x00,                         // Length 0xfffc0
    0xc0, 0x6f, 0x66, 0x34, 0x12, 0x7f, 0x00, 0x00, // Offset 0x7f1234666fc0
    0xce, 0xab, 0x34, 0x12,                         // Token 0x1234abce
    0x40, 0x00, 0x00, 0x00,                         // Length 0x40
};

constexpr smbd_buffer_desc kDesc0 = {0x7f1234567000, 0x1234abcd, 0xfffc0};
constexpr smbd_buffer_desc kDesc1 = {0x7f1234666fc0, 0x1234abce, 0x40};

constexpr uint32_t kMaxCount = 4095; // 16-bit ChannelInfoLength / 16
constexpr uint64_t kMaxTotal = 8u << 20;

Bytes List(std::initializer_list<smbd_buffer_desc> descs)
{
    Bytes b(descs.size() * SMBD_BUFFER_DESC_SIZE);
    uint32_t i = 0;
    for (const smbd_buffer_desc &d : descs)
        smbd_buffer_desc_put(b.data(), i++, &d);
    return b;
}

struct Result {
    smbd_proto_error err;
    uint32_t count;
    uint64_t total;
};

Result Validate(const Bytes &b, uint32_t max_count = kMaxCount,
                uint64_t max_total = kMaxTotal)
{
    Result r = {SMBD_E_OK, 0, 0};
    r.err = smbd_buffer_desc_validate(b.data(), b.size(), max_count, max_total,
                                      &r.count, &r.total);
    return r;
}

void ExpectDesc(const smbd_buffer_desc &got, const smbd_buffer_desc &want)
{
    EXPECT_EQ(got.offset, want.offset);
    EXPECT_EQ(got.token, want.token);
    EXPECT_EQ(got.length, want.length);
}

// --- vector, get and put ----------------------------------------------------

TEST(BufferDesc, ValidatesAndReadsTwoDescriptorVector)
{
    const Bytes b(kTwoDescs.begin(), kTwoDescs.end());
    Result r = Validate(b);
    ASSERT_EQ(r.err, SMBD_E_OK);
    EXPECT_EQ(r.count, 2u);
    EXPECT_EQ(r.total, 1048576u);
    smbd_buffer_desc d;
    smbd_buffer_desc_get(b.data(), 0, &d);
    ExpectDesc(d, kDesc0);
    smbd_buffer_desc_get(b.data(), 1, &d);
    ExpectDesc(d, kDesc1);
}

TEST(BufferDesc, PutWritesVectorBytes)
{
    std::array<uint8_t, 2 * SMBD_BUFFER_DESC_SIZE> out;
    out.fill(0xaa);
    smbd_buffer_desc_put(out.data(), 0, &kDesc0);
    smbd_buffer_desc_put(out.data(), 1, &kDesc1);
    EXPECT_EQ(out, kTwoDescs);
}

// Every bit of every field survives put then get, at any index.
TEST(BufferDesc, GetReturnsWhatPutWrote)
{
    const smbd_buffer_desc descs[] = {
        {0xfedcba9876543210, 0x89abcdef, 0xffffffff},
        {0x0123456789abcdef, 0x00000001, 0x80000000},
        {0, 0, 1},
    };
    Bytes b(3 * SMBD_BUFFER_DESC_SIZE, 0);
    for (uint32_t i = 0; i < 3; i++)
        smbd_buffer_desc_put(b.data(), i, &descs[i]);
    for (uint32_t i = 0; i < 3; i++) {
        SCOPED_TRACE(i);
        smbd_buffer_desc d;
        smbd_buffer_desc_get(b.data(), i, &d);
        ExpectDesc(d, descs[i]);
    }
}

// --- one test per rule ------------------------------------------------------

TEST(BufferDesc, RejectsLengthNotMultipleOf16)
{
    Bytes b = List({kDesc0, kDesc1, kDesc0});
    for (size_t len : {1, 8, 15, 17, 24, 31, 33, 47}) {
        SCOPED_TRACE(len);
        EXPECT_EQ(Validate(Bytes(b.begin(), b.begin() + len)).err,
                  SMBD_E_DESC_LENGTH);
    }
}

TEST(BufferDesc, RejectsEmptyList)
{
    EXPECT_EQ(Validate(Bytes()).err, SMBD_E_DESC_COUNT);
}

TEST(BufferDesc, RejectsCountAboveMax)
{
    const Bytes b = List({kDesc0, kDesc1});
    EXPECT_EQ(Validate(b, 1).err, SMBD_E_DESC_COUNT);
    EXPECT_EQ(Validate(b, 0).err, SMBD_E_DESC_COUNT);
    Result r = Validate(b, 2);
    EXPECT_EQ(r.err, SMBD_E_OK);
    EXPECT_EQ(r.count, 2u);
}

// The largest list an SMB2 READ/WRITE can carry, at the limit.
TEST(BufferDesc, AcceptsMaxCount)
{
    Bytes b(kMaxCount * SMBD_BUFFER_DESC_SIZE);
    for (uint32_t i = 0; i < kMaxCount; i++) {
        const smbd_buffer_desc d = {0x10000ull * i, i, 16};
        smbd_buffer_desc_put(b.data(), i, &d);
    }
    Result r = Validate(b);
    ASSERT_EQ(r.err, SMBD_E_OK);
    EXPECT_EQ(r.count, kMaxCount);
    EXPECT_EQ(r.total, 16u * kMaxCount);
    b.resize(b.size() + SMBD_BUFFER_DESC_SIZE, 0x01);
    EXPECT_EQ(Validate(b).err, SMBD_E_DESC_COUNT);
}

TEST(BufferDesc, RejectsZeroLengthEntry)
{
    const smbd_buffer_desc empty = {0x1000, 7, 0};
    EXPECT_EQ(Validate(List({empty})).err, SMBD_E_DESC_ZERO_LENGTH);
    EXPECT_EQ(Validate(List({kDesc0, empty})).err, SMBD_E_DESC_ZERO_LENGTH);
}

TEST(BufferDesc, RejectsOffsetPlusLengthWrapping)
{
    const smbd_buffer_desc wraps[] = {
        {0xffffffffffffffff, 1, 1},
        {0xfffffffffffffff0, 1, 0x10}, // ends at 2^64 exactly
        {0xffffffff00000001, 1, 0xffffffff},
    };
    for (const smbd_buffer_desc &d : wraps) {
        SCOPED_TRACE(testing::Message()
                     << std::hex << d.offset << "+" << d.length);
        EXPECT_EQ(Validate(List({d})).err, SMBD_E_DESC_WRAPS);
        EXPECT_EQ(Validate(List({kDesc0, d})).err, SMBD_E_DESC_WRAPS);
    }
    // the last byte of the address space is still addressable
    EXPECT_EQ(Validate(List({{0xffffffffffffffef, 1, 0x10}})).err, SMBD_E_OK);
}

TEST(BufferDesc, RejectsTotalAboveMax)
{
    const Bytes b(kTwoDescs.begin(), kTwoDescs.end()); // 1 MiB in all
    EXPECT_EQ(Validate(b, kMaxCount, 1048575).err, SMBD_E_DESC_TOTAL);
    Result r = Validate(b, kMaxCount, 1048576);
    EXPECT_EQ(r.err, SMBD_E_OK);
    EXPECT_EQ(r.total, 1048576u);
    // a single entry above the limit
    EXPECT_EQ(Validate(List({kDesc0}), kMaxCount, 0xfffbf).err,
              SMBD_E_DESC_TOTAL);
}

// The total is summed in 64 bits: 4095 entries of 4 GiB - 1 do not wrap.
TEST(BufferDesc, SumsTotalWithoutOverflow)
{
    Bytes b(kMaxCount * SMBD_BUFFER_DESC_SIZE);
    for (uint32_t i = 0; i < kMaxCount; i++) {
        const smbd_buffer_desc d = {0, 1, 0xffffffff};
        smbd_buffer_desc_put(b.data(), i, &d);
    }
    const uint64_t sum = uint64_t{0xffffffff} * kMaxCount;
    Result r = Validate(b, kMaxCount, UINT64_MAX);
    ASSERT_EQ(r.err, SMBD_E_OK);
    EXPECT_EQ(r.total, sum);
    EXPECT_EQ(Validate(b, kMaxCount, sum - 1).err, SMBD_E_DESC_TOTAL);
}

} // namespace
