// The test responder against the real module, without a peer: it takes the
// master's roles and gives them back when it stops.
#include <gtest/gtest.h>

#include <cerrno>
#include <thread>

#include "guest.h"
#include "responder.h"

namespace guest {
namespace {

using smbd::responder::Options;
using smbd::responder::Responder;

constexpr uint64_t kSession = 0x4f2a91c300000011ull;

Options quiet_options()
{
    Options opts;
    opts.log = nullptr;
    opts.register_sessions = {kSession};
    return opts;
}

TEST(Responder, HoldsTheMasterRolesWhileItRuns)
{
    Responder responder(quiet_options());
    ASSERT_EQ(responder.start(), 0);
    std::thread serving([&] { EXPECT_EQ(responder.run(), 0); });
    Device other = open_device();
    EXPECT_EQ(other.set_params(smbd::device::default_params()), EBUSY);
    EXPECT_EQ(other.listen(), EBUSY);
    EXPECT_EQ(other.register_session(kSession), EBUSY);
    responder.stop();
    serving.join();
    EXPECT_EQ(responder.summary().sessions, 1u);
    EXPECT_EQ(responder.summary().connections_offered, 0u);
}

TEST(Responder, SecondResponderCannotStartBesideTheFirst)
{
    Responder first(quiet_options());
    ASSERT_EQ(first.start(), 0);
    Options opts = quiet_options();
    opts.register_sessions.clear();
    Responder second(opts);
    EXPECT_EQ(second.start(), EBUSY);
}

TEST(Responder, RolesAreFreeAfterItIsGone)
{
    {
        Responder responder(quiet_options());
        ASSERT_EQ(responder.start(), 0);
    }
    Device dev = open_device();
    EXPECT_EQ(dev.set_params(smbd::device::default_params()), 0);
    EXPECT_EQ(dev.listen(), 0);
    EXPECT_EQ(dev.register_session(kSession), 0);
}

} // namespace
} // namespace guest
