// Every hostile mode of the client breaks one rule; the driver must end the
// connection with the reason the mode names, count it, tell the owner (if
// the connection got that far) and leak nothing.
#include <algorithm>
#include <cctype>

#include "hostile.h"
#include "run.h"
#include "scenario.h"

namespace scenario {
namespace {

using smbd::client::Hostile;
using smbd::client::HostileInfo;

constexpr uint64_t kSession = 0x4000000000000004ull;

// Modes that get through SESSION_SETUP, so smbd owns the connection.
bool reaches_owner(Hostile h)
{
    return h == Hostile::none || h == Hostile::never_grant ||
           h == Hostile::mid_fragment_disconnect ||
           h == Hostile::ignore_keepalive || h == Hostile::flood ||
           h == Hostile::pipelined_setup;
}

class HostileMode : public Scenario,
                    public ::testing::WithParamInterface<HostileInfo> {};

TEST_P(HostileMode, DisconnectsWithTheReasonTheModeNames)
{
    const HostileInfo &mode = GetParam();
    // The timeout a mode provokes runs out in about a second; the others
    // stay long, so that a slow (debug) kernel working through a mode's
    // messages does not reach one of them first.
    auto provokes = [&](uint32_t reason, uint32_t otherwise) {
        return mode.reason == reason ? 1000u : otherwise;
    };
    Params params = fast_params();
    params.negotiate_timeout_ms =
        provokes(SMBD_REASON_NEGOTIATE_TIMEOUT, 30000);
    params.setup_timeout_ms = provokes(SMBD_REASON_SETUP_TIMEOUT, 30000);
    params.credit_timeout_ms = provokes(SMBD_REASON_CREDIT_TIMEOUT, 30000);
    params.keepalive_interval_ms =
        provokes(SMBD_REASON_KEEPALIVE_TIMEOUT, params.keepalive_interval_ms);
    params.keepalive_timeout_ms =
        provokes(SMBD_REASON_KEEPALIVE_TIMEOUT, params.keepalive_timeout_ms);
    Smbd smbd(params, false, {kSession});

    smbd::client::RunOptions opt;
    opt.addr = server_addr();
    opt.connect = PeerOptions::default_connect();
    // never-grant ends once the server spent what was granted: keep it small
    opt.connect.receive_credit_max = 16;
    opt.smb2 = PeerOptions::default_smb2();
    opt.bind = true;
    opt.bind_session = kSession;
    opt.pdus = 8;
    opt.hostile = mode.mode;
    opt.wait = 10s;
    smbd::client::RunReport report;
    auto client = peer([&] {
        report = smbd::client::run(opt);
        return report.ok ? std::string() : report.outcome;
    });
    ASSERT_TRUE(smbd.serve_peer(client)) << describe(smbd.master_events());
    std::string steps;
    for (const std::string &s : report.steps)
        steps += "\n  " + s;
    EXPECT_EQ(verdict(client), "") << "client steps:" << steps;

    std::string counter =
        std::string("disconnect_") + smbd::device::reason_name(mode.reason);
    EXPECT_EQ(delta(counter), 1) << counter;
    if (reaches_owner(mode.mode)) {
        ASSERT_EQ(smbd.disconnects().size(), 1u)
            << describe(smbd.master_events());
        EXPECT_EQ(smbd.disconnects().begin()->second, mode.reason)
            << "expected " << smbd::device::reason_name(mode.reason) << ": "
            << describe(smbd.master_events());
        EXPECT_EQ(smbd.master_events().back().type(), SMBD_EVENT_DISCONNECTED);
    }
    else {
        EXPECT_TRUE(smbd.master_events().empty())
            << describe(smbd.master_events());
    }
    if (mode.mode == Hostile::mid_fragment_disconnect) {
        EXPECT_TRUE(std::none_of(
            smbd.master_events().begin(), smbd.master_events().end(),
            [](const Event &ev) {
                return ev.type() == SMBD_EVENT_PDU_RECEIVED;
            }))
            << "the partial PDU was delivered: "
            << describe(smbd.master_events());
    }
}

std::string mode_name(const ::testing::TestParamInfo<HostileInfo> &info)
{
    std::string s(info.param.name);
    std::replace(s.begin(), s.end(), '-', '_');
    return s;
}

INSTANTIATE_TEST_SUITE_P(
    Table, HostileMode,
    ::testing::ValuesIn(smbd::client::hostile_modes().begin(),
                        smbd::client::hostile_modes().end()),
    mode_name);

} // namespace
} // namespace scenario
