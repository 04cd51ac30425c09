// The scenario fixture; see scenario.h.
#include "scenario.h"

#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <poll.h>
#include <signal.h>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "reply.h"
#include "smb2_wire.h"

namespace scenario {

namespace {

using Clock = std::chrono::steady_clock;

std::string hex(uint64_t v)
{
    char buf[24];
    std::snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)v);
    return buf;
}

std::string dmesg_tail()
{
    std::string out;
    if (FILE *f = popen("dmesg | tail -n 20", "r")) {
        char line[512];
        while (fgets(line, sizeof(line), f))
            out += line;
        pclose(f);
    }
    return out;
}

} // namespace

std::string server_addr()
{
    const char *a = std::getenv("SMBD_ADDR");
    return a && *a ? a : "10.55.0.1";
}

std::string server_addr6()
{
    const char *a = std::getenv("SMBD_ADDR6");
    return a && *a ? a : "fd55::1";
}

std::string rdma_link()
{
    const char *l = std::getenv("SMBD_RDMA_LINK");
    return l && *l ? l : "rxe0 type rxe netdev smbd0";
}

std::string rdma_link_name()
{
    std::string l = rdma_link();
    return l.substr(0, l.find(' '));
}

namespace {
std::string debugfs(const char *name)
{
    std::ifstream f(std::string("/sys/kernel/debug/smbdirect/") + name);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}
} // namespace

std::string listeners() { return debugfs("listeners"); }
std::string connections() { return debugfs("connections"); }

uint64_t owned_connection()
{
    std::istringstream list(connections());
    uint64_t found = 0;
    for (std::string line; std::getline(list, line);) {
        unsigned long long id;
        char state[32];
        if (std::sscanf(line.c_str(), "id=%llu state=%31s", &id, state) != 2 ||
            std::string(state) != "owned")
            continue;
        if (found)
            return 0;
        found = id;
    }
    return found;
}

int conn_stats(uint64_t id, smbd_conn_stats &out)
{
    Device dev(O_NONBLOCK);
    if (!dev.ok())
        return dev.error();
    out = {};
    out.conn_id = id;
    return dev.conn_stats(out);
}

Counters Counters::now()
{
    Counters c;
    for (const std::string &name : smbd::device::counter_names())
        c.v_[name] = smbd::device::read_counter(name).value_or(0);
    return c;
}

uint64_t Counters::operator[](const std::string &name) const
{
    auto it = v_.find(name);
    return it == v_.end() ? 0 : it->second;
}

int64_t Counters::delta(const Counters &earlier, const std::string &name) const
{
    return int64_t((*this)[name] - earlier[name]);
}

std::string Counters::changes(const Counters &earlier) const
{
    std::string s;
    for (const auto &[name, value] : v_) {
        int64_t d = delta(earlier, name);
        if (d || name == "conn_active")
            s += "  " + name + "=" + std::to_string(value) + " (" +
                 (d >= 0 ? "+" : "") + std::to_string(d) + ")\n";
    }
    return s;
}

Params fast_params()
{
    Params p = smbd::device::default_params();
    p.keepalive_interval_ms = 30000;
    p.keepalive_timeout_ms = 2000;
    p.negotiate_timeout_ms = 2000;
    p.setup_timeout_ms = 2000;
    // a peer's credits are timed only where a test is about them
    // (CreditTimeout, Hostile): elsewhere a peer slowed by a loaded guest,
    // which still grants, must not end a connection the test needs
    p.credit_timeout_ms = 30000;
    p.accept_timeout_ms = 2000;
    return p;
}

std::string describe(const Event &ev)
{
    std::string s = std::string(smbd::device::event_name(ev.type())) +
                    " conn " + std::to_string(ev.conn_id());
    switch (ev.type()) {
    case SMBD_EVENT_NEW_CHANNEL:
        s += " flags " + hex(ev.raw.flags) + " session " +
             hex(ev.raw.u.new_channel.session_id);
        break;
    case SMBD_EVENT_SEND_DONE:
        s += " user_data " + std::to_string(ev.raw.user_data) + " status " +
             std::to_string(ev.raw.status);
        break;
    case SMBD_EVENT_DISCONNECTED:
        s += std::string(" reason ") +
             smbd::device::reason_name(ev.raw.u.disconnected.reason);
        break;
    case SMBD_EVENT_OVERFLOW:
        s += " lost " + std::to_string(ev.raw.u.overflow.lost);
        break;
    }
    if (!ev.data.empty())
        s += " data " + std::to_string(ev.data.size());
    return s;
}

