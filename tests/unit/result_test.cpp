// The shared Result: a value or an Error, and asking it for the one it does
// not hold throws rather than reads what is not there; and the shared
// hexadecimal text.
#include <gtest/gtest.h>

#include <optional>
#include <variant>

#include "hex.h"
#include "result.h"

namespace {

smbd::Error an_error()
{
    return {std::make_error_code(std::errc::invalid_argument), "no"};
}

TEST(Result, ValueOrError)
{
    smbd::Result<int> v = 7;
    ASSERT_TRUE(v);
    EXPECT_EQ(*v, 7);
    smbd::Result<int> e = an_error();
    ASSERT_FALSE(e);
    EXPECT_EQ(e.error().message, "no");

    smbd::Status ok;
    EXPECT_TRUE(ok);
    smbd::Status failed = an_error();
    ASSERT_FALSE(failed);
    EXPECT_EQ(failed.error().code, std::errc::invalid_argument);
}

TEST(Result, TheSideNotHeldThrows)
{
    smbd::Result<int> v = 7;
    EXPECT_THROW((void)v.error(), std::bad_variant_access);
    smbd::Result<int> e = an_error();
    EXPECT_THROW((void)e.value(), std::bad_variant_access);
    // the error of a success is no Error at all, for Status too
    smbd::Status ok;
    EXPECT_THROW((void)ok.error(), std::bad_optional_access);
}

TEST(Hex, NumbersAsTheToolsPrintedThem)
{
    // "0x%llx", "0x%08x" and "0x%0*llx" before hex.h
    EXPECT_EQ(smbd::hex(0), "0x0");
    EXPECT_EQ(smbd::hex(0x1f), "0x1f");
    EXPECT_EQ(smbd::hex(UINT64_MAX), "0xffffffffffffffff");
    EXPECT_EQ(smbd::hex(0x1f, 4), "0x001f");
    EXPECT_EQ(smbd::hex(0xc0000016u, 8), "0xc0000016");
    EXPECT_EQ(smbd::hex(0x12345, 4), "0x12345");
    EXPECT_EQ(smbd::hex(5, 40), "0x0000000000000005");
    EXPECT_EQ(smbd::hex(5, -1), "0x5");
}

TEST(Hex, BytesAsPairsOfDigits)
{
    // "%02x" per byte before hex.h
    EXPECT_EQ(smbd::hex_bytes({}), "");
    const uint8_t b[] = {0x00, 0xff, 0x10, 0xa5};
    EXPECT_EQ(smbd::hex_bytes(b), "00ff10a5");
}

} // namespace
