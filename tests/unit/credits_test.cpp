// MS-SMBD credit accounting (3.1.5.1, 3.1.5.8, 3.1.5.9): each rule of the
// state machine on its own, then two simulated peers that follow the verdicts
// and must never get stuck.
#include "credits.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <ostream>
#include <random>
#include <sstream>
#include <string>

// Failures print "NO_RECEIVE_CREDIT" instead of a bare number.
static void PrintTo(smbd_proto_error err, std::ostream *os)
{
    *os << "SMBD_E_" << smbd_proto_error_name(err);
}

static void PrintTo(smbd_send_verdict v, std::ostream *os)
{
    switch (v) {
    case SMBD_SEND_OK:
        *os << "SMBD_SEND_OK";
        return;
    case SMBD_SEND_NO_CREDIT:
        *os << "SMBD_SEND_NO_CREDIT";
        return;
    case SMBD_SEND_NEED_GRANT:
        *os << "SMBD_SEND_NEED_GRANT";
        return;
    }
    *os << "smbd_send_verdict(" << static_cast<int>(v) << ")";
}

namespace {

smbd_conn_params Conn(uint16_t recv_max, uint16_t recv_target,
                      uint16_t send_target = 255)
{
    smbd_conn_params p = {};
    p.receive_credit_max = recv_max;
    p.receive_credit_target = recv_target;
    p.send_credit_target = send_target;
    p.max_send_size = 1364;
    p.max_receive_size = 1364;
    p.max_fragmented_send_size = 1048576;
    p.max_fragmented_recv_size = 1048576;
    p.max_read_write_size = 1048576;
    return p;
}

smbd_credits Init(uint16_t recv_max, uint16_t recv_target,
                  uint16_t send_credits = 0)
{
    smbd_credits c;
    const smbd_conn_params p = Conn(recv_max, recv_target);
    smbd_credits_init(&c, &p, send_credits);
    return c;
}

// A received message that grants @granted and asks for @requested.
smbd_data_hdr Hdr(uint16_t granted, uint16_t requested = 255)
{
    smbd_data_hdr h = {};
    h.credits_requested = requested;
    h.credits_granted = granted;
    return h;
}

// Posts what to_post() asks for and grants all of it.
uint16_t PostAndGrant(smbd_credits *c)
{
    smbd_credits_posted(c, smbd_credits_to_post(c));
    return smbd_credits_take_grant(c);
}

// --- init, posting, granting ------------------------------------------------

TEST(Credits, InitTakesConnParams)
{
    smbd_credits c;
    const smbd_conn_params p = Conn(255, 100, 32);
    memset(&c, 0x5a, sizeof(c)); // nothing may be inherited
    smbd_credits_init(&c, &p, 7);
    EXPECT_EQ(c.send_credits, 7u);
    EXPECT_EQ(c.send_credit_target, 32);
    EXPECT_EQ(c.recv_credit_max, 255);
    EXPECT_EQ(c.recv_credit_target, 100);
    EXPECT_EQ(c.recv_posted, 0u);
    EXPECT_EQ(c.recv_granted, 0u);
}

TEST(Credits, InitClampsTargetToMaxAndZeroToOne)
{
    EXPECT_EQ(Init(16, 255).recv_credit_target, 16);
    EXPECT_EQ(Init(16, 16).recv_credit_target, 16);
    EXPECT_EQ(Init(16, 0).recv_credit_target, 1);
}

TEST(Credits, PostsUpToTheTarget)
{
    smbd_credits c = Init(255, 100);
    EXPECT_EQ(smbd_credits_to_post(&c), 100u);
    smbd_credits_posted(&c, 60);
    EXPECT_EQ(smbd_credits_to_post(&c), 40u);
    smbd_credits_posted(&c, 40);
    EXPECT_EQ(smbd_credits_to_post(&c), 0u);
    EXPECT_EQ(c.recv_posted, 100u);
}

// A peer that lowers its CreditsRequested below what is posted gets no more.
TEST(Credits, PostsNothingAboveALoweredTarget)
{
    smbd_credits c = Init(255, 100, 10);
    EXPECT_EQ(PostAndGrant(&c), 100);
    smbd_data_hdr h = Hdr(0, 10);
    ASSERT_EQ(smbd_credits_received(&c, &h), SMBD_E_OK);
    EXPECT_EQ(c.recv_credit_target, 10);
    EXPECT_EQ(c.recv_posted, 99u);
    EXPECT_EQ(smbd_credits_to_post(&c), 0u);
}

// Only receives that are really posted are granted, each once.
TEST(Credits, TakeGrantReturnsPostedNotYetGranted)
{
    smbd_credits c = Init(255, 255);
    EXPECT_EQ(smbd_credits_take_grant(&c), 0);
    smbd_credits_posted(&c, 200);
    EXPECT_EQ(smbd_credits_take_grant(&c), 200);
    EXPECT_EQ(smbd_credits_take_grant(&c), 0);
    smbd_credits_posted(&c, 55);
    EXPECT_EQ(smbd_credits_take_grant(&c), 55);
    EXPECT_EQ(c.recv_granted, 255u);
}

// CreditsGranted is 16 bits: a larger backlog is granted in pieces.
TEST(Credits, TakeGrantFitsSixteenBits)
{
    smbd_credits c = Init(65535, 65535);
    smbd_credits_posted(&c, 70000);
    EXPECT_EQ(smbd_credits_take_grant(&c), 65535);
    EXPECT_EQ(smbd_credits_take_grant(&c), 70000 - 65535);
}

// --- receiving --------------------------------------------------------------

TEST(Credits, ReceivedConsumesAGrantedReceive)
{
    smbd_credits c = Init(255, 255, 3);
    ASSERT_EQ(PostAndGrant(&c), 255);
    smbd_data_hdr h = Hdr(10, 50);
    ASSERT_EQ(smbd_credits_received(&c, &h), SMBD_E_OK);
    EXPECT_EQ(c.send_credits, 13u);
    EXPECT_EQ(c.recv_posted, 254u);
    EXPECT_EQ(c.recv_granted, 254u);
    EXPECT_EQ(c.recv_credit_target, 50); // the peer's new CreditsRequested
    EXPECT_EQ(smbd_credits_to_post(&c), 0u);
}

// The refill target follows the peer's CreditsRequested, bounded by our max.
TEST(Credits, ReceivedClampsPeerTarget)
{
    struct Case {
        uint16_t requested, want;
    };
    for (Case k : {Case{1000, 64}, Case{64, 64}, Case{5, 5}, Case{0, 1}}) {
        SCOPED_TRACE(k.requested);
        smbd_credits c = Init(64, 64);
        ASSERT_EQ(PostAndGrant(&c), 64);
        smbd_data_hdr h = Hdr(0, k.requested);
        ASSERT_EQ(smbd_credits_received(&c, &h), SMBD_E_OK);
        EXPECT_EQ(c.recv_credit_target, k.want);
    }
}

TEST(Credits, RejectsMessageWithoutGrantedReceive)
{
    smbd_data_hdr h = Hdr(1);
    smbd_credits c = Init(255, 255, 1);
    EXPECT_EQ(smbd_credits_received(&c, &h), SMBD_E_NO_RECEIVE_CREDIT);

    // posted but not yet granted: the peer cannot know about it
    smbd_credits_posted(&c, 10);
    EXPECT_EQ(smbd_credits_received(&c, &h), SMBD_E_NO_RECEIVE_CREDIT);

    // one granted: one message is fine, the second overruns
    EXPECT_EQ(smbd_credits_take_grant(&c), 10);
    for (int i = 0; i < 10; i++)
        ASSERT_EQ(smbd_credits_received(&c, &h), SMBD_E_OK) << i;
    EXPECT_EQ(smbd_credits_received(&c, &h), SMBD_E_NO_RECEIVE_CREDIT);
    EXPECT_EQ(c.send_credits, 11u); // the rejected ones changed nothing
}

TEST(Credits, RejectsGrantOverflowingSendCredits)
{
    smbd_credits c = Init(255, 255, 65000);
    ASSERT_EQ(PostAndGrant(&c), 255);
    smbd_data_hdr h = Hdr(536);
    EXPECT_EQ(smbd_credits_received(&c, &h), SMBD_E_SEND_CREDIT_OVERFLOW);
    EXPECT_EQ(c.send_credits, 65000u);
    EXPECT_EQ(c.recv_granted, 255u);
    h = Hdr(535); // exactly 65535
    EXPECT_EQ(smbd_credits_received(&c, &h), SMBD_E_OK);
    EXPECT_EQ(c.send_credits, 65535u);
    h = Hdr(1);
    EXPECT_EQ(smbd_credits_received(&c, &h), SMBD_E_SEND_CREDIT_OVERFLOW);
    h = Hdr(0);
    EXPECT_EQ(smbd_credits_received(&c, &h), SMBD_E_OK);
}

// --- sending ----------------------------------------------------------------

TEST(Credits, SendWithoutCreditsWaits)
{
    smbd_credits c = Init(255, 255, 0);
    smbd_credits_posted(&c, 5); // grants pending do not help
    uint16_t grant = 0xffff;
    EXPECT_EQ(smbd_credits_send(&c, &grant), SMBD_SEND_NO_CREDIT);
    EXPECT_EQ(grant, 0);
    EXPECT_EQ(c.recv_granted, 0u);
}

// 3.1.5.1: the last credit is never spent on a message that grants nothing.
TEST(Credits, LastCreditNeedsAGrant)
{
    smbd_credits c = Init(255, 255, 1);
    uint16_t grant = 0xffff;
    EXPECT_EQ(smbd_credits_send(&c, &grant), SMBD_SEND_NEED_GRANT);
    EXPECT_EQ(grant, 0);
    EXPECT_EQ(c.send_credits, 1u);
}

TEST(Credits, LastCreditCarriesPendingGrant)
{
    smbd_credits c = Init(255, 255, 1);
    smbd_credits_posted(&c, 3);
    uint16_t grant = 0;
    EXPECT_EQ(smbd_credits_send(&c, &grant), SMBD_SEND_OK);
    EXPECT_EQ(grant, 3);
    EXPECT_EQ(c.send_credits, 0u);
    EXPECT_EQ(c.recv_granted, 3u);
}

// With more than one credit a message may grant nothing.
TEST(Credits, SendWithSpareCreditNeedsNoGrant)
{
    smbd_credits c = Init(255, 255, 2);
    uint16_t grant = 0xffff;
    EXPECT_EQ(smbd_credits_send(&c, &grant), SMBD_SEND_OK);
    EXPECT_EQ(grant, 0);
    EXPECT_EQ(c.send_credits, 1u);
    EXPECT_EQ(smbd_credits_send(&c, &grant), SMBD_SEND_NEED_GRANT);
}

// Every send hands over all pending grants, so none is granted twice.
TEST(Credits, SendGrantsEachReceiveOnce)
{
    smbd_credits c = Init(255, 255, 10);
    smbd_credits_posted(&c, 4);
    uint16_t grant;
    ASSERT_EQ(smbd_credits_send(&c, &grant), SMBD_SEND_OK);
    EXPECT_EQ(grant, 4);
    ASSERT_EQ(smbd_credits_send(&c, &grant), SMBD_SEND_OK);
    EXPECT_EQ(grant, 0);
    smbd_credits_posted(&c, 2);
    ASSERT_EQ(smbd_credits_send(&c, &grant), SMBD_SEND_OK);
    EXPECT_EQ(grant, 2);
    EXPECT_EQ(c.recv_granted, 6u);
    EXPECT_EQ(c.send_credits, 7u);
}

// --- when to send a credit-only message -------------------------------------

// Due when the peer holds at most a quarter of the target and we have
// something to grant.
TEST(Credits, GrantDueAtQuarterOfTarget)
{
    smbd_credits c = Init(255, 100, 10);
    smbd_credits_posted(&c, 30);
    ASSERT_EQ(smbd_credits_take_grant(&c), 30);
    smbd_credits_posted(&c, 1);
    EXPECT_FALSE(smbd_credits_grant_due(&c)); // peer holds 30 > 25

    smbd_data_hdr h = Hdr(0, 100);
    for (int i = 0; i < 4; i++)
        ASSERT_EQ(smbd_credits_received(&c, &h), SMBD_E_OK);
    EXPECT_EQ(c.recv_granted, 26u);
    EXPECT_FALSE(smbd_credits_grant_due(&c)); // 26 > 25
    ASSERT_EQ(smbd_credits_received(&c, &h), SMBD_E_OK);
    EXPECT_EQ(c.recv_granted, 25u);
    EXPECT_TRUE(smbd_credits_grant_due(&c)); // 25 <= 100 / 4
}

TEST(Credits, GrantNotDueWithNothingToGrant)
{
    smbd_credits c = Init(255, 100, 10);
    EXPECT_FALSE(smbd_credits_grant_due(&c)); // peer has none, none posted
    ASSERT_EQ(PostAndGrant(&c), 100);
    smbd_data_hdr h = Hdr(0, 100);
    while (c.recv_granted > 0)
        ASSERT_EQ(smbd_credits_received(&c, &h), SMBD_E_OK);
    EXPECT_FALSE(smbd_credits_grant_due(&c)); // posted all were consumed
    smbd_credits_posted(&c, 1);
    EXPECT_TRUE(smbd_credits_grant_due(&c));
}

// A peer on its last credit cannot send without granting; if it has nothing to
// grant, only a grant from us gets it going again, even where a quarter of the
// target rounds to 0 (with target 1 we have nothing left to grant).
TEST(Credits, GrantDueWhenPeerIsDownToItsLastCredit)
{
    for (uint16_t target : {1, 2, 3, 4, 8, 255}) {
        SCOPED_TRACE(target);
        smbd_credits c = Init(255, target, 10);
        ASSERT_EQ(PostAndGrant(&c), target);
        smbd_data_hdr h = Hdr(0, target);
        while (c.recv_granted > 1)
            ASSERT_EQ(smbd_credits_received(&c, &h), SMBD_E_OK);
        smbd_credits_posted(&c, smbd_credits_to_post(&c));
        EXPECT_EQ(smbd_credits_grant_due(&c), target > 1);
    }
}

// --- two peers --------------------------------------------------------------

// Two peers following the verdicts the way the engine does, over two in-order
// links. Each step checks that no credit is lost or invented; at the end, with
// no new traffic, everything queued must drain.
class Simulation {
  public:
    struct Side {
        explicit Side(const char *n) : name(n) {}
        const char *name;
        smbd_credits c = {};
        std::deque<uint32_t> queue; // payload sizes; 0: credit-only
        std::deque<smbd_data_hdr> inbound;
        uint64_t sent = 0, received = 0;
    };

