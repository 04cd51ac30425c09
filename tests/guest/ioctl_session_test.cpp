// REGISTER_SESSION / UNREGISTER_SESSION: a SessionId belongs to one file.
#include <linux/smbd.h>

#include <gtest/gtest.h>

#include <cerrno>

#include "guest.h"

namespace guest {
namespace {

constexpr uint64_t kSession = 0x4f2a91c300000011ull;

TEST(Session, ZeroIsInvalid)
{
    Device dev = open_device();
    EXPECT_EQ(dev.register_session(0), EINVAL);
    EXPECT_EQ(dev.unregister_session(0), EINVAL);
}

TEST(Session, SameFileMayRegisterTwice)
{
    Device dev = open_device();
    ASSERT_EQ(dev.register_session(kSession), 0);
    EXPECT_EQ(dev.register_session(kSession), 0);
}

TEST(Session, AnotherFileIsBusy)
{
    Device owner = open_device(), other = open_device();
    ASSERT_EQ(owner.register_session(kSession), 0);
    EXPECT_EQ(other.register_session(kSession), EBUSY);
}

TEST(Session, UnregisterUnknownIsNoEntry)
{
    Device dev = open_device();
    EXPECT_EQ(dev.unregister_session(kSession), ENOENT);
}

TEST(Session, UnregisterFromAnotherFileIsNoEntry)
{
    Device owner = open_device(), other = open_device();
    ASSERT_EQ(owner.register_session(kSession), 0);
    EXPECT_EQ(other.unregister_session(kSession), ENOENT);
    // and it stays the owner's
    EXPECT_EQ(other.register_session(kSession), EBUSY);
}

TEST(Session, UnregisterFreesItForAnotherFile)
{
    Device owner = open_device(), other = open_device();
    ASSERT_EQ(owner.register_session(kSession), 0);
    ASSERT_EQ(owner.unregister_session(kSession), 0);
    EXPECT_EQ(owner.unregister_session(kSession), ENOENT);
    EXPECT_EQ(other.register_session(kSession), 0);
}

TEST(Session, ClosingTheFileFreesItsSessions)
{
    Device other = open_device();
    {
        Device owner = open_device();
        ASSERT_EQ(owner.register_session(kSession), 0);
        ASSERT_EQ(owner.register_session(kSession + 1), 0);
    }
    EXPECT_EQ(other.register_session(kSession), 0);
    EXPECT_EQ(other.register_session(kSession + 1), 0);
}

TEST(Session, OneFileHoldsManySessions)
{
    Device dev = open_device();
    for (uint64_t id = 1; id <= 64; id++)
        ASSERT_EQ(dev.register_session(kSession + id), 0) << id;
    for (uint64_t id = 1; id <= 64; id++)
        EXPECT_EQ(dev.unregister_session(kSession + id), 0) << id;
}

} // namespace
} // namespace guest
