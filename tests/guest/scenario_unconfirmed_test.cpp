// A channel bound to a registered session is no more trusted than any
// unauthenticated connection until its owner confirms it with the answer
// that completes the binding (a signed SESSION_SETUP response with
// STATUS_SUCCESS for the bound session): until then its PDUs are
// setup-sized, the setup timer runs whatever the peer sends, and it holds
// one of the slots of the unauthenticated.
#include <atomic>
#include <fcntl.h>
#include <functional>
#include <thread>

#include "reply.h"
#include "scenario.h"
#include "smb2_wire.h"

namespace scenario {
namespace {

constexpr uint64_t kSession = 0x5e5510aa00000077ull;
constexpr uint32_t kMoreProcessingRequired = 0xC0000016u;

class Unconfirmed : public Scenario {
  protected:
    // The peer binds and reads smbd's first answer, @answer(NEW_CHANNEL)
    // of status @status; its PDU above the setup size then must end the
    // channel as before binding (bad_smb2).
    void expect_setup_pdu_limit_after(
        const std::function<std::vector<uint8_t>(const Event &)> &answer,
        uint32_t status);
};

// smbd's answer to a SESSION_SETUP leg, with @status.
std::vector<uint8_t> session_setup_answer(std::span<const uint8_t> request,
                                          uint32_t status)
{
    std::string why;
    auto resp =
        smbd::responder::session_setup_response(request, kSession, &why);
    EXPECT_FALSE(resp.empty()) << why;
    if (resp.size() >= SMB2_HDR_STATUS + 4)
        for (int i = 0; i < 4; i++)
            resp[SMB2_HDR_STATUS + i] = static_cast<uint8_t>(status >> 8 * i);
    return resp;
}

// The peer's half of a binding's first leg: sent, and smbd's answer read.
std::string bind_and_read_answer(Client &c, uint32_t expected)
{
    if (auto st = c.send_pdu(session_setup_request(true, kSession)); !st)
        return "sending the binding SESSION_SETUP: " + st.error().message;
    auto resp = c.recv_pdu(10s);
    if (!resp)
        return "no SESSION_SETUP answer: " + resp.error().message;
    auto hdr = smbd::client::parse_smb2_response_header(*resp);
    if (!hdr)
        return "answer: " + hdr.error().message;
    if (hdr->status != expected)
        return "expected " + smbd::client::nt_status_text(expected) + ", got " +
               smbd::client::nt_status_text(hdr->status);
    return "";
}

void Unconfirmed::expect_setup_pdu_limit_after(
    const std::function<std::vector<uint8_t>(const Event &)> &answer,
    uint32_t status)
{
    Device master(O_NONBLOCK);
    ASSERT_EQ(master.set_params(fast_params()), 0);
    ASSERT_EQ(master.register_session(kSession), 0);
    auto client = peer([&]() -> std::string {
        auto c = negotiated_client();
        if (!c)
            return "connect and negotiate: " + c.error().message;
        if (auto e = bind_and_read_answer(**c, status); !e.empty())
            return e;
        auto big = test_pdu(kSession, 0, SMBD_MAX_SETUP_PDU + 1);
        // the driver may cut it off at its first fragment
        if (auto st = (*c)->send_pdu(big);
            !st && st.error().code !=
                       make_error_code(smbd::client::Errc::peer_disconnected))
            return "sending the large PDU: " + st.error().message;
        if (auto st = (*c)->wait_peer_disconnect(10s); !st)
            return "expected a disconnect: " + st.error().message;
        return "";
    });
    auto channel = next_event(master);
    ASSERT_TRUE(channel) << "no NEW_CHANNEL; the peer: " << verdict(client);
    ASSERT_EQ(channel->type(), SMBD_EVENT_NEW_CHANNEL) << describe(*channel);
    ASSERT_EQ(master.send_pdu(channel->conn_id(), answer(*channel)), 0);
    auto gone = next_event(master);
    ASSERT_TRUE(gone) << "the peer: " << verdict(client);
    EXPECT_EQ(gone->type(), SMBD_EVENT_DISCONNECTED) << describe(*gone);
    EXPECT_EQ(gone->raw.u.disconnected.reason, SMBD_REASON_BAD_SMB2)
        << describe(*gone);
    EXPECT_EQ(verdict(client), "");
    EXPECT_EQ(delta("disconnect_bad_smb2"), 1);
}

// An interim answer (the first of NTLMSSP's two legs) proves nothing: a
// PDU above the setup size ends the channel as it would before binding.
TEST_F(Unconfirmed, AnInterimAnswerKeepsTheSetupPduLimit)
{
    expect_setup_pdu_limit_after(
        [](const Event &channel) {
            return session_setup_answer(channel.session_setup(),
                                        kMoreProcessingRequired);
        },
        kMoreProcessingRequired);
}

// The second leg's STATUS_SUCCESS lifts the limits: the next PDU may be
// as large as the connection's MaxFragmentedSize.
TEST_F(Unconfirmed, SuccessLiftsTheLimits)
{
    Device master(O_NONBLOCK);
    ASSERT_EQ(master.set_params(fast_params()), 0);
    ASSERT_EQ(master.register_session(kSession), 0);
    const uint32_t big = 1u << 20;
    auto client = peer([&]() -> std::string {
        auto c = negotiated_client();
        if (!c)
            return "connect and negotiate: " + c.error().message;
        if (auto e = bind_and_read_answer(**c, kMoreProcessingRequired);
            !e.empty())
            return e;
        if (auto e = bind_and_read_answer(**c, NT_STATUS_SUCCESS); !e.empty())
            return "second leg: " + e;
        if (auto st = (*c)->send_pdu(test_pdu(kSession, 1, big)); !st)
            return "sending the large PDU: " + st.error().message;
        auto echo = (*c)->recv_pdu(10s);
        if (!echo)
            return "no echo of the large PDU: " + echo.error().message;
        // confirmed, the setup timer (2 s) no longer runs
        std::this_thread::sleep_for(3s);
        if (auto st = (*c)->send_pdu(test_pdu(kSession, 2, 512)); !st)
            return "after the setup timeout: " + st.error().message;
        if (auto again = (*c)->recv_pdu(10s); !again)
            return "no echo after the setup timeout: " + again.error().message;
        (*c)->close();
        return "";
    });
    auto channel = next_event(master);
    ASSERT_TRUE(channel) << "no NEW_CHANNEL; the peer: " << verdict(client);
    ASSERT_EQ(channel->type(), SMBD_EVENT_NEW_CHANNEL) << describe(*channel);
    ASSERT_EQ(master.send_pdu(channel->conn_id(),
                              session_setup_answer(channel->session_setup(),
                                                   kMoreProcessingRequired)),
              0);
    auto leg2 = next_event(master);
    ASSERT_TRUE(leg2) << "no second leg; the peer: " << verdict(client);
    ASSERT_EQ(leg2->type(), SMBD_EVENT_PDU_RECEIVED) << describe(*leg2);
    ASSERT_EQ(
        master.send_pdu(leg2->conn_id(),
                        session_setup_answer(leg2->data, NT_STATUS_SUCCESS)),
        0);
    auto pdu = next_event(master);
    ASSERT_TRUE(pdu) << "no large PDU; the peer: " << verdict(client);
    ASSERT_EQ(pdu->type(), SMBD_EVENT_PDU_RECEIVED) << describe(*pdu);
    EXPECT_TRUE(pdu->data == test_pdu(kSession, 1, big));
    ASSERT_EQ(echo(master, *pdu), 0);
    auto late = next_event(master);
    ASSERT_TRUE(late) << "no PDU after the setup timeout; the peer: "
                      << verdict(client);
    ASSERT_EQ(late->type(), SMBD_EVENT_PDU_RECEIVED) << describe(*late);
    ASSERT_EQ(echo(master, *late), 0);
    auto gone = next_event(master);
    ASSERT_TRUE(gone);
    EXPECT_EQ(gone->raw.u.disconnected.reason, SMBD_REASON_PEER)
        << describe(*gone);
    EXPECT_EQ(verdict(client), "");
}

// Traffic does not keep an unconfirmed channel alive: the setup timer
// ends it while the peer keeps sending.
TEST_F(Unconfirmed, AChannelNeverConfirmedTimesOutThoughThePeerTalks)
{
    Device master(O_NONBLOCK);
    ASSERT_EQ(master.set_params(fast_params()), 0);
    ASSERT_EQ(master.register_session(kSession), 0);
    auto client = peer([&]() -> std::string {
        auto c = negotiated_client();
        if (!c)
            return "connect and negotiate: " + c.error().message;
        if (auto st = (*c)->send_pdu(session_setup_request(true, kSession));
            !st)
            return "sending the binding SESSION_SETUP: " + st.error().message;
        // well past the setup timeout of fast_params(), well short of the
        // keepalive interval
        for (uint64_t n = 0; n < 40 && (*c)->connected(); n++) {
            if (auto st = (*c)->send_pdu(test_pdu(kSession, n, 512)); !st)
                break;
            (void)(*c)->wait_peer_disconnect(250ms);
        }
        return (*c)->connected() ? "still connected after 10 s" : "";
    });
    auto channel = next_event(master);
    ASSERT_TRUE(channel) << "no NEW_CHANNEL; the peer: " << verdict(client);
    ASSERT_EQ(channel->type(), SMBD_EVENT_NEW_CHANNEL) << describe(*channel);
    std::optional<Event> ev;
    while ((ev = next_event(master, 15s)) &&
           ev->type() == SMBD_EVENT_PDU_RECEIVED) {
    }
    ASSERT_TRUE(ev) << "no DISCONNECTED; the peer: " << verdict(client);
    EXPECT_EQ(ev->type(), SMBD_EVENT_DISCONNECTED) << describe(*ev);
    EXPECT_EQ(ev->raw.u.disconnected.reason, SMBD_REASON_SETUP_TIMEOUT)
        << describe(*ev);
    EXPECT_EQ(verdict(client), "");
    EXPECT_EQ(delta("disconnect_setup_timeout"), 1);
}

// A success for another session (a new one the peer set up on the bound
// channel, as it may) does not complete the binding.
TEST_F(Unconfirmed, AnotherSessionsSuccessConfirmsNothing)
{
    expect_setup_pdu_limit_after(
        [](const Event &channel) {
            std::string why;
            auto other = smbd::responder::session_setup_response(
                channel.session_setup(), kSession + 1, &why);
            EXPECT_FALSE(other.empty()) << why;
            return other;
        },
        NT_STATUS_SUCCESS);
}

// Unconfirmed bindings hold slots of the unauthenticated: one address's
// share of them runs out, and a binding confirmed, or one that ends, gives
// its slot back.
TEST_F(Unconfirmed, BindingsHoldTheirSlotsUntilConfirmedOrGone)
{
    ExtraAddresses src(1);
    ASSERT_EQ(src.all().size(), 1u);
    Params params = fast_params();
    params.setup_timeout_ms = 120000; // none may expire while they pile up
    Device master(O_NONBLOCK);
    ASSERT_EQ(master.set_params(params), 0);
    ASSERT_EQ(master.register_session(kSession), 0);
    std::atomic<int> adopted{0}, refused_at{-1}, step{0};
    auto client = peer([&]() -> std::string {
        std::vector<std::unique_ptr<Client>> held;
        // each binding waits until it was adopted; false: it was refused
        auto bind = [&](std::string &err) -> bool {
            auto c = negotiated_client(from_address(src.all()[0]));
            if (!c)
                return false; // the CM's connect was refused
            if (auto st = (*c)->send_pdu(session_setup_request(true, kSession));
                !st) {
                err = "sending a binding: " + st.error().message;
                return false;
            }
            for (auto until = std::chrono::steady_clock::now() + 20s;
                 std::chrono::steady_clock::now() < until;
                 std::this_thread::sleep_for(10ms))
                if (adopted.load() > static_cast<int>(held.size())) {
                    held.push_back(std::move(*c));
                    return true;
                }
            err = "a binding was neither adopted nor refused";
            return false;
        };
        std::string err;
        for (int i = 0; i < 80 && refused_at.load() < 0; i++)
            if (!bind(err)) {
                if (!err.empty())
                    return err;
                refused_at = i;
            }
        if (refused_at.load() < 0)
            return "80 bindings, none refused";
        // the master confirms one: its slot is free
        step = 1;
        while (step.load() != 2)
            std::this_thread::sleep_for(10ms);
        if (!bind(err))
            return "after a confirmation: " + (err.empty() ? "refused" : err);
        // one ends: its slot is free
        held[1]->close();
        held.erase(held.begin() + 1);
        std::this_thread::sleep_for(500ms);
        if (!bind(err))
            return "after a close: " + (err.empty() ? "refused" : err);
        for (auto &c : held)
            c->close();
        return "";
    });
    std::vector<Event> channels;
    auto serve_until = [&](const std::function<bool()> &done) {
        while (!done() && client.wait_for(0s) != std::future_status::ready) {
            auto ev = next_event(master, 100ms);
            if (!ev)
                continue;
            if (ev->type() == SMBD_EVENT_NEW_CHANNEL) {
                channels.push_back(std::move(*ev));
                adopted = static_cast<int>(channels.size());
            }
        }
    };
    serve_until([&] { return step.load() == 1; });
    ASSERT_GE(refused_at.load(), 1) << "the peer: " << verdict(client);
    EXPECT_LT(refused_at.load(), 64) << "one address took every slot";
    EXPECT_EQ(delta("conn_rejected_source"), 1);
    ASSERT_EQ(answer_session_setup(master, channels.front(), kSession), 0);
    step = 2;
    serve_until([] { return false; });
    EXPECT_EQ(verdict(client), "");
    EXPECT_EQ(channels.size(), static_cast<size_t>(refused_at.load()) + 2);
    EXPECT_EQ(delta("conn_rejected_source"), 1);
}

} // namespace
} // namespace scenario