std::string describe(const std::vector<Event> &evs)
{
    std::string s = "[";
    for (const Event &ev : evs)
        s += (s.size() > 1 ? "; " : "") + describe(ev);
    return s + "]";
}

std::optional<Event> next_event(Device &dev, std::chrono::milliseconds timeout)
{
    auto until = Clock::now() + timeout;
    for (;;) {
        std::vector<Event> got;
        int err = dev.get_events(got, 1);
        if (err == 0 && !got.empty())
            return std::move(got.front());
        if (err != EAGAIN) {
            ADD_FAILURE() << "GET_EVENTS: " << strerror(err);
            return std::nullopt;
        }
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            until - Clock::now());
        if (left.count() <= 0)
            return std::nullopt;
        dev.poll_in(int(left.count()));
    }
}

bool stays_quiet(Device &dev, std::chrono::milliseconds quiet)
{
    int revents = dev.poll_in(int(quiet.count()));
    return revents >= 0 && !(revents & POLLIN);
}

smbd::client::ConnectOptions PeerOptions::default_connect()
{
    smbd::client::ConnectOptions o;
    o.timeout = 5s;
    return o;
}

smbd::client::Smb2NegotiateOptions PeerOptions::default_smb2()
{
    smbd::client::Smb2NegotiateOptions o;
    for (size_t i = 0; i < o.client_guid.size(); i++)
        o.client_guid[i] = uint8_t(0xc0 + i);
    return o;
}

smbd::client::Result<std::unique_ptr<Client>>
negotiated_client(const PeerOptions &opt)
{
    auto c = Client::connect(opt.addr, opt.port, opt.connect);
    if (!c)
        return c.error();
    if (auto st = (*c)->negotiate(); !st)
        return st.error();
    if (auto r = (*c)->smb2_negotiate(opt.smb2); !r)
        return r.error();
    return std::move(*c);
}

ExtraAddresses::ExtraAddresses(int n, bool ipv6)
{
    const std::string server = ipv6 ? server_addr6() : server_addr();
    const std::string link = rdma_link();
    netdev_ = link.substr(link.rfind(' ') + 1);
    const std::string prefix =
        server.substr(0, server.rfind(ipv6 ? ':' : '.') + 1);
    // no duplicate address detection: usable at once
    suffix_ = ipv6 ? "/64 nodad" : "/24";
    for (int i = 0; i < n; i++) {
        std::string a = prefix + std::to_string(201 + i);
        if (std::system(
                ("ip addr add " + a + suffix_ + " dev " + netdev_).c_str()))
            return;
        addrs_.push_back(a);
    }
}

ExtraAddresses::~ExtraAddresses()
{
    const std::string len = suffix_.substr(0, suffix_.find(' '));
    for (const auto &a : addrs_)
        (void)std::system(
            ("ip addr del " + a + len + " dev " + netdev_).c_str());
}

PeerOptions from_address(const std::string &source)
{
    PeerOptions o;
    o.connect.source = source;
    o.connect.receive_credit_max = 8;
    o.connect.send_slots = 4;
    return o;
}

smbd::client::Result<std::unique_ptr<Client>>
bound_client(uint64_t session, const PeerOptions &opt)
{
    auto c = negotiated_client(opt);
    if (!c)
        return smbd::client::Error{c.error().code, "connect and negotiate: " +
                                                       c.error().message};
    if (auto ss = (*c)->session_setup(session_setup_options(true, session));
        !ss)
        return smbd::client::Error{ss.error().code, "binding SESSION_SETUP: " +
                                                        ss.error().message};
    return std::move(*c);
}

