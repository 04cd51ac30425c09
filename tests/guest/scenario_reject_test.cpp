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
// them at once, no more. Four addresses fill the 64 slots in their shares
// (admission.c); a fifth address's connection then takes a slot from them
// rather than adding one, and one leaving makes room again.
TEST_F(SetupLimit, NoMoreThanSixtyFourConnectionsWithoutAnOwner)
{
    constexpr int kLimit = 64, kShare = 16;
    ExtraAddresses src(5);
    ASSERT_EQ(src.all().size(), 5u);
    Params params = fast_params();
    params.negotiate_timeout_ms = 60000;
    Device master(O_NONBLOCK);
    ASSERT_EQ(master.set_params(params), 0);
    auto connect = [&](int a) {
        const PeerOptions o = from_address(src.all()[a]);
        return Client::connect(o.addr, o.port, o.connect);
    };
    auto active = [&] {
        return int64_t(Counters::now()["conn_active"]) -
               int64_t(start_["conn_active"]);
    };

    std::vector<std::unique_ptr<Client>> stalled;
    for (int i = 0; i < kLimit; i++) {
        auto c = connect(i / kShare);
        ASSERT_TRUE(c) << "connection " << i + 1 << ": " << c.error().message;
        stalled.push_back(std::move(*c));
    }
    auto extra = connect(4);
    ASSERT_TRUE(extra) << "a fifth address: " << extra.error().message;
    EXPECT_EQ(delta("disconnect_evicted"), 1);
    for (int i = 0; i < 500 && active() > kLimit; i++)
        std::this_thread::sleep_for(10ms);
    EXPECT_EQ(active(), kLimit) << "more than 64 without an owner";

    // one of them leaving makes room again, without evicting
    stalled.pop_back();
    for (int i = 0; i < 500 && active() > kLimit - 1; i++)
        std::this_thread::sleep_for(10ms);
    {
        auto again = negotiated_client(from_address(src.all()[4]));
        EXPECT_TRUE(again) << again.error().message;
    }
    EXPECT_EQ(delta("disconnect_evicted"), 1);
    stalled.clear();
    (*extra)->close();
}

} // namespace
} // namespace scenario