    Simulation(uint16_t client_target, uint16_t client_max,
               uint16_t server_target, uint16_t server_max, uint32_t seed)
        : rng_(seed)
    {
        // The negotiate, as negotiate.c combines it.
        const smbd_local_params client_local = {
            client_max, client_target, 1364, 1364, 1048576, 1048576};
        const smbd_local_params server_local = {
            server_max, server_target, 1364, 1364, 1048576, 1048576};
        const smbd_negotiate_req req = {
            SMBD_VERSION_1, SMBD_VERSION_1, client_target, 1364, 1364, 1048576};
        smbd_conn_params server_conn, client_conn;
        smbd_negotiate_server_params(&server_local, &req, &server_conn);
        smbd_credits_init(&server_.c, &server_conn, 0);
        Refill(server_);
        smbd_negotiate_resp resp;
        smbd_negotiate_resp_success(&server_conn,
                                    smbd_credits_take_grant(&server_.c), &resp);
        EXPECT_GT(resp.credits_granted, 0);
        EXPECT_EQ(
            smbd_negotiate_client_params(&client_local, &resp, &client_conn),
            SMBD_E_OK);
        smbd_credits_init(&client_.c, &client_conn, resp.credits_granted);
        Refill(client_);
    }

    // One random event.
    void Step()
    {
        Side &s = rng_() % 2 ? client_ : server_;
        switch (rng_() % 4) {
        case 0: // the application sends a PDU of 1..4 fragments
            for (uint32_t n = 1 + rng_() % 4; n > 0; n--)
                s.queue.push_back(1 + rng_() % 1340);
            break;
        case 1:
            TrySend(s);
            break;
        default:
            if (!s.inbound.empty())
                Deliver(s);
            break;
        }
        CheckConservation();
    }

