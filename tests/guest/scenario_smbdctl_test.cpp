// smbdctl shows a live connection as the driver sees it: state, session,
// owner and what it carried, for a person and as JSON.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <unistd.h>

#include "scenario.h"

namespace scenario {
namespace {

constexpr uint64_t kSession = 0x8000000000000008ull;

std::string smbdctl(const std::string &args)
{
    const char *build = std::getenv("SMBD_BUILD");
    std::string cmd = std::string(build ? build : "build") +
                      "/tools/smbdctl/smbdctl " + args + " 2>&1";
    std::string out;
    if (FILE *p = popen(cmd.c_str(), "r")) {
        char buf[4096];
        size_t n;
        while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
            out.append(buf, n);
        pclose(p);
    }
    return out;
}

using Smbdctl = Scenario;

TEST_F(Smbdctl, ShowsTheBoundConnectionWithItsTraffic)
{
    Smbd smbd(fast_params(), false, {kSession});
    std::atomic<bool> echoed{false}, go{false};
    auto client = echo_then_idle(kSession, echoed, go);
    ASSERT_TRUE(smbd.serve([&] { return echoed.load(); })) << verdict(client);
    ASSERT_FALSE(smbd.master_events().empty());
    const uint64_t conn = smbd.master_events().front().conn_id();

    // NEGOTIATE, SESSION_SETUP and the echo each way; the last send
    // completion may trail the client's receipt by a moment
    const std::string want =
        "{\"id\": " + std::to_string(conn) + ", \"state\": \"owned\"";
    std::string json;
    for (int i = 0; i < 100; i++) {
        json = smbdctl("--json");
        if (json.find("\"pdus_sent\": 3") != std::string::npos)
            break;
        std::this_thread::sleep_for(20ms);
    }
    EXPECT_NE(json.find(want), std::string::npos) << json;
    EXPECT_NE(json.find("\"session\": \"0x8000000000000008\""),
              std::string::npos)
        << json;
    EXPECT_NE(json.find("\"owner_pid\": " + std::to_string(getpid())),
              std::string::npos)
        << json;
    EXPECT_NE(json.find("\"pdus_received\": 3"), std::string::npos) << json;
    EXPECT_NE(json.find("\"pdus_sent\": 3"), std::string::npos) << json;
    EXPECT_NE(json.find("\"counters\": {"), std::string::npos) << json;
    EXPECT_NE(json.find("\"transport\": \"roce\""), std::string::npos) << json;
    EXPECT_NE(json.find("\"serves\": \"ib,roce\""), std::string::npos) << json;

    std::string text = smbdctl("");
    EXPECT_NE(text.find("connections: 1"), std::string::npos) << text;
    EXPECT_NE(text.find("#" + std::to_string(conn) + " owned roce"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find(server_addr() + ":445 for ib,roce"), std::string::npos)
        << text;
    EXPECT_NE(text.find("RDMA port 445 for InfiniBand and RoCE, 5445 for "
                        "iWARP and InfiniBand and RoCE"),
              std::string::npos)
        << text;

    go = true;
    ASSERT_TRUE(smbd.serve_peer(client)) << describe(smbd.master_events());
    EXPECT_EQ(verdict(client), "");
    EXPECT_NE(smbdctl("").find("connections: 0"), std::string::npos);
}

} // namespace
} // namespace scenario
