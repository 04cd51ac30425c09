// The send credit grant deadline: a send that waits for the peer's credits
// has credit_timeout_ms (not the keepalive timeout), as the Linux client
// needs when its reader is slow on a loaded machine; the PDU first in the
// queue has as long to go whole, however the peer grants meanwhile.
#include "scenario.h"

namespace scenario {
namespace {

constexpr uint64_t kSession = 0x5e70000000000002ull;
constexpr uint32_t kSize = 512;

Params credit_params(uint32_t credit_timeout_ms)
{
    Params p = fast_params();
    p.keepalive_timeout_ms = 1000;
    p.credit_timeout_ms = credit_timeout_ms;
    return p;
}

// Echoes PDUs without granting the server new credits until an echo does
// not come within @wait: the server spent its credits and waits for more.
// The echoes that came; the error that ended the wait in @end.
uint64_t spend_server_credits(Client &c, std::chrono::milliseconds wait,
                              smbd::client::Error &end, std::string &problem)
{
    c.set_repost_receives(false);
    for (uint64_t n = 0; n < 4096; n++) {
        smbd::client::EchoSpec spec{2 + n, c.session_id(), kSize};
        if (auto st = c.send_pdu(smbd::client::build_echo_pdu(spec)); !st) {
            problem =
                "sending PDU " + std::to_string(n) + ": " + st.error().message;
            return n;
        }
        auto got = c.recv_pdu(wait);
        if (!got) {
            end = got.error();
            return n;
        }
        if (auto st = smbd::client::verify_echo(spec, *got); !st) {
            problem = st.error().message;
            return n;
        }
    }
    problem = "the server never ran out of credits";
    return 0;
}

// The server's credits spent, as above, and the server seen waiting: ""
// and the echoes that came in @n, or what went wrong.
std::string stall_the_server(Client &c, std::chrono::milliseconds wait,
                             uint64_t &n)
{
    smbd::client::Error end;
    std::string problem;
    n = spend_server_credits(c, wait, end, problem);
    if (!problem.empty())
        return problem;
    if (end.code != make_error_code(smbd::client::Errc::timeout))
        return "waiting for echo " + std::to_string(n) + ": " + end.message;
    return "";
}

using CreditTimeout = Scenario;

// The stall outlasts the keepalive timeout and fits in the credit timeout:
// once the client grants again, the held echo arrives and the connection
// goes on.
TEST_F(CreditTimeout, LateGrantWithinTheCreditTimeoutKeepsTheConnection)
{
    Smbd smbd(credit_params(10000), false, {kSession});
    auto client = peer([]() -> std::string {
        auto c = bound_client(kSession);
        if (!c)
            return c.error().message;
        uint64_t n = 0;
        if (auto e = stall_the_server(**c, 2500ms, n); !e.empty())
            return e;
        (*c)->set_repost_receives(true);
        smbd::client::EchoSpec held{2 + n, (*c)->session_id(), kSize};
        auto got = (*c)->recv_pdu(10s);
        if (!got)
            return "the held echo after the grant: " + got.error().message;
        if (auto st = smbd::client::verify_echo(held, *got); !st)
            return st.error().message;
        if (std::string e = echo_once(**c, n + 1, 4096); !e.empty())
            return "after the stall: " + e;
        (*c)->close();
        return "";
    });
    ASSERT_TRUE(smbd.serve_peer(client)) << describe(smbd.master_events());
    EXPECT_EQ(verdict(client), "");
    EXPECT_GE(delta("credit_stalls"), 1);
    EXPECT_EQ(delta("disconnect_credit_timeout"), 0);
    ASSERT_EQ(smbd.disconnects().size(), 1u) << describe(smbd.master_events());
    EXPECT_EQ(smbd.disconnects().begin()->second, SMBD_REASON_PEER);
}

// 0, what a caller that predates the field passes: the keepalive timeout
// bounds the wait for credits.
TEST_F(CreditTimeout, ZeroTakesTheKeepaliveTimeout)
{
    Smbd smbd(credit_params(0), false, {kSession});
    auto client = peer([]() -> std::string {
        auto c = bound_client(kSession);
        if (!c)
            return c.error().message;
        smbd::client::Error end;
        std::string problem;
        spend_server_credits(**c, 10s, end, problem);
        if (!problem.empty())
            return problem;
        if (end.code != make_error_code(smbd::client::Errc::peer_disconnected))
            return "no disconnect while holding back credits: " + end.message;
        return "";
    });
    ASSERT_TRUE(smbd.serve_peer(client)) << describe(smbd.master_events());
    EXPECT_EQ(verdict(client), "");
    EXPECT_EQ(delta("disconnect_credit_timeout"), 1);
    ASSERT_EQ(smbd.disconnects().size(), 1u) << describe(smbd.master_events());
    EXPECT_EQ(smbd.disconnects().begin()->second, SMBD_REASON_CREDIT_TIMEOUT);
}

// One credit every half second keeps every single message inside the
// credit timeout, but a PDU of many fragments crawls: it has the credit
// timeout to go whole, then the connection ends.
TEST_F(CreditTimeout, AGrantNowAndThenDoesNotKeepAPduWaitingForEver)
{
    // the held echo of the spending waits 1.5 s, well inside the timeout
    Smbd smbd(credit_params(4000), false, {kSession});
    auto client = peer([]() -> std::string {
        auto c = bound_client(kSession);
        if (!c)
            return c.error().message;
        uint64_t n = 0;
        if (auto e = stall_the_server(**c, 1500ms, n); !e.empty())
            return e;
        // about 48 fragments to echo, one credit each
        smbd::client::EchoSpec big{3 + n, (*c)->session_id(), 64u << 10};
        if (auto st = (*c)->send_pdu(smbd::client::build_echo_pdu(big)); !st)
            return "sending the large PDU: " + st.error().message;
        // past the 24 s the trickle takes to carry the PDU whole: a
        // debug kernel on a busy machine may take long to get there
        for (int i = 0; i < 120 && (*c)->connected(); i++) {
            (*c)->grant_receives(1);
            (void)(*c)->recv(500ms);
        }
        return (*c)->connected() ? "still connected after 60 s" : "";
    });
    ASSERT_TRUE(smbd.serve_peer(client)) << describe(smbd.master_events());
    EXPECT_EQ(verdict(client), "");
    EXPECT_EQ(delta("disconnect_credit_timeout"), 1);
    ASSERT_EQ(smbd.disconnects().size(), 1u) << describe(smbd.master_events());
    EXPECT_EQ(smbd.disconnects().begin()->second, SMBD_REASON_CREDIT_TIMEOUT);
}

} // namespace
} // namespace scenario