    // No new PDUs: run until all application data has arrived. False if
    // the peers get stuck with data still queued (or only bounce credits).
    bool Drain()
    {
        const uint64_t limit = client_.sent + server_.sent + 100000;
        while (DataPending()) {
            if (!Round() || client_.sent + server_.sent > limit ||
                ::testing::Test::HasFatalFailure())
                return false;
        }
        return true;
    }

    // After Drain(): true if the peers then fall silent within @limit
    // messages rather than bouncing credit-only messages forever.
    bool Quiesces(uint64_t limit)
    {
        const uint64_t start = client_.sent + server_.sent;
        while (Round()) {
            if (client_.sent + server_.sent - start > limit ||
                ::testing::Test::HasFatalFailure())
                return false;
        }
        return true;
    }

    std::string State() const
    {
        std::ostringstream os;
        for (const Side *s : {&client_, &server_})
            os << s->name << ": send_credits " << s->c.send_credits
               << " posted " << s->c.recv_posted << " granted "
               << s->c.recv_granted << " target " << s->c.recv_credit_target
               << " queued " << s->queue.size() << " sent " << s->sent << "\n";
        return os.str();
    }

    const Side &client() const { return client_; }
    const Side &server() const { return server_; }

  private:
    Side &Peer(const Side &s) { return &s == &client_ ? server_ : client_; }

