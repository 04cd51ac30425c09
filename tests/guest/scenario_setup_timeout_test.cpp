// The SMB2 setup's deadline: once the MS-SMBD negotiate is done, a client
// has setup_timeout_ms (not the negotiate timeout) for its SMB2 NEGOTIATE
// and first SESSION_SETUP, as the Linux client needs on a loaded machine.
#include <thread>

#include "scenario.h"

namespace scenario {
namespace {

constexpr uint64_t kSession = 0x5e70000000000001ull;

using SetupTimeout = Scenario;

// Each pause outlasts the negotiate timeout; both fit in the setup timeout.
TEST_F(SetupTimeout, SlowClientIsServedWithinTheSetupTimeout)
{
    Params params = fast_params();
    params.negotiate_timeout_ms = 1000;
    params.setup_timeout_ms = 8000;
    Smbd smbd(params, false, {kSession});
    auto client = peer([]() -> std::string {
        auto c = Client::connect(server_addr(), kPort,
                                 PeerOptions::default_connect());
        if (!c)
            return "connect: " + c.error().message;
        if (auto st = (*c)->negotiate(); !st)
            return "negotiate: " + st.error().message;
        std::this_thread::sleep_for(2s);
        if (auto r = (*c)->smb2_negotiate(PeerOptions::default_smb2()); !r)
            return "SMB2 NEGOTIATE after a pause: " + r.error().message;
        std::this_thread::sleep_for(2s);
        if (auto ss =
                (*c)->session_setup(session_setup_options(true, kSession));
            !ss)
            return "SESSION_SETUP after a pause: " + ss.error().message;
        if (std::string e = echo_once(**c, 0, 4096); !e.empty())
            return e;
        (*c)->close();
        return "";
    });
    ASSERT_TRUE(smbd.serve_peer(client)) << describe(smbd.master_events());
    EXPECT_EQ(verdict(client), "");
    EXPECT_EQ(delta("disconnect_setup_timeout"), 0);
    EXPECT_EQ(delta("disconnect_negotiate_timeout"), 0);
    ASSERT_EQ(smbd.disconnects().size(), 1u) << describe(smbd.master_events());
    EXPECT_EQ(smbd.disconnects().begin()->second, SMBD_REASON_PEER);
}

// 0, what a caller that predates the field passes: the negotiate timeout
// bounds the SMB2 setup too, and ends it as a setup timeout.
TEST_F(SetupTimeout, ZeroTakesTheNegotiateTimeout)
{
    Params params = fast_params();
    params.negotiate_timeout_ms = 1000;
    params.setup_timeout_ms = 0;
    Smbd smbd(params, false, {kSession});
    auto client = peer([]() -> std::string {
        auto c = negotiated_client();
        if (!c)
            return "connect and negotiate: " + c.error().message;
        auto st = (*c)->wait_peer_disconnect(10s);
        return st ? ""
                  : "no disconnect without a SESSION_SETUP: " +
                        st.error().message;
    });
    EXPECT_EQ(verdict(client), "");
    EXPECT_EQ(delta("disconnect_setup_timeout"), 1);
    EXPECT_EQ(delta("disconnect_negotiate_timeout"), 0);
    EXPECT_TRUE(smbd.master_events().empty()) << describe(smbd.master_events());
}

} // namespace
} // namespace scenario