smbd::client::SessionSetupOptions session_setup_options(bool binding,
                                                        uint64_t session)
{
    smbd::client::SessionSetupOptions so;
    so.binding = binding;
    so.session_id = binding ? session : 0;
    so.message_id = 1;
    return so;
}

std::vector<uint8_t> session_setup_request(bool binding, uint64_t session)
{
    return smbd::client::build_smb2_session_setup(
        session_setup_options(binding, session));
}

std::vector<uint8_t> test_pdu(uint64_t session, uint64_t n, uint32_t size)
{
    return smbd::client::build_echo_pdu({2 + n, session, size});
}

std::string echo_once(Client &c, uint64_t n, uint32_t size,
                      std::chrono::milliseconds wait)
{
    smbd::client::EchoSpec spec{2 + n, c.session_id(), size};
    if (auto st = c.send_pdu(smbd::client::build_echo_pdu(spec)); !st)
        return "sending a " + std::to_string(size) +
               "-byte PDU: " + st.error().message;
    auto got = c.recv_pdu(wait);
    if (!got)
        return "echo of a " + std::to_string(size) +
               "-byte PDU: " + got.error().message;
    if (auto st = smbd::client::verify_echo(spec, *got); !st)
        return st.error().message;
    return "";
}

PeerResult peer(std::function<std::string()> fn)
{
    return std::async(std::launch::async, std::move(fn));
}

PeerResult echo_then_idle(uint64_t session, std::atomic<bool> &echoed,
                          std::atomic<bool> &go)
{
    return peer([session, &echoed, &go]() -> std::string {
        auto c = bound_client(session);
        if (!c)
            return c.error().message;
        if (std::string e = echo_once(**c, 0, 4096); !e.empty())
            return e;
        echoed = true;
        while (!go && (*c)->connected()) {
            (*c)->poll_events();
            std::this_thread::sleep_for(10ms);
        }
        (*c)->close();
        return "";
    });
}

std::string verdict(PeerResult &p, std::chrono::milliseconds timeout)
{
    if (p.wait_for(timeout) != std::future_status::ready)
        return "peer still running after " + std::to_string(timeout.count()) +
               " ms";
    return p.get();
}

int answer_session_setup(Device &dev, const Event &new_channel,
                         uint64_t session_id)
{
    std::string why;
    auto resp = smbd::responder::session_setup_response(
        new_channel.session_setup(), session_id, &why);
    if (resp.empty()) {
        ADD_FAILURE() << "NEW_CHANNEL carries no valid SESSION_SETUP: " << why;
        return EINVAL;
    }
    return dev.send_pdu(new_channel.conn_id(), resp);
}

int echo(Device &dev, const Event &pdu)
{
    return dev.send_pdu(pdu.conn_id(),
                        smbd::responder::echo_response(pdu.data));
}

Smbd::Smbd(const Params &params, bool listen, std::vector<uint64_t> sessions)
    : master_(O_NONBLOCK), acceptor_(O_NONBLOCK)
{
    EXPECT_TRUE(master_.ok()) << strerror(master_.error());
    EXPECT_TRUE(acceptor_.ok()) << strerror(acceptor_.error());
    EXPECT_EQ(master_.set_params(params), 0);
    if (listen) {
        EXPECT_EQ(master_.listen(), 0);
    }
    for (uint64_t s : sessions) {
        EXPECT_EQ(master_.register_session(s), 0);
    }
}

std::vector<Event> Smbd::all_events() const
{
    std::vector<Event> all = events_[0];
    all.insert(all.end(), events_[1].begin(), events_[1].end());
    return all;
}

void Smbd::handle(int which, Event ev)
{
    Device &dev = which ? acceptor_ : master_;
    switch (ev.type()) {
    case SMBD_EVENT_NEW_CONNECTION: {
        uint64_t id = 0;
        EXPECT_EQ(acceptor_.accept(ev.raw.u.new_connection.token, id), 0)
            << describe(ev);
        break;
    }
    case SMBD_EVENT_NEW_CHANNEL: {
        owned_++;
        uint64_t session = ev.raw.flags & SMBD_CHANNEL_BOUND
                               ? ev.raw.u.new_channel.session_id
                               : next_session_++;
        check_send(ev, answer_session_setup(dev, ev, session));
        break;
    }
    case SMBD_EVENT_PDU_RECEIVED:
        check_send(ev, echo(dev, ev));
        break;
    case SMBD_EVENT_DISCONNECTED:
        gone_[ev.conn_id()] = ev.raw.u.disconnected.reason;
        vanished_.erase(ev.conn_id());
        break;
    }
    events_[which].push_back(std::move(ev));
}

