// The shared fixture of the guest scenarios: the smbd side on /dev/smbd
// (smbd::device), the peer through the SMB Direct client library in another
// thread or process, and the driver's counters as deltas over one test.
#ifndef SMBD_TESTS_SCENARIO_H
#define SMBD_TESTS_SCENARIO_H

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include <sys/types.h>

#include "client.h"
#include "device.h"

namespace scenario {

using smbd::client::Client;
using smbd::device::Device;
using smbd::device::Event;
using smbd::device::Params;
using namespace std::chrono_literals;

inline constexpr uint16_t kPort = 5445;
// SMB2 header size: every test PDU carries one
inline constexpr uint32_t kHeader = 64;

// $SMBD_ADDR, the guest's soft-RoCE address; $SMBD_ADDR6, its IPv6 one.
std::string server_addr();
std::string server_addr6();
// The RDMA link they are on, as `rdma link add` takes it: $SMBD_RDMA_LINK
// ("siw0 type siw netdev smbd1"), soft-RoCE's rxe0 on smbd0 by default;
// and its name, the first word.
std::string rdma_link();
std::string rdma_link_name();
// The driver's listeners and connections, as debugfs lists them.
std::string listeners();
std::string connections();
// The id of the one connection the driver's list shows owned; 0 if none
// or several.
uint64_t owned_connection();
// SMBD_IOC_CONN_STATS of connection @id from a file of its own (as root,
// any connection's): 0 or the errno.
int conn_stats(uint64_t id, smbd_conn_stats &out);

// Every counter under /sys/class/misc/smbd/counters at one moment.
class Counters {
  public:
    static Counters now();
    uint64_t operator[](const std::string &name) const;
    // this minus @earlier, per counter
    int64_t delta(const Counters &earlier, const std::string &name) const;
    // "name=value (+delta)" for every counter that moved since @earlier
    std::string changes(const Counters &earlier) const;

  private:
    std::map<std::string, uint64_t> v_;
};

// Short timeouts: a test waits seconds, never minutes, for the driver.
Params fast_params();

// "NEW_CHANNEL conn 4 flags 0x1 session 0x1234 data 420" for messages.
std::string describe(const Event &ev);
std::string describe(const std::vector<Event> &evs);

// The next event on @dev (non-blocking file) within @timeout, if any.
std::optional<Event> next_event(Device &dev,
                                std::chrono::milliseconds timeout = 10s);
// True when no event is queued on @dev within @quiet.
bool stays_quiet(Device &dev, std::chrono::milliseconds quiet = 200ms);

// A client with the MS-SMBD negotiate and the SMB2 NEGOTIATE done.
struct PeerOptions {
    smbd::client::ConnectOptions connect = default_connect();
    smbd::client::Smb2NegotiateOptions smb2 = default_smb2();
    std::string addr = server_addr();
    uint16_t port = kPort;

    static smbd::client::ConnectOptions default_connect();
    static smbd::client::Smb2NegotiateOptions default_smb2();
};
smbd::client::Result<std::unique_ptr<Client>>
negotiated_client(const PeerOptions &opt = {});
// A negotiated client bound to @session; the error names the failed step.
smbd::client::Result<std::unique_ptr<Client>>
bound_client(uint64_t session, const PeerOptions &opt = {});

// Addresses x.y.z.201.. beside the server's on the RDMA link's netdev (or
// with @ipv6, ...::201.. in the /64 of the server's IPv6 address), for
// peers that connect from addresses of their own, while it lives.
class ExtraAddresses {
  public:
    explicit ExtraAddresses(int n, bool ipv6 = false);
    ~ExtraAddresses();
    ExtraAddresses(const ExtraAddresses &) = delete;
    ExtraAddresses &operator=(const ExtraAddresses &) = delete;
    const std::vector<std::string> &all() const { return addrs_; }

