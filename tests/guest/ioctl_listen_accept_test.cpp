// LISTEN (one listening file, CAP_NET_ADMIN) and ACCEPT (by token, by the
// listener's owner).
#include <linux/smbd.h>

#include <gtest/gtest.h>

#include <array>
#include <cerrno>

#include "guest.h"

namespace guest {
namespace {

const std::array<uint8_t, SMBD_TOKEN_SIZE> kUnknownToken = {
    0x3c, 0x91, 0x0e, 0x7a, 0xd2, 0x55, 0x18, 0xbf,
    0x64, 0x2d, 0xe0, 0x09, 0x8b, 0x71, 0xc6, 0x4f,
};

TEST(Listen, NeedsNetAdmin)
{
    int err = in_child([] {
        if (!drop_net_admin())
            return kChildFailed;
        Device dev = open_device();
        return dev.ok() ? dev.listen() : kChildFailed;
    });
    EXPECT_EQ(err, EPERM);
}

TEST(Listen, AnotherFileIsBusyWhileOneListens)
{
    Device first = open_device(), second = open_device();
    ASSERT_EQ(first.listen(), 0);
    EXPECT_EQ(second.listen(), EBUSY);
}

// EBUSY is for a role held by another file: the listener asking again keeps
// listening.
TEST(Listen, SameFileMayListenAgain)
{
    Device dev = open_device();
    ASSERT_EQ(dev.listen(), 0);
    EXPECT_EQ(dev.listen(), 0);
    Device other = open_device();
    EXPECT_EQ(other.listen(), EBUSY);
}

TEST(Listen, ClosingTheListenerFreesTheRole)
{
    Device second = open_device();
    {
        Device first = open_device();
        ASSERT_EQ(first.listen(), 0);
    }
    EXPECT_EQ(second.listen(), 0);
}

TEST(Accept, UnknownTokenIsNoEntry)
{
    Device listener = open_device();
    ASSERT_EQ(listener.listen(), 0);
    Device child = open_device();
    uint64_t id = 0;
    EXPECT_EQ(child.accept(kUnknownToken, id), ENOENT);
}

TEST(Accept, WithoutListenerIsNoEntry)
{
    Device child = open_device();
    uint64_t id = 0;
    EXPECT_EQ(child.accept(kUnknownToken, id), ENOENT);
}

// Only processes of the listener's owner may claim its connections; the
// check comes before the token is looked up, so that no other user can
// probe for tokens.
TEST(Accept, ProcessOfAnotherUidIsNotPermitted)
{
    Device listener = open_device();
    ASSERT_EQ(listener.listen(), 0);
    int err = in_child([] {
        Device dev = open_device();
        if (!dev.ok() || !become_nobody())
            return kChildFailed;
        uint64_t id = 0;
        return dev.accept(kUnknownToken, id);
    });
    EXPECT_EQ(err, EPERM);
}

} // namespace
} // namespace guest
