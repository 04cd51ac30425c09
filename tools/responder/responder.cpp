// The test responder's event loop; see responder.h.
#include "responder.h"

#include "reply.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <cinttypes>
#include <cstdarg>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace smbd::responder {

using device::Device;
using device::Event;

namespace {

std::string address(const smbd_sockaddr &a)
{
    char buf[INET6_ADDRSTRLEN] = "?";
    inet_ntop(a.family, a.addr, buf, sizeof(buf));
    return std::string(buf) + ":" + std::to_string(a.port);
}

std::string hex(const uint8_t *p, size_t n)
{
    std::string s;
    char b[3];
    for (size_t i = 0; i < n; i++) {
        std::snprintf(b, sizeof(b), "%02x", p[i]);
        s += b;
    }
    return s;
}

} // namespace

Responder::Responder(Options opts) : opts_(std::move(opts))
{
    stop_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

Responder::~Responder()
{
    reap_children(true);
    if (stop_fd_ >= 0)
        close(stop_fd_);
}

void Responder::log(const char *fmt, ...) const
{
    if (!opts_.log)
        return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    std::fprintf(opts_.log, "%s %d: %s\n", child_ ? "child" : "master",
                 static_cast<int>(getpid()), line);
    std::fflush(opts_.log);
}

int Responder::start()
{
    if (stop_fd_ < 0)
        return errno;
    dev_ = Device(O_NONBLOCK);
    if (!dev_.ok()) {
        log("cannot open /dev/smbd: %s", strerror(dev_.error()));
        return dev_.error();
    }
    smbd_info info;
    int err = dev_.info(info);
    if (err) {
        log("GET_INFO failed: %s", strerror(err));
        return err;
    }
    max_batch_ = info.out_max_batch;
    log("device: ABI %u, features 0x%llx, port %u, batch %u, PDU %u bytes",
        info.out_abi_version,
        static_cast<unsigned long long>(info.out_features), info.out_port,
        info.out_max_batch, info.out_max_pdu_size);

    const device::Params &p = opts_.params;
    err = dev_.set_params(p);
    if (err) {
        log("SET_PARAMS failed: %s", strerror(err));
        return err;
    }
    log("SET_PARAMS: credits %u/%u, send/receive %u/%u, fragmented %u, "
        "read/write %u, keepalive %u/%u ms, negotiate %u ms, accept %u ms, "
        "dialects 0x%04x..0x%04x",
        p.receive_credit_max, p.send_credit_target, p.max_send_size,
        p.max_receive_size, p.max_fragmented_size, p.max_read_write_size,
        p.keepalive_interval_ms, p.keepalive_timeout_ms,
        p.negotiate_timeout_ms, p.accept_timeout_ms, p.min_dialect,
        p.max_dialect);
    if (opts_.listen) {
        err = dev_.listen();
        if (err) {
            log("LISTEN failed: %s", strerror(err));
            return err;
        }
        log("LISTEN: new sessions come to this process");
    }
    for (uint64_t id : opts_.register_sessions) {
        err = dev_.register_session(id);
        if (err) {
            log("REGISTER_SESSION 0x%" PRIx64 " failed: %s", id,
                strerror(err));
            return err;
        }
        summary_.sessions++;
        log("REGISTER_SESSION 0x%" PRIx64
            ": bound channels of it come here", id);
    }
    return 0;
}

void Responder::stop()
{
    uint64_t one = 1;
    // nothing to do if it fails: the counter is then already non-zero
    if (write(stop_fd_, &one, sizeof(one)) < 0)
        return;
}

int Responder::run()
{
    int err = serve();
    reap_children(true);
    return err;
}

bool Responder::finished() const
{
    if (child_)
        return live_.empty();
    return opts_.connections && summary_.ended >= opts_.connections;
}

int Responder::serve()
{
    for (;;) {
        pollfd fds[2] = {{dev_.fd(), POLLIN, 0}, {stop_fd_, POLLIN, 0}};
        // the master wakes now and then to reap its children
        int n = poll(fds, 2, child_ ? -1 : 100);
        if (n < 0 && errno != EINTR)
            return errno;
        if (fds[1].revents & POLLIN) {
            log("stopping");
            return 0;
        }
        if (!child_)
            reap_children(false);
        if (fds[0].revents & POLLIN) {
            int err = drain_events();
            if (err)
                return err;
        }
        if (finished())
            return 0;
        if ((fds[0].revents & (POLLERR | POLLHUP)) &&
            !(fds[0].revents & POLLIN)) {
            log("the device reports an error: stopping");
            return ENODEV;
        }
    }
}

int Responder::drain_events()
{
    for (;;) {
        std::vector<Event> events;
        uint32_t needed = 0;
        int err = dev_.get_events(events, max_batch_, data_len_, &needed);
        if (err == EAGAIN)
            return 0;
        if (err == EMSGSIZE && needed > data_len_) {
            log("next event needs %u bytes of data: growing", needed);
            data_len_ = needed;
            continue;
        }
        if (err) {
            log("GET_EVENTS failed: %s", strerror(err));
            return err;
        }
        for (const Event &ev : events)
            handle(ev);
        flush_sends();
    }
}

void Responder::handle(const Event &ev)
{
    const smbd_event &e = ev.raw;
    switch (e.type) {
    case SMBD_EVENT_NEW_CONNECTION:
        on_new_connection(ev);
        break;
    case SMBD_EVENT_NEW_CHANNEL:
        on_new_channel(ev);
        break;
    case SMBD_EVENT_PDU_RECEIVED:
        summary_.pdus_received++;
        summary_.bytes_received += ev.data.size();
        log("conn %llu: PDU_RECEIVED %zu bytes, %s: echoing",
            static_cast<unsigned long long>(e.conn_id), ev.data.size(),
            describe_pdu(ev.data).c_str());
        pending_.push_back({e.conn_id, echo_response(ev.data)});
        break;
    case SMBD_EVENT_SEND_DONE:
        log("conn %llu: SEND_DONE user_data %llu status %d",
            static_cast<unsigned long long>(e.conn_id),
            static_cast<unsigned long long>(e.user_data), e.status);
        break;
    case SMBD_EVENT_DISCONNECTED:
        on_disconnected(ev);
        break;
    case SMBD_EVENT_OVERFLOW:
        log("OVERFLOW: %llu events lost",
            static_cast<unsigned long long>(e.u.overflow.lost));
        break;
    default:
        log("conn %llu: event %u (%s), ignored",
            static_cast<unsigned long long>(e.conn_id), e.type,
            device::event_name(e.type));
    }
}

void Responder::on_new_connection(const Event &ev)
{
    const auto &c = ev.raw.u.new_connection;
    summary_.connections_offered++;
    log("conn %llu: NEW_CONNECTION from %s to %s, client guid %s: "
        "a new session, offered to the listener",
        static_cast<unsigned long long>(ev.conn_id()),
        address(c.remote).c_str(), address(c.local).c_str(),
        hex(c.client_guid, sizeof(c.client_guid)).c_str());
    if (!opts_.fork) {
        uint64_t id = 0;
        int err = dev_.accept(std::span<const uint8_t, SMBD_TOKEN_SIZE>(
                                  c.token, SMBD_TOKEN_SIZE),
                              id);
        if (err)
            log("conn %llu: ACCEPT failed: %s",
                static_cast<unsigned long long>(ev.conn_id()),
                strerror(err));
        else
            log("conn %llu: ACCEPTed in this process",
                static_cast<unsigned long long>(id));
        return;
    }
    // flush the log so the child does not print the master's buffer again
    if (opts_.log)
        std::fflush(opts_.log);
    pid_t pid = fork();
    if (pid < 0) {
        log("fork failed: %s", strerror(errno));
        return;
    }
    if (pid == 0)
        serve_child(c.token);	// does not return
    children_.insert(pid);
    summary_.children++;
    log("conn %llu: forked child %d to claim it",
        static_cast<unsigned long long>(ev.conn_id()), pid);
}

// The child, like a forked smbd, drops the master's file and serves the
// connection from its own.
void Responder::serve_child(const uint8_t *token)
{
    child_ = true;
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    dev_.close();
    close(stop_fd_);
    stop_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    children_.clear();
    pending_.clear();
    live_.clear();
    summary_ = Summary{};
    int rc = 1;
    dev_ = Device(O_NONBLOCK);
    uint64_t id = 0;
    int err = dev_.ok() ? dev_.accept(std::span<const uint8_t,
                                                SMBD_TOKEN_SIZE>(
                                          token, SMBD_TOKEN_SIZE),
                                      id)
                        : dev_.error();
    if (stop_fd_ < 0) {
        log("eventfd: %s", strerror(errno));
    } else if (err) {
        log("ACCEPT failed: %s", strerror(err));
    } else {
        live_.insert(id);
        log("conn %llu: ACCEPTed on this process's own file",
            static_cast<unsigned long long>(id));
        err = serve();
        rc = err ? 1 : 0;
    }
    print_summary();
    _exit(rc);
}

void Responder::on_new_channel(const Event &ev)
{
    const smbd_event &e = ev.raw;
    const auto &c = e.u.new_channel;
    bool bound = e.flags & SMBD_CHANNEL_BOUND;
    live_.insert(e.conn_id);
    log("conn %llu: NEW_CHANNEL (%s%s) from %s, dialect 0x%04x, session "
        "0x%llx; NEGOTIATE request %u, response %u, SESSION_SETUP %u bytes",
        static_cast<unsigned long long>(e.conn_id),
        bound ? "bound to a registered session" : "new session",
        e.flags & SMBD_CHANNEL_ACCEPTED ? ", accepted" : "",
        address(c.remote).c_str(), c.dialect,
        static_cast<unsigned long long>(c.session_id), c.negotiate_req_len,
        c.negotiate_resp_len, c.session_setup_len);
    std::span<const uint8_t> setup = ev.session_setup();
    if (setup.size() != c.session_setup_len) {
        log("conn %llu: the NEW_CHANNEL lengths do not add up to its %zu "
            "bytes: disconnecting",
            static_cast<unsigned long long>(e.conn_id), ev.data.size());
        dev_.disconnect(e.conn_id);
        return;
    }

    uint64_t session_id;
    if (bound) {
        summary_.bound++;
        session_id = c.session_id;
    } else {
        summary_.accepted++;
        session_id = new_session_id();
        // registered before the answer, so that the client's next channel
        // can bind as soon as it sees the SessionId
        int err = dev_.register_session(session_id);
        if (err)
            log("REGISTER_SESSION 0x%llx failed: %s",
                static_cast<unsigned long long>(session_id), strerror(err));
        else
            summary_.sessions++;
    }
    std::string why;
    std::vector<uint8_t> resp =
        session_setup_response(setup, session_id, &why);
    if (resp.empty()) {
        log("conn %llu: the SESSION_SETUP is not valid (%s): disconnecting",
            static_cast<unsigned long long>(e.conn_id), why.c_str());
        dev_.disconnect(e.conn_id);
        return;
    }
    log("conn %llu: SESSION_SETUP answered with STATUS_SUCCESS, session "
        "0x%llx",
        static_cast<unsigned long long>(e.conn_id),
        static_cast<unsigned long long>(session_id));
    pending_.push_back({e.conn_id, std::move(resp)});
}

void Responder::on_disconnected(const Event &ev)
{
    const char *reason = device::reason_name(ev.raw.u.disconnected.reason);
    summary_.disconnected++;
    summary_.ended++;
    summary_.reasons[reason]++;
    live_.erase(ev.conn_id());
    log("conn %llu: DISCONNECTED (%s)",
        static_cast<unsigned long long>(ev.conn_id()), reason);
}

void Responder::flush_sends()
{
    std::vector<device::SendEntry> entries;
    for (const Send &s : pending_) {
        device::SendEntry e;
        e.conn_id = s.conn_id;
        e.iov.push_back(s.pdu);
        entries.push_back(std::move(e));
    }
    std::span<const device::SendEntry> rest(entries);
    while (!rest.empty()) {
        std::span<const device::SendEntry> batch =
            rest.first(std::min<size_t>(rest.size(), max_batch_));
        uint32_t done = 0;
        int err = dev_.send_pdu(batch, &done);
        done = std::min<uint32_t>(done, static_cast<uint32_t>(batch.size()));
        for (uint32_t i = 0; i < done; i++) {
            summary_.pdus_sent++;
            summary_.bytes_sent += batch[i].iov[0].size();
        }
        // a partial batch is sent again from the failing entry, which then
        // fails first and reports its errno; such an entry is skipped
        if (err || done == 0) {
            summary_.send_errors++;
            log("conn %llu: SEND_PDU of %zu bytes failed: %s",
                static_cast<unsigned long long>(batch[done].conn_id),
                batch[done].iov[0].size(),
                err ? strerror(err) : "nothing accepted");
            done = 1;
        }
        rest = rest.subspan(done);
    }
    pending_.clear();
}

void Responder::reap_children(bool wait)
{
    if (wait)
        for (int pid : children_)
            kill(pid, SIGTERM);
    for (auto it = children_.begin(); it != children_.end();) {
        int status = 0;
        pid_t r = waitpid(*it, &status, wait ? 0 : WNOHANG);
        if (r == 0) {
            ++it;
            continue;
        }
        if (r > 0)
            log("child %d ended (%s %d)", *it,
                WIFEXITED(status) ? "exit" : "signal",
                WIFEXITED(status) ? WEXITSTATUS(status)
                                  : WTERMSIG(status));
        summary_.ended++;
        it = children_.erase(it);
    }
}

uint64_t Responder::new_session_id()
{
    // unique across the children: the pid in the high half
    return (static_cast<uint64_t>(getpid()) << 32) | ++next_session_;
}

void Responder::print_summary() const
{
    const Summary &s = summary_;
    log("summary: %llu connections offered, %llu children, %llu accepted "
        "and %llu bound channels, %llu sessions registered, %llu PDUs "
        "received (%llu bytes), %llu PDUs sent (%llu bytes), %llu send "
        "errors, %llu disconnected, %llu connections ended",
        (unsigned long long)s.connections_offered,
        (unsigned long long)s.children, (unsigned long long)s.accepted,
        (unsigned long long)s.bound, (unsigned long long)s.sessions,
        (unsigned long long)s.pdus_received,
        (unsigned long long)s.bytes_received,
        (unsigned long long)s.pdus_sent, (unsigned long long)s.bytes_sent,
        (unsigned long long)s.send_errors,
        (unsigned long long)s.disconnected, (unsigned long long)s.ended);
    for (const auto &[reason, n] : s.reasons)
        log("summary: %llu disconnected by %s", (unsigned long long)n,
            reason.c_str());
}

} // namespace smbd::responder