  private:
    std::string netdev_;
    std::string suffix_; // the prefix length, for ip addr
    std::vector<std::string> addrs_;
};
// A peer from @source with few receives, since dozens are held at once.
PeerOptions from_address(const std::string &source);

// The SESSION_SETUP request a client sends (binding to @session or new).
std::vector<uint8_t> session_setup_request(bool binding, uint64_t session);
smbd::client::SessionSetupOptions session_setup_options(bool binding,
                                                        uint64_t session);

// The PDU the peer sends as its @n-th echo of @size bytes.
std::vector<uint8_t> test_pdu(uint64_t session, uint64_t n, uint32_t size);

// Sends @pdu, waits for its echo (at most @wait) and checks it; "" or what
// went wrong.
std::string echo_once(Client &c, uint64_t n, uint32_t size,
                      std::chrono::milliseconds wait = 10s);

// Runs @fn on a thread: the peer while the test drives the smbd side.
// The result is "" when the peer saw what it expected, else what it saw.
using PeerResult = std::future<std::string>;
PeerResult peer(std::function<std::string()> fn);
// A peer bound to @session: one 4 KiB echo, then @echoed, then connected
// until @go (or the server ends it), then it closes.
PeerResult echo_then_idle(uint64_t session, std::atomic<bool> &echoed,
                          std::atomic<bool> &go);
// The peer's verdict within @timeout; "peer still running" otherwise.
std::string verdict(PeerResult &p, std::chrono::milliseconds timeout = 60s);

// The smbd side of a test: the master's file (SET_PARAMS, LISTEN,
// REGISTER_SESSION) and a second file that ACCEPTs what the master is
// offered, each answering SESSION_SETUP and echoing every PDU as the
// responder does. Every event is kept for the assertions.
class Smbd {
  public:
    explicit Smbd(const Params &params = fast_params(), bool listen = false,
                  std::vector<uint64_t> sessions = {});
    // Every connection whose id vanished under a send got its DISCONNECTED.
    ~Smbd();
    Smbd(const Smbd &) = delete;
    Smbd &operator=(const Smbd &) = delete;

    Device &master() { return master_; }
    Device &acceptor() { return acceptor_; }
    // What each file received, in order.
    const std::vector<Event> &master_events() const { return events_[0]; }
    const std::vector<Event> &acceptor_events() const { return events_[1]; }
    std::vector<Event> all_events() const;
    // DISCONNECTED reasons per connection.
    const std::map<uint64_t, uint32_t> &disconnects() const { return gone_; }

    // Serves both files until @done or @timeout; false on timeout.
    bool serve(const std::function<bool()> &done,
               std::chrono::milliseconds timeout = 30s);
    // Serves until @n connections owned here were DISCONNECTED.
    bool serve_disconnects(size_t n, std::chrono::milliseconds timeout = 30s);
    // Serves until the peer is done and all owned connections are gone.
    bool serve_peer(PeerResult &p, std::chrono::milliseconds timeout = 60s);

  private:
    void handle(int which, Event ev);
    void check_send(const Event &ev, int err);

    Device master_;
    Device acceptor_;
    std::vector<Event> events_[2];
    std::map<uint64_t, uint32_t> gone_;
    // ENOENT to a send: torn down, its DISCONNECTED already queued
    std::set<uint64_t> vanished_;
    size_t owned_ = 0;
    uint64_t next_session_ = 0x5e55000000000001ull;
};

// Answers the SESSION_SETUP of a NEW_CHANNEL on @dev as smbd would.
int answer_session_setup(Device &dev, const Event &new_channel,
                         uint64_t session_id);
// Echoes a PDU_RECEIVED as the responder does.
int echo(Device &dev, const Event &pdu);

// A forked smbd child, as the master forks one per NEW_CONNECTION: forked
// before any RDMA exists in this process, it opens its own /dev/smbd,
// claims the token it is given, answers SESSION_SETUP and echoes PDUs
// until the connection is DISCONNECTED.
class ChildOwner {
  public:
    struct Report {
        int accept_err = -1;
        uint64_t conn_id = 0;
        uint32_t channel_flags = 0; // of its NEW_CHANNEL
        uint32_t pdus = 0;          // echoed
        uint32_t reason = 0;        // of its DISCONNECTED
    };

    explicit ChildOwner(uint64_t session_id);
    ~ChildOwner();
    ChildOwner(const ChildOwner &) = delete;
    ChildOwner &operator=(const ChildOwner &) = delete;

    // Hands over the token and waits for the ACCEPT's result.
    Report claim(std::span<const uint8_t, SMBD_TOKEN_SIZE> token);
    // The child's final report once its connection is gone.
    std::optional<Report> finish(std::chrono::milliseconds timeout = 20s);
    void kill();
    // true when the child exited by SIGKILL
    bool killed();

  private:
    int to_child_ = -1;
    int from_child_ = -1;
    pid_t pid_ = -1;
    int status_ = 0;
};

// Base of every scenario: the counters at the start; at the end every
// connection must be gone (conn_active back) and a failure prints the
// counters that moved and the tail of the kernel log.
class Scenario : public ::testing::Test {
  protected:
    void SetUp() override;
    void TearDown() override;
    int64_t delta(const std::string &name) const;
    // waits until the counter moved by at least @n; what it moved by
    int64_t await_delta(const std::string &name, int64_t n,
                        std::chrono::milliseconds timeout = 10s) const;
    // waits for conn_active to come back to its start value
    bool settled(std::chrono::milliseconds timeout = 10s) const;

    Counters start_ = Counters::now();
};

} // namespace scenario

#endif // SMBD_TESTS_SCENARIO_H