    bool DataPending() const
    {
        for (const Side *s : {&client_, &server_}) {
            for (uint32_t len : s->queue)
                if (len != 0)
                    return true;
            for (const smbd_data_hdr &h : s->inbound)
                if (h.data_length != 0)
                    return true;
        }
        return false;
    }

    // Each side takes all its messages, then sends what it can. False if
    // nothing moved.
    bool Round()
    {
        bool moved = false;
        for (Side *s : {&client_, &server_}) {
            while (!s->inbound.empty()) {
                Deliver(*s);
                moved = true;
            }
            const uint64_t before = s->sent;
            TrySend(*s);
            moved |= s->sent != before;
            CheckConservation();
        }
        return moved;
    }

    void Refill(Side &s)
    {
        smbd_credits_posted(&s.c, smbd_credits_to_post(&s.c));
    }

    void Deliver(Side &s)
    {
        const smbd_data_hdr h = s.inbound.front();
        s.inbound.pop_front();
        ASSERT_EQ(smbd_credits_received(&s.c, &h), SMBD_E_OK) << s.name;
        s.received++;
        Refill(s);
        // a credit-only message when the peer runs low and none is queued
        if (s.queue.empty() && smbd_credits_grant_due(&s.c))
            s.queue.push_back(0);
    }

    void TrySend(Side &s)
    {
        while (!s.queue.empty()) {
            // a queued credit-only message is dropped once it has no purpose
            if (s.queue.front() == 0 && !smbd_credits_grant_due(&s.c)) {
                s.queue.pop_front();
                continue;
            }
            uint16_t grant;
            smbd_send_verdict v = smbd_credits_send(&s.c, &grant);
            if (v == SMBD_SEND_NEED_GRANT) {
                Refill(s); // "post a receive first", if the target allows
                v = smbd_credits_send(&s.c, &grant);
            }
            if (v != SMBD_SEND_OK)
                return;
            smbd_data_hdr h = {};
            h.credits_requested = s.c.send_credit_target;
            h.credits_granted = grant;
            h.data_length = s.queue.front();
            h.data_offset = h.data_length ? SMBD_DATA_PAYLOAD_OFFSET : 0;
            Peer(s).inbound.push_back(h);
            s.queue.pop_front();
            s.sent++;
        }
    }

