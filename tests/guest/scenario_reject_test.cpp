// Without a master's parameters there is nothing to answer with: the
// driver does not listen before SET_PARAMS, nor once the master's file is
// closed, so a connect never reaches it.
#include <fcntl.h>

#include <memory>
#include <thread>
#include <vector>

#include "scenario.h"

namespace scenario {
namespace {

using NoParams = Scenario;

TEST_F(NoParams, ConnectFailsBeforeSetParamsAndAfterTheMasterClosed)
{
    auto before =
        Client::connect(server_addr(), kPort, PeerOptions::default_connect());
    EXPECT_FALSE(before) << "connected with no parameters set";
    EXPECT_EQ(delta("conn_requests"), 0);

    {
        // the same connect works while a master holds the parameters
        Device master(O_NONBLOCK);
        ASSERT_EQ(master.set_params(fast_params()), 0);
        auto during = negotiated_client();
        EXPECT_TRUE(during) << during.error().message;
        EXPECT_EQ(delta("conn_requests"), 1);
    }
    ASSERT_TRUE(settled());

    auto after =
        Client::connect(server_addr(), kPort, PeerOptions::default_connect());
    EXPECT_FALSE(after) << "connected after the master's file was closed";
    EXPECT_EQ(delta("conn_requests"), 1);
    EXPECT_EQ(delta("conn_rejected"), 0);
}

using SetupLimit = Scenario;

// Peers that never reach an owner cost memory nobody authenticated: 64 of
// them at once, no more.
TEST_F(SetupLimit, ConnectionsBeyondSixtyFourWithoutAnOwnerAreRejected)
{
    constexpr int kLimit = 64;
    Params params = fast_params();
    params.negotiate_timeout_ms = 60000;
    Device master(O_NONBLOCK);
    ASSERT_EQ(master.set_params(params), 0);

    std::vector<std::unique_ptr<Client>> stalled;
    for (int i = 0; i < kLimit; i++) {
        auto c = Client::connect(server_addr(), kPort,
                                 PeerOptions::default_connect());
        ASSERT_TRUE(c) << "connection " << i + 1 << ": " << c.error().message;
        stalled.push_back(std::move(*c));
    }
    auto extra =
        Client::connect(server_addr(), kPort, PeerOptions::default_connect());
    EXPECT_FALSE(extra) << "connection " << kLimit + 1 << " was accepted";
    EXPECT_EQ(delta("conn_rejected"), 1);

    // one of them leaving makes room again
    stalled.pop_back();
    auto room = [&] {
        return Counters::now()["conn_active"] ==
               start_["conn_active"] + kLimit - 1;
    };
    for (int i = 0; i < 500 && !room(); i++)
        std::this_thread::sleep_for(10ms);
    {
        auto again = negotiated_client();
        EXPECT_TRUE(again) << again.error().message;
    }
    stalled.clear();
}

} // namespace
} // namespace scenario