/*
 * The peer may be gone before the answer: ENOTCONN while the connection is
 * disconnecting, ENOENT once it is torn down, which the driver does only
 * after queueing its DISCONNECTED (checked when this Smbd ends).
 */
void Smbd::check_send(const Event &ev, int err)
{
    if (err == ENOENT && !gone_.contains(ev.conn_id()))
        vanished_.insert(ev.conn_id());
    else
        EXPECT_TRUE(err == 0 || err == ENOTCONN)
            << strerror(err) << " " << describe(ev);
}

Smbd::~Smbd()
{
    for (Device *dev : {&master_, &acceptor_}) {
        std::vector<Event> got;
        while (!vanished_.empty() && dev->get_events(got) == 0 &&
               !got.empty()) {
            for (const Event &ev : got)
                if (ev.type() == SMBD_EVENT_DISCONNECTED)
                    vanished_.erase(ev.conn_id());
            got.clear();
        }
    }
    for (uint64_t id : vanished_)
        ADD_FAILURE() << "connection " << id
                      << " vanished without its DISCONNECTED";
}

bool Smbd::serve(const std::function<bool()> &done,
                 std::chrono::milliseconds timeout)
{
    auto until = Clock::now() + timeout;
    while (!done()) {
        if (Clock::now() > until)
            return false;
        pollfd fds[2] = {{master_.fd(), POLLIN, 0},
                         {acceptor_.fd(), POLLIN, 0}};
        if (poll(fds, 2, 20) <= 0)
            continue;
        for (int i = 0; i < 2; i++) {
            if (!(fds[i].revents & POLLIN))
                continue;
            std::vector<Event> got;
            int err = (i ? acceptor_ : master_).get_events(got);
            if (err && err != EAGAIN) {
                ADD_FAILURE() << "GET_EVENTS: " << strerror(err);
                return false;
            }
            for (Event &ev : got)
                handle(i, std::move(ev));
        }
    }
    return true;
}

bool Smbd::serve_disconnects(size_t n, std::chrono::milliseconds timeout)
{
    return serve([&] { return gone_.size() >= n; }, timeout);
}

bool Smbd::serve_peer(PeerResult &p, std::chrono::milliseconds timeout)
{
    return serve(
        [&] {
            return p.wait_for(0s) == std::future_status::ready &&
                   gone_.size() >= owned_;
        },
        timeout);
}

namespace {

bool read_all(int fd, void *buf, size_t len, int timeout_ms)
{
    auto *p = static_cast<uint8_t *>(buf);
    while (len) {
        pollfd pfd{fd, POLLIN, 0};
        if (poll(&pfd, 1, timeout_ms) <= 0)
            return false;
        ssize_t n = read(fd, p, len);
        if (n <= 0)
            return false;
        p += n;
        len -= size_t(n);
    }
    return true;
}

bool write_all(int fd, const void *buf, size_t len)
{
    return write(fd, buf, len) == ssize_t(len);
}

// Sent, or the peer is gone and its DISCONNECTED comes next.
bool send_ok(int err) { return err == 0 || err == ENOTCONN || err == ENOENT; }

// The child's life; no gtest here, only the pipe to the parent.
[[noreturn]] void child_serve(int in, int out, uint64_t session_id)
{
    ChildOwner::Report r;
    uint8_t token[SMBD_TOKEN_SIZE];
    if (!read_all(in, token, sizeof(token), 60000))
        _exit(1);
    Device dev(O_NONBLOCK);
    r.accept_err = dev.ok() ? dev.accept(token, r.conn_id) : dev.error();
    write_all(out, &r, sizeof(r));
    if (r.accept_err)
        _exit(0);
    for (;;) {
        std::vector<Event> got;
        int err = dev.get_events(got);
        if (err == EAGAIN) {
            if (dev.poll_in(60000) <= 0)
                _exit(2);
            continue;
        }
        if (err)
            _exit(3);
        for (const Event &ev : got) {
            if (ev.type() == SMBD_EVENT_NEW_CHANNEL) {
                r.channel_flags = ev.raw.flags;
                auto resp = smbd::responder::session_setup_response(
                    ev.session_setup(), session_id);
                if (resp.empty() || !send_ok(dev.send_pdu(ev.conn_id(), resp)))
                    _exit(4);
            }
            else if (ev.type() == SMBD_EVENT_PDU_RECEIVED) {
                int err = dev.send_pdu(ev.conn_id(),
                                       smbd::responder::echo_response(ev.data));
                if (!send_ok(err))
                    _exit(5);
                r.pdus += !err;
            }
            else if (ev.type() == SMBD_EVENT_DISCONNECTED) {
                r.reason = ev.raw.u.disconnected.reason;
                write_all(out, &r, sizeof(r));
                _exit(0);
            }
        }
    }
}

} // namespace

