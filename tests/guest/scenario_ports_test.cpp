// The RDMA ports by transport ([MS-SMBD] 2.1): 445 for InfiniBand and
// RoCE, 5445 for iWARP and, by default, for the RoCE clients that try it
// first. The listeners exist only while a master holds SET_PARAMS, a port
// another listener holds fails SET_PARAMS with the port named, and both
// connection flows work over IPv4 and IPv6.
#include <arpa/inet.h>
#include <fcntl.h>
#include <rdma/rdma_cma.h>

#include <fstream>

#include <libsmbd.h>

#include "scenario.h"

namespace scenario {
namespace {

using smbd::client::kIbPort;
using smbd::client::kIwarpPort;
using smbd::client::kPortByTransport;

constexpr uint64_t kSession = 0x4455000000000001ull;

// "" when the driver's connection list has a connection of @transport on
// the guest's address and @port, else what it has.
std::string listed_as(const std::string &transport, uint16_t port)
{
    const std::string list = connections();
    const std::string want = "transport=" + transport +
                             " local=" + server_addr() + ":" +
                             std::to_string(port) + " ";
    if (list.find(want) == std::string::npos)
        return "no '" + want + "' in: " + list;
    return "";
}

// ib_on_iwarp_port set for one test, restored after it.
class IbOnIwarpPort {
  public:
    explicit IbOnIwarpPort(bool on) { write(on); }
    ~IbOnIwarpPort() { write(true); }

