// Without a master's parameters there is nothing to answer with: RDMA
// connections are rejected before SET_PARAMS and again once the master's
// file is closed.
#include <fcntl.h>

#include "scenario.h"

namespace scenario {
namespace {

using NoParams = Scenario;

TEST_F(NoParams, ConnectIsRejectedBeforeSetParamsAndAfterTheMasterClosed)
{
    auto before = Client::connect(server_addr(), kPort,
                                  PeerOptions::default_connect());
    EXPECT_FALSE(before) << "connected with no parameters set";
    EXPECT_EQ(delta("conn_requests"), 1);
    EXPECT_EQ(delta("conn_rejected"), 1);

    {
        // the same connect works while a master holds the parameters
        Device master(O_NONBLOCK);
        ASSERT_EQ(master.set_params(fast_params()), 0);
        auto during = negotiated_client();
        EXPECT_TRUE(during) << during.error().message;
        EXPECT_EQ(delta("conn_rejected"), 1);
    }
    ASSERT_TRUE(settled());

    auto after = Client::connect(server_addr(), kPort,
                                 PeerOptions::default_connect());
    EXPECT_FALSE(after) << "connected after the master's file was closed";
    EXPECT_EQ(delta("conn_requests"), 3);
    EXPECT_EQ(delta("conn_rejected"), 2);
}

} // namespace
} // namespace scenario