ChildOwner::ChildOwner(uint64_t session_id)
{
    int down[2], up[2];
    if (pipe2(down, O_CLOEXEC) || pipe2(up, O_CLOEXEC)) {
        ADD_FAILURE() << "pipe: " << strerror(errno);
        return;
    }
    pid_ = fork();
    if (pid_ == 0) {
        close(down[1]);
        close(up[0]);
        child_serve(down[0], up[1], session_id);
    }
    close(down[0]);
    close(up[1]);
    to_child_ = down[1];
    from_child_ = up[0];
    EXPECT_GT(pid_, 0) << "fork: " << strerror(errno);
}

ChildOwner::~ChildOwner()
{
    if (pid_ > 0) {
        ::kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
    }
    close(to_child_);
    close(from_child_);
}

ChildOwner::Report
ChildOwner::claim(std::span<const uint8_t, SMBD_TOKEN_SIZE> token)
{
    Report r;
    if (!write_all(to_child_, token.data(), token.size()) ||
        !read_all(from_child_, &r, sizeof(r), 10000))
        ADD_FAILURE() << "the child did not report its ACCEPT";
    return r;
}

std::optional<ChildOwner::Report>
ChildOwner::finish(std::chrono::milliseconds timeout)
{
    Report r;
    if (!read_all(from_child_, &r, sizeof(r), int(timeout.count())))
        return std::nullopt;
    return r;
}

void ChildOwner::kill() { ::kill(pid_, SIGKILL); }

bool ChildOwner::killed()
{
    if (pid_ > 0 && waitpid(pid_, &status_, 0) == pid_)
        pid_ = -1;
    return pid_ == -1 && WIFSIGNALED(status_) && WTERMSIG(status_) == SIGKILL;
}

void Scenario::SetUp() { start_ = Counters::now(); }

void Scenario::TearDown()
{
    EXPECT_TRUE(settled()) << "connections leaked: conn_active "
                           << Counters::now()["conn_active"] << ", "
                           << start_["conn_active"] << " at the start";
    if (HasFailure())
        std::fprintf(stderr, "counters that moved:\n%skernel log:\n%s",
                     Counters::now().changes(start_).c_str(),
                     dmesg_tail().c_str());
}

int64_t Scenario::delta(const std::string &name) const
{
    return Counters::now().delta(start_, name);
}

int64_t Scenario::await_delta(const std::string &name, int64_t n,
                              std::chrono::milliseconds timeout) const
{
    auto until = Clock::now() + timeout;
    while (delta(name) < n && Clock::now() < until)
        std::this_thread::sleep_for(20ms);
    return delta(name);
}

bool Scenario::settled(std::chrono::milliseconds timeout) const
{
    auto until = Clock::now() + timeout;
    while (Counters::now()["conn_active"] != start_["conn_active"]) {
        if (Clock::now() > until)
            return false;
        std::this_thread::sleep_for(20ms);
    }
    return true;
}

} // namespace scenario