  private:
    static void write(bool on)
    {
        std::ofstream("/sys/module/smbdirect/parameters/ib_on_iwarp_port")
            << (on ? "Y" : "N");
    }
};

// A peer that reaches @addr:@port and, new or binding to kSession, echoes
// one PDU; "" on success.
std::string one_session(const std::string &addr, uint16_t port, bool binding)
{
    PeerOptions opt;
    opt.addr = addr;
    opt.port = port;
    auto c = negotiated_client(opt);
    if (!c)
        return addr + " port " + std::to_string(port) +
               ": connect and negotiate: " + c.error().message;
    auto ss = (*c)->session_setup(session_setup_options(binding, kSession));
    if (!ss)
        return "SESSION_SETUP: " + ss.error().message;
    if (std::string e = echo_once(**c, 0, 4096); !e.empty())
        return e;
    (*c)->close();
    return "";
}

// The local endpoint of the one NEW_CHANNEL the smbd side saw.
std::optional<smbd_sockaddr> channel_local(const Smbd &smbd)
{
    std::optional<smbd_sockaddr> out;
    for (const Event &ev : smbd.all_events())
        if (ev.type() == SMBD_EVENT_NEW_CHANNEL) {
            if (out)
                return std::nullopt;
            out = ev.raw.u.new_channel.local;
        }
    return out;
}

void expect_local(const Smbd &smbd, int family, uint16_t port)
{
    auto local = channel_local(smbd);
    ASSERT_TRUE(local) << "not exactly one NEW_CHANNEL: "
                       << describe(smbd.all_events());
    EXPECT_EQ(local->family, family);
    EXPECT_EQ(local->port, port);
}

// A new session, then a channel bound to it, at @addr:@port.
void both_flows(const std::string &addr, uint16_t port)
{
    SCOPED_TRACE(addr + " port " + std::to_string(port));
    const int family = addr.find(':') == std::string::npos ? AF_INET : AF_INET6;
    for (bool binding : {false, true}) {
        Smbd smbd(fast_params(), !binding,
                  binding ? std::vector<uint64_t>{kSession}
                          : std::vector<uint64_t>{});
        auto client = peer(
            [addr, port, binding] { return one_session(addr, port, binding); });
        ASSERT_TRUE(smbd.serve_peer(client)) << verdict(client);
        EXPECT_EQ(verdict(client), "");
        expect_local(smbd, family, port);
    }
}

using Ports = Scenario;

TEST_F(Ports, ListenersExistOnlyWhileAMasterHoldsTheParameters)
{
    EXPECT_EQ(listeners(), "") << "listening with no master";
    auto before =
        Client::connect(server_addr(), kIbPort, PeerOptions::default_connect());
    EXPECT_FALSE(before) << "connected to 445 with no master";
    {
        Device master(O_NONBLOCK);
        ASSERT_EQ(master.set_params(fast_params()), 0);
        const std::string l = listeners();
        // the iWARP port on every address of both families, the IB port on
        // each address rxe0 carries (IPv6 link-local included)
        EXPECT_NE(l.find("addr=0.0.0.0:5445 serves=iwarp,ib,roce"),
                  std::string::npos)
            << l;
        EXPECT_NE(l.find("addr=[::]:5445 serves=iwarp,ib,roce"),
                  std::string::npos)
            << l;
        EXPECT_NE(l.find("addr=" + server_addr() + ":445 serves=ib,roce"),
                  std::string::npos)
            << l;
        EXPECT_NE(l.find("addr=[" + server_addr6() + "]:445 serves=ib,roce"),
                  std::string::npos)
            << l;
        // a second SET_PARAMS of the same master changes nothing
        ASSERT_EQ(master.set_params(fast_params()), 0);
        EXPECT_EQ(listeners(), l);
    }
    EXPECT_EQ(listeners(), "") << "still listening after the master closed";
    auto after =
        Client::connect(server_addr(), kIbPort, PeerOptions::default_connect());
    EXPECT_FALSE(after) << "connected to 445 after the master closed";
    // nothing reached the driver: no listener, no request
    EXPECT_EQ(delta("conn_requests"), 0);
}

// A RoCE client is served on 445 and, by default, on 5445, in both flows.
TEST_F(Ports, RoceClientIsServedOn445AndByDefaultOn5445)
{
    both_flows(server_addr(), kIbPort);
    both_flows(server_addr(), kIwarpPort);
    EXPECT_EQ(delta("conn_requests"), 4);
    EXPECT_EQ(delta("conn_wrong_port"), 0);
}

// As a Linux 7.0 client sees a server whose 5445 serves iWARP only: its
// RoCE request there is refused and counted, 445 serves it.
TEST_F(Ports, RoceOn5445IsRefusedAndCountedWhenItServesIwarpOnly)
{
    IbOnIwarpPort off(false);
    Smbd smbd(fast_params(), true);
    EXPECT_NE(listeners().find(":5445 serves=iwarp\n"), std::string::npos)
        << listeners();
    auto refused = Client::connect(server_addr(), kIwarpPort,
                                   PeerOptions::default_connect());
    EXPECT_FALSE(refused) << "RoCE was served on 5445";
    EXPECT_EQ(delta("conn_requests"), 1);
    EXPECT_EQ(delta("conn_wrong_port"), 1);
    EXPECT_EQ(delta("conn_rejected"), 1);

    auto client =
        peer([] { return one_session(server_addr(), kIbPort, false); });
    ASSERT_TRUE(smbd.serve_peer(client)) << verdict(client);
    EXPECT_EQ(verdict(client), "");
    expect_local(smbd, AF_INET, kIbPort);
    EXPECT_EQ(delta("conn_wrong_port"), 1);
}

// The client tool picks its port as Windows does: 445 on RoCE.
TEST_F(Ports, ClientPicksThePortOfItsTransport)
{
    Smbd smbd(fast_params(), true);
    auto client = peer([]() -> std::string {
        auto c = Client::connect(server_addr(), kPortByTransport,
                                 PeerOptions::default_connect());
        if (!c)
            return "connect: " + c.error().message;
        if ((*c)->port() != kIbPort || (*c)->iwarp())
            return "picked port " + std::to_string((*c)->port());
        return "";
    });
    EXPECT_EQ(verdict(client), "");
    ASSERT_TRUE(settled());
}

// The connection list says which port and transport each connection uses.
TEST_F(Ports, ConnectionListNamesTransportAndPort)
{
    Smbd smbd(fast_params(), true);
    auto client = peer([]() -> std::string {
        auto c = negotiated_client(
            PeerOptions{.addr = server_addr(), .port = kIbPort});
        if (!c)
            return "connect and negotiate: " + c.error().message;
        return listed_as("roce", kIbPort);
    });
    EXPECT_EQ(verdict(client), "");
    ASSERT_TRUE(settled());
}

// A userspace rdma_cm listener holds RDMA port 445 on every address, as
// ksmbd does: SET_PARAMS fails, names the port, and leaves no listener.
TEST_F(Ports, PortHeldByAnotherListenerFailsSetParamsWithThePort)
{
    rdma_cm_id *holder = nullptr;
    ASSERT_EQ(rdma_create_id(nullptr, &holder, nullptr, RDMA_PS_TCP), 0);
    sockaddr_in any{};
    any.sin_family = AF_INET;
    any.sin_port = htons(kIbPort);
    ASSERT_EQ(rdma_bind_addr(holder, reinterpret_cast<sockaddr *>(&any)), 0)
        << strerror(errno);
    ASSERT_EQ(rdma_listen(holder, 1), 0);

    Device master(O_NONBLOCK);
    smbd_set_params sp = fast_params().to_uapi();
    EXPECT_EQ(master.raw(SMBD_IOC_SET_PARAMS, &sp), EADDRINUSE);
    EXPECT_EQ(sp.out_busy_port, kIbPort);
    EXPECT_EQ(listeners(), "") << "listeners left after the failure";

    // through libsmbd, the sentence names the port and the likely holder
    smbd_dev_open_args args = SMBD_DEV_OPEN_ARGS_INIT;
    smbd_dev *dev = nullptr;
    char buf[256] = "";
    ASSERT_EQ(smbd_dev_open(&args, &dev, buf, sizeof(buf)), 0) << buf;
    smbd_dev_policy p;
    smbd_dev_policy_init(&p, sizeof(p));
    EXPECT_EQ(smbd_dev_set_policy(dev, &p), EADDRINUSE);
    const std::string msg = smbd_dev_errmsg(dev);
    EXPECT_NE(msg.find("RDMA port 445"), std::string::npos) << msg;
    EXPECT_NE(msg.find("ksmbd"), std::string::npos) << msg;
    smbd_dev_close(dev);

    // once the holder is gone the same master gets the role and the ports
    rdma_destroy_id(holder);
    EXPECT_EQ(master.set_params(fast_params()), 0);
    EXPECT_NE(listeners().find(":445 serves=ib,roce"), std::string::npos)
        << listeners();
}

// Both flows over IPv6, on each port: a new session, then a channel bound
// to it.
TEST_F(Ports, BothFlowsOverIpv6OnEachPort)
{
    for (uint16_t port : {kIbPort, kIwarpPort})
        both_flows(server_addr6(), port);
}

// On soft-iWARP (tests/vm/iwarp.sh): 5445 only, and IRD/ORD in the
// connection's private data.
class IwarpPorts : public Scenario {
  protected:
    void SetUp() override
    {
        const char *t = std::getenv("SMBD_TRANSPORT");
        ASSERT_STREQ(t ? t : "", "iwarp")
            << "these run on soft-iWARP: tests/vm/iwarp.sh";
        Scenario::SetUp();
    }
};

// The client picks 5445 as Windows does on iWARP and says its IRD and ORD
// in the private data; the driver answers with its own: as many RDMA
// READs as the client serves (its responder resources) and none served
// (the client issues none).
TEST_F(IwarpPorts, ClientPicks5445AndTheAcceptAnswersIrdAndOrd)
{
    Smbd smbd(fast_params(), true);
    auto client = peer([]() -> std::string {
        auto c = Client::connect(server_addr(), kPortByTransport,
                                 PeerOptions::default_connect());
        if (!c)
            return "connect: " + c.error().message;
        if (!(*c)->iwarp() || (*c)->port() != kIwarpPort)
            return "port " + std::to_string((*c)->port()) + ", iwarp " +
                   std::to_string((*c)->iwarp());
        const auto &answer = (*c)->server_ird_ord();
        if (!answer)
            return "no IRD/ORD in the accept";
        if (answer->ird != 0 || answer->ord == 0 ||
            answer->ord > (*c)->responder_resources())
            return "IRD " + std::to_string(answer->ird) + " ORD " +
                   std::to_string(answer->ord) + " for a client serving " +
                   std::to_string((*c)->responder_resources());
        return listed_as("iwarp", kIwarpPort);
    });
    EXPECT_EQ(verdict(client), "");
    ASSERT_TRUE(settled());
}

// 445 is SMB over TCP on an iWARP address: the driver never listens there.
TEST_F(IwarpPorts, Port445IsNotServedOnIwarp)
{
    Smbd smbd(fast_params(), true);
    EXPECT_EQ(listeners().find(server_addr() + ":445"), std::string::npos)
        << listeners();
    auto c =
        Client::connect(server_addr(), kIbPort, PeerOptions::default_connect());
    EXPECT_FALSE(c) << "connected to 445 over iWARP";
    EXPECT_EQ(delta("conn_requests"), 0);
}

TEST_F(IwarpPorts, BothFlowsOverIpv6)
{
    both_flows(server_addr6(), kIwarpPort);
}

} // namespace
} // namespace scenario
