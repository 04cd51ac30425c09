// iWARP's IRD/ORD private data: what a connect request's 8 bytes mean and
// what the accept answers (proto/ird_ord.c, compiled into the module too).
#include <gtest/gtest.h>

#include <array>
#include <cstdint>

#include "ird_ord.h"

namespace {

using Blob = std::array<uint8_t, SMBD_IRD_ORD_SIZE>;

TEST(IrdOrd, BigEndianAsMsSmbdSendsIt)
{
    const Blob b = {0, 0, 0, 16, 0, 0, 0, 8};
    smbd_ird_ord v{};
    ASSERT_TRUE(smbd_ird_ord_parse(b.data(), b.size(), &v));
    EXPECT_EQ(v.ird, 16u);
    EXPECT_EQ(v.ord, 8u);
}

// Linux's cifs client before the 2025 fix sent host (little-endian) order.
TEST(IrdOrd, LittleEndianOfOldLinuxClientsIsTolerated)
{
    const Blob b = {32, 0, 0, 0, 1, 0, 0, 0};
    smbd_ird_ord v{};
    ASSERT_TRUE(smbd_ird_ord_parse(b.data(), b.size(), &v));
    EXPECT_EQ(v.ird, 32u);
    EXPECT_EQ(v.ord, 1u);
}

TEST(IrdOrd, ZeroIsZeroInEitherOrder)
{
    const Blob b = {};
    smbd_ird_ord v{1, 1};
    ASSERT_TRUE(smbd_ird_ord_parse(b.data(), b.size(), &v));
    EXPECT_EQ(v.ird, 0u);
    EXPECT_EQ(v.ord, 0u);
}

// A value no device takes is clamped to what the CM carries (a u8).
TEST(IrdOrd, ValuesBeyondAByteAreClamped)
{
    const Blob b = {0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x01, 0x00};
    smbd_ird_ord v{};
    ASSERT_TRUE(smbd_ird_ord_parse(b.data(), b.size(), &v));
    EXPECT_EQ(v.ird, uint32_t(SMBD_IRD_ORD_MAX));
    EXPECT_EQ(v.ord, uint32_t(SMBD_IRD_ORD_MAX));
}

// Big-endian 256 is little-endian 65536: neither fits, so big-endian
// (clamped) wins; one field fitting only little-endian is not enough.
TEST(IrdOrd, LittleEndianOnlyWhenBothFieldsFitThatWay)
{
    const Blob b = {0, 0, 1, 0, 5, 0, 0, 0};
    smbd_ird_ord v{};
    ASSERT_TRUE(smbd_ird_ord_parse(b.data(), b.size(), &v));
    EXPECT_EQ(v.ird, uint32_t(SMBD_IRD_ORD_MAX));
    EXPECT_EQ(v.ord, uint32_t(SMBD_IRD_ORD_MAX));
}

TEST(IrdOrd, AnyOtherLengthIsNotTheBlob)
{
    const std::array<uint8_t, 16> b = {0, 0, 0, 16, 0, 0, 0, 8};
    smbd_ird_ord v{7, 7};
    for (uint32_t len : {0u, 1u, 7u, 9u, 16u}) {
        EXPECT_FALSE(smbd_ird_ord_parse(b.data(), len, &v)) << len;
        EXPECT_EQ(v.ird, 7u) << "changed on length " << len;
    }
    EXPECT_FALSE(smbd_ird_ord_parse(nullptr, SMBD_IRD_ORD_SIZE, &v));
}

TEST(IrdOrd, AcceptAnswersBigEndianClamped)
{
    Blob b{};
    const smbd_ird_ord v{4, 300};
    smbd_ird_ord_build(b.data(), &v);
    EXPECT_EQ(b, (Blob{0, 0, 0, 4, 0, 0, 0, 255}));
    smbd_ird_ord back{};
    ASSERT_TRUE(smbd_ird_ord_parse(b.data(), b.size(), &back));
    EXPECT_EQ(back.ird, 4u);
    EXPECT_EQ(back.ord, 255u);
}

} // namespace
