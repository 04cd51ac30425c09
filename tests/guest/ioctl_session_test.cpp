// REGISTER_SESSION / UNREGISTER_SESSION: a SessionId belongs to one file,
// registered only by the master's user or an administrator, a bounded
// number per file.
#include <linux/smbd.h>

#include <gtest/gtest.h>

#include <cerrno>

#include "guest.h"

namespace guest {
namespace {

using smbd::device::default_params;

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

TEST(Session, RegisteringNeedsNetAdminWithoutAMaster)
{
    int err = in_child([] {
        if (!drop_net_admin())
            return kChildFailed;
        Device dev = open_device();
        return dev.ok() ? dev.register_session(kSession) : kChildFailed;
    });
    EXPECT_EQ(err, EPERM);
}

// smbd's forked processes run as the master's user
TEST(Session, TheMastersUserMayRegisterWithoutNetAdmin)
{
    Device master = open_device();
    ASSERT_EQ(master.set_params(default_params()), 0);
    int err = in_child([] {
        if (!drop_net_admin())
            return kChildFailed;
        Device dev = open_device();
        return dev.ok() ? dev.register_session(kSession) : kChildFailed;
    });
    EXPECT_EQ(err, 0);
}

// Another user cannot take a session's channels, nor learn which SessionIds
// are registered: EPERM before the table is looked at.
TEST(Session, AnotherUserIsNotPermittedAndLearnsNothing)
{
    Device master = open_device();
    ASSERT_EQ(master.set_params(default_params()), 0);
    ASSERT_EQ(master.register_session(kSession), 0);
    int err = in_child([] {
        Device dev = open_device();
        if (!dev.ok() || !become_nobody())
            return kChildFailed;
        if (int e = dev.register_session(kSession); e != EPERM)
            return e;
        return dev.register_session(kSession + 1);
    });
    EXPECT_EQ(err, EPERM);
}

// The table is walked under a global lock: each file holds at most
// out_max_sessions of it, and what one file holds does not limit another.
TEST(Session, SessionsPerFileAreBounded)
{
    const uint32_t max = device_info().out_max_sessions;
    Device dev = open_device(), other = open_device();
    for (uint64_t id = 1; id <= max; id++)
        ASSERT_EQ(dev.register_session(kSession + id), 0) << id;
    EXPECT_EQ(dev.register_session(kSession + max + 1), ENOSPC);
    // one it holds is still no error
    EXPECT_EQ(dev.register_session(kSession + 1), 0);
    EXPECT_EQ(other.register_session(kSession + max + 1), 0);
    ASSERT_EQ(dev.unregister_session(kSession + 1), 0);
    EXPECT_EQ(dev.register_session(kSession + max + 2), 0);
}

} // namespace
} // namespace guest
