// Connections without an owner hold a bounded number of slots, and one
// source (an address; an IPv6 /64) holds only a share of them: a flood
// from one source (or a few) does not keep another client out. Peers connect
// from extra addresses on the RDMA link's netdev, without sending the MS-SMBD
// negotiate, which keeps them in the first phase for the (long) negotiate
// timeout.
#include "scenario.h"

namespace scenario {
namespace {

// A connection from @source that gets no further than the CM's accept.
smbd::client::Result<std::unique_ptr<Client>>
connect_from(const std::string &source)
{
    const PeerOptions o = from_address(source);
    return Client::connect(o.addr, o.port, o.connect);
}

Params patient_params()
{
    Params p = fast_params();
    p.negotiate_timeout_ms = 120000; // held slots must not expire meanwhile
    return p;
}

using Admission = Scenario;

// One address fills its share and is refused beyond it, counted; another
// address still gets in and completes the negotiate.
TEST_F(Admission, OneAddressHoldsOnlyItsShare)
{
    ExtraAddresses src(2);
    ASSERT_EQ(src.all().size(), 2u);
    Smbd smbd(patient_params());
    std::vector<std::unique_ptr<Client>> held;
    std::string refusal;
    for (int i = 0; i < 80 && refusal.empty(); i++) {
        auto c = connect_from(src.all()[0]);
        if (c)
            held.push_back(std::move(*c));
        else
            refusal = c.error().message;
    }
    ASSERT_FALSE(refusal.empty())
        << held.size() << " connections, none refused";
    EXPECT_GE(held.size(), 1u);
    EXPECT_LT(held.size(), 64u) << "one address took every slot";
    EXPECT_EQ(delta("conn_rejected_source"), 1);

    auto other = negotiated_client(from_address(src.all()[1]));
    EXPECT_TRUE(other) << "the other address: " << other.error().message;
    EXPECT_EQ(delta("disconnect_evicted"), 0);
    for (auto &c : held)
        c->close();
    if (other)
        (*other)->close();
}

// When every slot is held, a newcomer from an address that holds none
// takes the oldest slot of an address that holds the most: that
// connection is ended (evicted) and the newcomer negotiates.
TEST_F(Admission, ANewcomerEvictsTheOldestOfTheLargestHolder)
{
    ExtraAddresses src(8);
    ASSERT_EQ(src.all().size(), 8u);
    Smbd smbd(patient_params());
    std::vector<std::unique_ptr<Client>> first_of; // each address's oldest
    std::vector<std::unique_ptr<Client>> held;
    bool evicted = false;
    size_t s = 0;
    for (; s < src.all().size() && !evicted; s++) {
        for (int i = 0; i < 80; i++) {
            const int64_t before = delta("disconnect_evicted");
            auto c = connect_from(src.all()[s]);
            if (!c)
                break; // its share is held
            if (delta("disconnect_evicted") != before) {
                ASSERT_EQ(i, 0) << "only a newcomer's address may evict";
                held.push_back(std::move(*c));
                evicted = true;
                break;
            }
            (i == 0 ? first_of : held).push_back(std::move(*c));
        }
    }
    ASSERT_TRUE(evicted) << "no eviction after " << s << " addresses, "
                         << held.size() + first_of.size() << " connections";
    EXPECT_EQ(delta("disconnect_evicted"), 1);
    // the oldest connection of all, the first address's first, is the one
    ASSERT_FALSE(first_of.empty());
    EXPECT_TRUE(first_of.front()->wait_peer_disconnect(10s))
        << "the oldest connection is still up";
    for (size_t k = 1; k < first_of.size(); k++)
        EXPECT_TRUE(first_of[k]->connected()) << "address " << k;
    // the newcomer is a working connection
    EXPECT_TRUE(held.back()->negotiate()) << "the newcomer's negotiate failed";
    for (auto &c : first_of)
        c->close();
    for (auto &c : held)
        c->close();
}

// Eight addresses hold eight slots each, all 64: a newcomer from one of
// them ties with the largest holder and is refused, evicting nobody.
TEST_F(Admission, ANewcomerThatTiesWithTheLargestHolderIsRefused)
{
    ExtraAddresses src(8);
    ASSERT_EQ(src.all().size(), 8u);
    Smbd smbd(patient_params());
    std::vector<std::unique_ptr<Client>> held;
    for (const auto &a : src.all())
        for (int i = 0; i < 8; i++) {
            auto c = connect_from(a);
            ASSERT_TRUE(c) << a << " #" << i << ": " << c.error().message;
            held.push_back(std::move(*c));
        }
    const int64_t rejected = delta("conn_rejected");
    auto newcomer = connect_from(src.all()[0]);
    EXPECT_FALSE(newcomer) << "a tie evicted";
    EXPECT_EQ(delta("conn_rejected"), rejected + 1);
    EXPECT_EQ(delta("conn_rejected_source"), 0);
    EXPECT_EQ(delta("disconnect_evicted"), 0);
    for (auto &c : held)
        EXPECT_TRUE(c->connected());
    for (auto &c : held)
        c->close();
}

// The addresses of one IPv6 /64, which one host may all use, are one
// source: they share its 16 slots.
TEST_F(Admission, TheAddressesOfAnIpv6SlashSixtyFourShareOneShare)
{
    ExtraAddresses src(17, true);
    ASSERT_EQ(src.all().size(), 17u);
    Smbd smbd(patient_params());
    std::vector<std::unique_ptr<Client>> held;
    std::string refusal;
    for (const auto &a : src.all()) {
        PeerOptions o = from_address(a);
        o.addr = server_addr6();
        auto c = Client::connect(o.addr, o.port, o.connect);
        if (!c) {
            refusal = a + ": " + c.error().message;
            break;
        }
        held.push_back(std::move(*c));
    }
    EXPECT_EQ(held.size(), 16u) << refusal;
    EXPECT_EQ(delta("conn_rejected_source"), 1);
    for (auto &c : held)
        c->close();
}

// Of the largest holder's connections, one that got least far goes, not
// the oldest: the first connection of the first address negotiated and
// waits for its SMB2 NEGOTIATE, so its address's second goes instead.
TEST_F(Admission, ANewcomerEvictsTheLeastAdvancedOfTheLargestHolder)
{
    ExtraAddresses src(5);
    ASSERT_EQ(src.all().size(), 5u);
    Params p = patient_params();
    p.setup_timeout_ms = 120000;
    Smbd smbd(p);
    std::vector<std::unique_ptr<Client>> held;
    for (size_t s = 0; s < 4; s++)
        for (int i = 0; i < 16; i++) {
            auto c = connect_from(src.all()[s]);
            ASSERT_TRUE(c) << s << " #" << i << ": " << c.error().message;
            if (s == 0 && i == 0) {
                ASSERT_TRUE((*c)->negotiate());
            }
            held.push_back(std::move(*c));
        }
    auto newcomer = connect_from(src.all()[4]);
    ASSERT_TRUE(newcomer) << newcomer.error().message;
    EXPECT_EQ(delta("disconnect_evicted"), 1);
    EXPECT_TRUE(held[1]->wait_peer_disconnect(10s))
        << "the oldest of the least advanced is still up";
    EXPECT_TRUE(held[0]->connected()) << "the negotiated one was evicted";
    for (size_t k = 2; k < held.size(); k++)
        EXPECT_TRUE(held[k]->connected()) << k;
    EXPECT_TRUE((*newcomer)->negotiate());
    for (auto &c : held)
        c->close();
    (*newcomer)->close();
}

} // namespace
} // namespace scenario
