// Flow 2: a new session over RDMA. The listening master is offered the
// connection (token, ClientGuid, addresses); another file, in this process
// or in a forked child, claims it and owns it from then on. A child that
// dies with the connection open takes the connection with it.
#include <arpa/inet.h>
#include <atomic>
#include <cstring>
#include <fcntl.h>
#include <thread>

#include "scenario.h"

namespace scenario {
namespace {

constexpr uint64_t kNewSession = 0x2000000000000002ull;

void expect_guest_endpoint(const smbd_sockaddr &a, const char *what)
{
    in_addr want{};
    ASSERT_EQ(inet_pton(AF_INET, server_addr().c_str(), &want), 1);
    EXPECT_EQ(a.family, AF_INET) << what;
    EXPECT_EQ(std::memcmp(a.addr, &want, 4), 0)
        << what << ": not " << server_addr();
}

// The peer of flow 2: a new session, then PDUs of @sizes echoed.
std::string new_session_client(const std::vector<uint32_t> &sizes,
                               std::vector<uint8_t> *sent_negotiate)
{
    auto c = negotiated_client();
    if (!c)
        return "connect and negotiate: " + c.error().message;
    *sent_negotiate = (*c)->smb2_negotiate_request_bytes();
    auto ss = (*c)->session_setup(session_setup_options(false, 0));
    if (!ss)
        return "new-session SESSION_SETUP: " + ss.error().message;
    if ((*c)->session_id() != kNewSession)
        return "the SESSION_SETUP response came from someone else";
    for (size_t i = 0; i < sizes.size(); i++)
        if (std::string e = echo_once(**c, i, sizes[i]); !e.empty())
            return e;
    (*c)->close();
    return "";
}

using NewSession = Scenario;

TEST_F(NewSession, ListenerIsOfferedTheConnectionAndAnotherFileClaimsIt)
{
    const std::vector<uint32_t> sizes = {kHeader + 1, 4096, 200000};
    Device master(O_NONBLOCK), child(O_NONBLOCK);
    ASSERT_EQ(master.set_params(fast_params()), 0);
    ASSERT_EQ(master.listen(), 0);

    std::vector<uint8_t> sent_negotiate;
    auto client =
        peer([&] { return new_session_client(sizes, &sent_negotiate); });

    auto offer = next_event(master);
    ASSERT_TRUE(offer) << "no NEW_CONNECTION; the peer: " << verdict(client);
    ASSERT_EQ(offer->type(), SMBD_EVENT_NEW_CONNECTION) << describe(*offer);
    const auto &nc = offer->raw.u.new_connection;
    auto guid = PeerOptions::default_smb2().client_guid;
    EXPECT_TRUE(std::equal(guid.begin(), guid.end(), nc.client_guid))
        << "ClientGuid differs from the client's NEGOTIATE";
    EXPECT_FALSE(std::all_of(std::begin(nc.token), std::end(nc.token),
                             [](uint8_t b) { return b == 0; }));
    expect_guest_endpoint(nc.local, "local");
    expect_guest_endpoint(nc.remote, "remote");
    EXPECT_EQ(nc.local.port, kPort);
    EXPECT_NE(nc.remote.port, 0);

    uint64_t conn_id = 0;
    ASSERT_EQ(child.accept(nc.token, conn_id), 0);
    EXPECT_EQ(conn_id, offer->conn_id());
    auto channel = next_event(child);
    ASSERT_TRUE(channel) << "no NEW_CHANNEL on the claiming file";
    ASSERT_EQ(channel->type(), SMBD_EVENT_NEW_CHANNEL) << describe(*channel);
    EXPECT_EQ(channel->conn_id(), conn_id);
    EXPECT_EQ(channel->raw.flags, SMBD_CHANNEL_ACCEPTED);
    EXPECT_TRUE(std::ranges::equal(channel->session_setup(),
                                   session_setup_request(false, 0)));
    ASSERT_EQ(answer_session_setup(child, *channel, kNewSession), 0);

    for (size_t i = 0; i < sizes.size(); i++) {
        auto pdu = next_event(child);
        ASSERT_TRUE(pdu) << "no PDU " << i << "; the peer: " << verdict(client);
        ASSERT_EQ(pdu->type(), SMBD_EVENT_PDU_RECEIVED) << describe(*pdu);
        EXPECT_TRUE(pdu->data == test_pdu(kNewSession, i, sizes[i]))
            << "PDU " << i << " differs";
        ASSERT_EQ(echo(child, *pdu), 0);
    }
    auto gone = next_event(child);
    ASSERT_TRUE(gone);
    EXPECT_EQ(gone->type(), SMBD_EVENT_DISCONNECTED) << describe(*gone);
    EXPECT_EQ(gone->raw.u.disconnected.reason, SMBD_REASON_PEER);
    EXPECT_EQ(verdict(client), "");
    EXPECT_TRUE(
        std::ranges::equal(channel->negotiate_request(), sent_negotiate));
    // the offer is the master's only event: the connection is the child's
    EXPECT_TRUE(stays_quiet(master));
    EXPECT_EQ(delta("disconnect_peer"), 1);
}

TEST_F(NewSession, ForkedChildClaimsAndServesTheConnection)
{
    ChildOwner child(kNewSession); // forked before this test's RDMA
    Device master(O_NONBLOCK);
    ASSERT_EQ(master.set_params(fast_params()), 0);
    ASSERT_EQ(master.listen(), 0);

    std::vector<uint8_t> sent_negotiate;
    auto client = peer([&] {
        return new_session_client({kHeader + 1, 65536}, &sent_negotiate);
    });
    auto offer = next_event(master);
    ASSERT_TRUE(offer) << "no NEW_CONNECTION; the peer: " << verdict(client);
    ASSERT_EQ(offer->type(), SMBD_EVENT_NEW_CONNECTION) << describe(*offer);
    auto claimed = child.claim(offer->raw.u.new_connection.token);
    EXPECT_EQ(claimed.accept_err, 0) << strerror(claimed.accept_err);
    EXPECT_EQ(claimed.conn_id, offer->conn_id());

    EXPECT_EQ(verdict(client), "");
    auto report = child.finish();
    ASSERT_TRUE(report) << "the child did not see its connection end";
    EXPECT_EQ(report->channel_flags, SMBD_CHANNEL_ACCEPTED);
    EXPECT_EQ(report->pdus, 2u);
    EXPECT_EQ(report->reason, SMBD_REASON_PEER)
        << smbd::device::reason_name(report->reason);
    EXPECT_TRUE(stays_quiet(master));
}

using OwnerKilled = Scenario;

TEST_F(OwnerKilled, ClientSeesTheDisconnectWhenTheOwningChildIsKilled)
{
    ChildOwner child(kNewSession);
    Device master(O_NONBLOCK);
    ASSERT_EQ(master.set_params(fast_params()), 0);
    ASSERT_EQ(master.listen(), 0);

    std::atomic<bool> served{false};
    auto client = peer([&]() -> std::string {
        auto c = negotiated_client();
        if (!c)
            return "connect and negotiate: " + c.error().message;
        auto ss = (*c)->session_setup(session_setup_options(false, 0));
        if (!ss)
            return "SESSION_SETUP: " + ss.error().message;
        if (std::string e = echo_once(**c, 0, 4096); !e.empty())
            return e;
        served = true;
        if (auto st = (*c)->wait_peer_disconnect(10s); !st)
            return "expected the server to disconnect: " + st.error().message;
        return "";
    });
    auto offer = next_event(master);
    ASSERT_TRUE(offer) << "no NEW_CONNECTION; the peer: " << verdict(client);
    ASSERT_EQ(child.claim(offer->raw.u.new_connection.token).accept_err, 0);
    for (int i = 0; i < 500 && !served; i++)
        std::this_thread::sleep_for(20ms);
    ASSERT_TRUE(served) << "the child never served; the peer: "
                        << verdict(client);

    child.kill();
    EXPECT_TRUE(child.killed());
    EXPECT_EQ(verdict(client), "");
    EXPECT_TRUE(settled());
    EXPECT_EQ(delta("disconnect_owner_closed"), 1);
    EXPECT_TRUE(stays_quiet(master));
}

} // namespace
} // namespace scenario
