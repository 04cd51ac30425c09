// Keepalive: an idle peer that answers the driver's keepalive requests
// stays connected; one that stops reading is disconnected for it.
#include <thread>

#include "run.h"
#include "scenario.h"

namespace scenario {
namespace {

constexpr uint64_t kSession = 0x3000000000000003ull;

Params keepalive_params()
{
    Params p = fast_params();
    p.keepalive_interval_ms = 1000;
    p.keepalive_timeout_ms = 1000;
    return p;
}

using Keepalive = Scenario;

TEST_F(Keepalive, IdleClientThatAnswersStaysConnectedForSeveralIntervals)
{
    Smbd smbd(keepalive_params(), false, {kSession});
    uint32_t requests = 0;
    auto client = peer([&]() -> std::string {
        auto c = bound_client(kSession);
        if (!c)
            return c.error().message;
        // idle for four and a half intervals, answering what comes
        auto until = std::chrono::steady_clock::now() + 4500ms;
        while (std::chrono::steady_clock::now() < until && (*c)->connected()) {
            (*c)->poll_events();
            std::this_thread::sleep_for(50ms);
        }
        requests = (*c)->observed().keepalive_requests;
        if (std::string e = echo_once(**c, 0, 4096); !e.empty())
            return "after idling: " + e;
        (*c)->close();
        return "";
    });
    ASSERT_TRUE(smbd.serve_peer(client)) << describe(smbd.master_events());
    EXPECT_EQ(verdict(client), "");
    EXPECT_GE(requests, 2u) << "keepalive requests the client saw";
    EXPECT_GE(delta("keepalives_sent"), 2);
    EXPECT_EQ(delta("disconnect_keepalive_timeout"), 0);
    ASSERT_EQ(smbd.disconnects().size(), 1u);
    EXPECT_EQ(smbd.disconnects().begin()->second, SMBD_REASON_PEER);
}

TEST_F(Keepalive, ClientThatIgnoresKeepalivesIsDisconnectedForIt)
{
    Smbd smbd(keepalive_params(), false, {kSession});
    smbd::client::RunOptions opt;
    opt.addr = server_addr();
    opt.connect = PeerOptions::default_connect();
    opt.smb2 = PeerOptions::default_smb2();
    opt.bind = true;
    opt.bind_session = kSession;
    opt.hostile = smbd::client::Hostile::ignore_keepalive;
    opt.wait = 10s;
    smbd::client::RunReport report;
    auto client = peer([&] {
        report = smbd::client::run(opt);
        return report.ok ? std::string() : report.outcome;
    });
    ASSERT_TRUE(smbd.serve_peer(client)) << describe(smbd.master_events());
    EXPECT_EQ(verdict(client), "");
    ASSERT_EQ(smbd.disconnects().size(), 1u) << describe(smbd.master_events());
    EXPECT_EQ(smbd.disconnects().begin()->second, SMBD_REASON_KEEPALIVE_TIMEOUT)
        << describe(smbd.master_events());
    EXPECT_EQ(delta("disconnect_keepalive_timeout"), 1);
    EXPECT_GE(delta("keepalives_sent"), 1);
}

// smbd stops reading for four keepalive intervals while the peer has more
// PDUs to send than the driver queues: the driver stops granting credits,
// but grants one with each keepalive request, so the live peer can answer
// and nothing is lost once smbd reads again.
TEST_F(Keepalive, SlowOwnerDoesNotCostALivePeerItsConnection)
{
    constexpr uint32_t kPdus = 400, kSize = 4096;
    Smbd smbd(keepalive_params(), false, {kSession});
    auto client = peer([&]() -> std::string {
        auto c = bound_client(kSession);
        if (!c)
            return c.error().message;
        for (uint32_t i = 0; i < kPdus; i++)
            if (auto st = (*c)->send_pdu(test_pdu(kSession, i, kSize)); !st)
                return "PDU " + std::to_string(i) + ": " + st.error().message;
        for (uint32_t i = 0; i < kPdus; i++) {
            auto got = (*c)->recv_pdu(20s);
            if (!got)
                return "echo " + std::to_string(i) + ": " + got.error().message;
        }
        (*c)->close();
        return "";
    });
    ASSERT_TRUE(smbd.serve([&] {
        for (const Event &ev : smbd.master_events())
            if (ev.type() == SMBD_EVENT_NEW_CHANNEL)
                return true;
        return false;
    })) << verdict(client);
    // smbd reads nothing until the driver has throttled the peer or asked
    // it whether it lives (a slow kernel takes a while to get there), and
    // then for four keepalive intervals more
    for (auto until = std::chrono::steady_clock::now() + 120s;
         delta("credit_stalls") + delta("keepalives_sent") == 0 &&
         std::chrono::steady_clock::now() < until;)
        std::this_thread::sleep_for(100ms);
    std::this_thread::sleep_for(4s);
    ASSERT_TRUE(smbd.serve_peer(client)) << describe(smbd.master_events());
    EXPECT_EQ(verdict(client), "");
    EXPECT_GE(delta("credit_stalls") + delta("keepalives_sent"), 1);
    EXPECT_EQ(delta("disconnect_keepalive_timeout"), 0);
    ASSERT_EQ(smbd.disconnects().size(), 1u);
    EXPECT_EQ(smbd.disconnects().begin()->second, SMBD_REASON_PEER)
        << describe(smbd.master_events());
}

} // namespace
} // namespace scenario
