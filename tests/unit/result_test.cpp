// The shared Result: a value or an Error, and asking it for the one it does
// not hold throws rather than reads what is not there.
#include <gtest/gtest.h>

#include <optional>
#include <variant>

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

} // namespace