    // Every receive a side granted is either a credit the peer holds, a
    // message of the peer on its way, or a grant on its way to the peer.
    void CheckConservation()
    {
        for (Side *s : {&client_, &server_}) {
            const Side &p = Peer(*s);
            uint64_t grants_in_flight = 0;
            for (const smbd_data_hdr &h : p.inbound)
                grants_in_flight += h.credits_granted;
            ASSERT_EQ(s->c.recv_granted,
                      p.c.send_credits + s->inbound.size() + grants_in_flight)
                << s->name << "\n"
                << State();
            ASSERT_LE(s->c.recv_granted, s->c.recv_posted) << s->name;
        }
        ASSERT_FALSE(client_.c.send_credits == 0 &&
                     server_.c.send_credits == 0 && client_.inbound.empty() &&
                     server_.inbound.empty())
            << "both sides out of credits\n"
            << State();
    }

    std::mt19937 rng_;
    Side client_{"client"};
    Side server_{"server"};
};

TEST(CreditsSimulation, PeersNeverDeadlock)
{
    struct Case {
        uint16_t client_target, client_max, server_target, server_max;
        // Falls silent once idle. With both targets at most 2, a credit-only
        // message leaves its sender on its last credit, so the peers keep
        // granting each other one credit at a time: wasteful, never stuck.
        bool quiet;
    };
    const Case cases[] = {
        {255, 255, 255, 255, true}, // Linux defaults on both sides
        {10, 10, 10, 10, true},     // the Windows test suite's client
        {4, 4, 4, 4, true},
        {2, 255, 255, 255, true}, // the peer's target below 4: the
        {3, 255, 255, 255, true}, // quarter rule alone deadlocks here
        {255, 255, 2, 255, true},
        {255, 16, 2, 3, true},
        {1, 255, 255, 1, true},
        {2, 2, 2, 2, false},
        {1, 1, 1, 1, false},
    };
    for (const Case &k : cases) {
        for (uint32_t seed = 1; seed <= 10; seed++) {
            SCOPED_TRACE(testing::Message()
                         << "client " << k.client_target << "/" << k.client_max
                         << " server " << k.server_target << "/" << k.server_max
                         << " seed " << seed);
            Simulation sim(k.client_target, k.client_max, k.server_target,
                           k.server_max, seed);
            for (int i = 0; i < 2000 && !HasFatalFailure(); i++)
                sim.Step();
            ASSERT_FALSE(HasFatalFailure());
            ASSERT_TRUE(sim.Drain()) << "stuck with data queued\n"
                                     << sim.State();
            if (k.quiet) {
                ASSERT_TRUE(sim.Quiesces(1000)) << "credit ping-pong\n"
                                                << sim.State();
            }
            ASSERT_FALSE(HasFatalFailure());
            // the run did exchange traffic both ways
            EXPECT_GT(sim.client().received, 100u);
            EXPECT_GT(sim.server().received, 100u);
        }
    }
}

} // namespace
