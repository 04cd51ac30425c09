// Flow 1: a client binds an RDMA channel to a session an smbd registered.
// The registering file gets the channel with the exact NEGOTIATE and
// SESSION_SETUP bytes; an unknown session is refused without any event.
#include <fcntl.h>
#include <numeric>

#include "scenario.h"
#include "smb2_wire.h"

namespace scenario {
namespace {

constexpr uint64_t kSession = 0x1122334455667788ull;

using BoundChannel = Scenario;

// From one byte past the header to the 1 MiB MaxFragmentedSize (about 800
// fragments of 1340 bytes), with the fragment boundary on both sides.
const std::vector<uint32_t> kSizes = {kHeader + 1, 1340,  1341,
                                      4096,        65536, 1u << 20};

TEST_F(BoundChannel,
       DeliversTheNegotiateBytesAndEchoesPdusUpToMaxFragmentedSize)
{
    Device master(O_NONBLOCK);
    ASSERT_EQ(master.set_params(fast_params()), 0);
    ASSERT_EQ(master.register_session(kSession), 0);

    std::vector<uint8_t> sent_negotiate, got_negotiate;
    auto client = peer([&]() -> std::string {
        auto c = negotiated_client();
        if (!c)
            return "connect and negotiate: " + c.error().message;
        sent_negotiate = (*c)->smb2_negotiate_request_bytes();
        got_negotiate = (*c)->smb2_negotiate_response_bytes();
        auto ss = (*c)->session_setup(session_setup_options(true, kSession));
        if (!ss)
            return "binding SESSION_SETUP: " + ss.error().message;
        for (size_t i = 0; i < kSizes.size(); i++)
            if (std::string e = echo_once(**c, i, kSizes[i]); !e.empty())
                return e;
        (*c)->close();
        return "";
    });

    auto channel = next_event(master);
    ASSERT_TRUE(channel) << "no NEW_CHANNEL; the peer: " << verdict(client);
    ASSERT_EQ(channel->type(), SMBD_EVENT_NEW_CHANNEL) << describe(*channel);
    EXPECT_EQ(channel->raw.flags, SMBD_CHANNEL_BOUND);
    EXPECT_EQ(channel->raw.u.new_channel.session_id, kSession);
    EXPECT_EQ(channel->raw.u.new_channel.dialect, SMB2_DIALECT_311);
    EXPECT_TRUE(std::ranges::equal(channel->session_setup(),
                                   session_setup_request(true, kSession)))
        << "the SESSION_SETUP bytes differ from what the client sent";
    ASSERT_EQ(answer_session_setup(master, *channel, kSession), 0);

    for (size_t i = 0; i < kSizes.size(); i++) {
        auto pdu = next_event(master);
        ASSERT_TRUE(pdu) << "no PDU of " << kSizes[i]
                         << " bytes; the peer: " << verdict(client);
        ASSERT_EQ(pdu->type(), SMBD_EVENT_PDU_RECEIVED) << describe(*pdu);
        EXPECT_EQ(pdu->conn_id(), channel->conn_id());
        EXPECT_TRUE(pdu->data == test_pdu(kSession, i, kSizes[i]))
            << "PDU " << i << " of " << kSizes[i] << " bytes arrived as "
            << pdu->data.size() << " different bytes";
        ASSERT_EQ(echo(master, *pdu), 0);
    }
    auto gone = next_event(master);
    ASSERT_TRUE(gone);
    EXPECT_EQ(gone->type(), SMBD_EVENT_DISCONNECTED) << describe(*gone);
    EXPECT_EQ(gone->raw.u.disconnected.reason, SMBD_REASON_PEER)
        << describe(*gone);
    EXPECT_EQ(verdict(client), "");

    // what smbd needs for its connection state and preauth hash: the very
    // bytes on the wire, both ways
    EXPECT_TRUE(
        std::ranges::equal(channel->negotiate_request(), sent_negotiate))
        << "NEGOTIATE request: " << channel->negotiate_request().size()
        << " bytes delivered, the client sent " << sent_negotiate.size();
    EXPECT_TRUE(
        std::ranges::equal(channel->negotiate_response(), got_negotiate))
        << "NEGOTIATE response: " << channel->negotiate_response().size()
        << " bytes delivered, the client received " << got_negotiate.size();

    uint64_t bytes =
        std::accumulate(kSizes.begin(), kSizes.end(), uint64_t{0}) +
        sent_negotiate.size() + session_setup_request(true, kSession).size();
    EXPECT_EQ(delta("negotiated"), 1);
    EXPECT_EQ(delta("pdus_received"), int64_t(kSizes.size() + 2));
    EXPECT_EQ(delta("bytes_received"), int64_t(bytes));
    EXPECT_EQ(delta("pdus_sent"), int64_t(kSizes.size() + 2));
    EXPECT_EQ(delta("disconnect_peer"), 1);
}

// Two clients bind to one session: both channels go to the registering
// file under their own connection ids, and traffic on one stays on it.
TEST_F(BoundChannel, TwoChannelsOfOneSessionCarryTheirOwnTraffic)
{
    Smbd smbd(fast_params(), false, {kSession});
    auto clients = peer([&]() -> std::string {
        std::unique_ptr<Client> c[2];
        for (auto &ci : c) {
            auto n = negotiated_client();
            if (!n)
                return "connect and negotiate: " + n.error().message;
            ci = std::move(*n);
            auto ss = ci->session_setup(session_setup_options(true, kSession));
            if (!ss)
                return "binding SESSION_SETUP: " + ss.error().message;
        }
        // both bound before either carries a PDU; then interleaved
        for (uint32_t i = 0; i < 4; i++)
            for (int k = 0; k < 2; k++)
                if (std::string e = echo_once(*c[k], i, 100 + 1000 * k + i);
                    !e.empty())
                    return "channel " + std::to_string(k) + ": " + e;
        c[0]->close();
        c[1]->close();
        return "";
    });
    ASSERT_TRUE(smbd.serve_peer(clients)) << describe(smbd.master_events());
    EXPECT_EQ(verdict(clients), "");

    std::vector<uint64_t> channels;
    for (const Event &ev : smbd.master_events())
        if (ev.type() == SMBD_EVENT_NEW_CHANNEL) {
            EXPECT_EQ(ev.raw.flags, SMBD_CHANNEL_BOUND);
            EXPECT_EQ(ev.raw.u.new_channel.session_id, kSession);
            channels.push_back(ev.conn_id());
        }
    ASSERT_EQ(channels.size(), 2u) << describe(smbd.master_events());
    EXPECT_NE(channels[0], channels[1]);
    for (int k = 0; k < 2; k++) {
        std::vector<uint32_t> sizes;
        for (const Event &ev : smbd.master_events())
            if (ev.conn_id() == channels[k] &&
                ev.type() == SMBD_EVENT_PDU_RECEIVED)
                sizes.push_back(uint32_t(ev.data.size()));
        std::vector<uint32_t> want;
        for (uint32_t i = 0; i < 4; i++)
            want.push_back(100 + 1000 * k + i);
        EXPECT_EQ(sizes, want) << "channel " << k;
        EXPECT_EQ(smbd.disconnects().at(channels[k]), SMBD_REASON_PEER);
    }
    EXPECT_TRUE(smbd.acceptor_events().empty());
    EXPECT_EQ(delta("disconnect_peer"), 2);
}

using UnknownSession = Scenario;

TEST_F(UnknownSession,
       ClientGetsUserSessionDeletedThenDisconnectAndNoFileHearsOfIt)
{
    // a listener and a registered session exist; neither may see this one
    Smbd smbd(fast_params(), true, {kSession});
    auto client = peer([&]() -> std::string {
        auto c = negotiated_client();
        if (!c)
            return "connect and negotiate: " + c.error().message;
        if (auto st = (*c)->send_pdu(session_setup_request(true, kSession + 1));
            !st)
            return "sending the binding SESSION_SETUP: " + st.error().message;
        auto resp = (*c)->recv_pdu(5s);
        if (!resp)
            return "no SESSION_SETUP response: " + resp.error().message;
        auto hdr = smbd::client::parse_smb2_response_header(*resp);
        if (!hdr)
            return "response: " + hdr.error().message;
        if (hdr->status != NT_STATUS_USER_SESSION_DELETED)
            return "expected STATUS_USER_SESSION_DELETED, got " +
                   smbd::client::nt_status_text(hdr->status);
        if (auto st = (*c)->wait_peer_disconnect(5s); !st)
            return "expected a disconnect after the error: " +
                   st.error().message;
        return "";
    });
    EXPECT_EQ(verdict(client), "");
    EXPECT_TRUE(stays_quiet(smbd.master()));
    EXPECT_TRUE(stays_quiet(smbd.acceptor()));
    EXPECT_TRUE(settled());
    EXPECT_EQ(delta("disconnect_unknown_session"), 1);
}

} // namespace
} // namespace scenario
