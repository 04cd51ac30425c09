// The test responder's event loop; see responder.h.
#include "responder.h"

#include "reply.h"
#include "smb2_rw.h"

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
    max_descriptors_ = info.out_max_descriptors;
    rdma_rw_ = info.out_features & SMBD_FEATURE_RDMA_RW;
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
        // what arrived together is started together: one RDMA_RW
        start_transfers();
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
        if (FileServer::handles(ev.data)) {
            on_io_request(ev);
            break;
        }
        log("conn %llu: PDU_RECEIVED %zu bytes, %s: echoing",
            static_cast<unsigned long long>(e.conn_id), ev.data.size(),
            describe_pdu(ev.data).c_str());
        pending_.push_back({e.conn_id, echo_response(ev.data), {}});
        break;
    case SMBD_EVENT_RDMA_DONE:
        on_rdma_done(ev);
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
    reset_io();
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
    dialects_[e.conn_id] = static_cast<uint16_t>(c.dialect);
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
    pending_.push_back({e.conn_id, std::move(resp), {}});
}

void Responder::on_disconnected(const Event &ev)
{
    const char *reason = device::reason_name(ev.raw.u.disconnected.reason);
    summary_.disconnected++;
    summary_.ended++;
    summary_.reasons[reason]++;
    live_.erase(ev.conn_id());
    dialects_.erase(ev.conn_id());
    log("conn %llu: DISCONNECTED (%s)",
        static_cast<unsigned long long>(ev.conn_id()), reason);
    // its requests still waiting for buffers will never be answered
    std::erase_if(queued_, [&](const Io &io) {
        return io.conn_id == ev.conn_id();
    });
    // DISCONNECTED is a connection's last event: every RDMA_DONE came first
    for (auto it = in_flight_.begin(); it != in_flight_.end();) {
        if (it->second.conn_id != ev.conn_id()) {
            ++it;
            continue;
        }
        log("conn %llu: RDMA operation %llu had no RDMA_DONE before "
            "DISCONNECTED (a driver bug)",
            static_cast<unsigned long long>(ev.conn_id()),
            static_cast<unsigned long long>(it->first));
        summary_.rdma_errors++;
        buffers_->give(it->second.buffers);
        it = in_flight_.erase(it);
    }
}

void Responder::setup_io()
{
    if (files_)
        return;
    const device::Params &p = opts_.params;
    Limits l;
    l.max_io = std::min({p.max_read_write_size, p.max_read_size,
                         p.max_write_size});
    l.max_descriptors = max_descriptors_;
    int err = rdma_rw_ ? pool_.map(dev_) : ENOTTY;
    if (err) {
        log("no RDMA transfers: %s",
            rdma_rw_ ? strerror(err) : "the driver has no RDMA_RW");
    } else {
        buffers_.emplace(pool_.buffer_count(), pool_.buffer_size());
        // one request must fit in the pool at once, or it would wait forever
        uint64_t pool_bytes = uint64_t{pool_.buffer_count()} *
                              pool_.buffer_size();
        l.max_io = static_cast<uint32_t>(std::min<uint64_t>(l.max_io,
                                                            pool_bytes));
        log("pool: %u buffers of %u bytes mapped; READ/WRITE up to %u "
            "bytes and %u descriptors, file of %llu bytes",
            pool_.buffer_count(), pool_.buffer_size(), l.max_io,
            l.max_descriptors,
            static_cast<unsigned long long>(opts_.file_size));
    }
    files_.emplace(opts_.file_size, l);
}

void Responder::reset_io()
{
    dialects_.clear();
    files_.reset();
    // the pool is the parent's mapping of its file's pages; a forked
    // child has no such mapping (VM_DONTCOPY) and maps its own file's
    pool_.forget();
    buffers_.reset();
    queued_.clear();
    in_flight_.clear();
}

void Responder::answer(uint64_t conn_id, const Decision &d,
                       std::vector<uint8_t> response)
{
    uint32_t status = smbd_get_le32(response.data() + 8);
    bool read = smbd_get_le16(response.data() + 12) == smb2rw::SMB2_READ;
    if (status != NT_STATUS_SUCCESS)
        summary_.io_refused++;
    else if (read)
        summary_.reads++;
    else
        summary_.writes++;
    if (opts_.log_io)
        log("conn %llu: %s: status 0x%08x%s",
            static_cast<unsigned long long>(conn_id), d.note.c_str(), status,
            d.invalidate ? ", send with invalidate" : "");
    pending_.push_back({conn_id, std::move(response), d.invalidate});
}

void Responder::on_io_request(const Event &ev)
{
    setup_io();
    auto dialect = dialects_.find(ev.conn_id());
    Decision d = files_->request(
        ev.data, dialect == dialects_.end() ? uint16_t{SMB2_DIALECT_311}
                                            : dialect->second);
    if (d.transfer && !buffers_) {
        smb2_hdr hdr = d.transfer->hdr;
        d.transfer.reset();
        d.note = "refused: no RDMA transfers on this file";
        d.response = smb2rw::build_error_response(
            hdr, smb2rw::credit_response(hdr), NT_STATUS_NOT_SUPPORTED);
    }
    if (!d.transfer) {
        std::vector<uint8_t> response = std::move(d.response);
        answer(ev.conn_id(), d, std::move(response));
        return;
    }
    Io io;
    io.conn_id = ev.conn_id();
    io.decision = std::move(d);
    queued_.push_back(std::move(io));
}

std::vector<std::span<uint8_t>> Responder::memory(const Io &io) const
{
    std::vector<std::span<uint8_t>> out;
    for (const smbd_slice &s : io.slices)
        out.emplace_back(pool_.buffer(s.buffer) + s.offset, s.length);
    return out;
}

void Responder::start_transfers()
{
    std::vector<device::RwOp> ops;
    // first come, first served: a large request is not overtaken forever
    while (!queued_.empty()) {
        Io &io = queued_.front();
        const Transfer &t = *io.decision.transfer;
        auto buffers = buffers_->take(t.bytes);
        if (!buffers) {
            if (!io.waited)
                summary_.io_queued++;
            io.waited = true;
            break;
        }
        io.buffers = std::move(*buffers);
        io.slices = buffers_->slices(io.buffers, t.bytes);
        if (!t.write)
            files_->fill(t, memory(io));
        uint64_t id = ++next_io_;
        Io &started = in_flight_[id] = std::move(io);
        queued_.pop_front();
        const Transfer &st = *started.decision.transfer;
        ops.push_back({started.conn_id, id, started.slices, st.descriptors,
                       st.write ? uint32_t{SMBD_RW_READ_FROM_PEER}
                                : uint32_t{SMBD_RW_WRITE_TO_PEER}});
    }
    std::span<const device::RwOp> rest(ops);
    while (!rest.empty()) {
        auto batch = rest.first(std::min<size_t>(rest.size(), max_batch_));
        uint32_t done = 0;
        int err = dev_.rdma_rw(batch, &done);
        done = std::min<uint32_t>(done, static_cast<uint32_t>(batch.size()));
        summary_.rdma_ops += done;
        // as with SEND_PDU: the failing entry, submitted again first,
        // reports its errno
        if (err || done == 0) {
            transfer_failed(batch[done].user_data, err ? err : EIO);
            done++;
        }
        rest = rest.subspan(done);
    }
}

void Responder::transfer_failed(uint64_t id, int err)
{
    auto it = in_flight_.find(id);
    Io io = std::move(it->second);
    in_flight_.erase(it);
    buffers_->give(io.buffers);
    summary_.rdma_errors++;
    log("conn %llu: RDMA_RW for %s failed: %s",
        static_cast<unsigned long long>(io.conn_id),
        io.decision.note.c_str(), strerror(err));
    // a connection that is gone gets no answer; anything else is refused
    if (err == ENOTCONN || err == ENOENT)
        return;
    const smb2_hdr &hdr = io.decision.transfer->hdr;
    io.decision.note = "refused: RDMA_RW " + std::string(strerror(err));
    answer(io.conn_id, io.decision,
           smb2rw::build_error_response(hdr, smb2rw::credit_response(hdr),
                                        NT_STATUS_INVALID_PARAMETER));
}

void Responder::on_rdma_done(const Event &ev)
{
    const smbd_event &e = ev.raw;
    auto it = in_flight_.find(e.user_data);
    if (it == in_flight_.end()) {
        log("conn %llu: RDMA_DONE for unknown operation %llu",
            static_cast<unsigned long long>(e.conn_id),
            static_cast<unsigned long long>(e.user_data));
        return;
    }
    Io io = std::move(it->second);
    in_flight_.erase(it);
    const Transfer &t = *io.decision.transfer;
    if (e.status != 0) {
        summary_.rdma_errors++;
        buffers_->give(io.buffers);
        // EIO and ENOTCONN: the connection goes down, nobody to answer;
        // otherwise the memory could not be mapped and the client waits
        bool gone = e.status == -EIO || e.status == -ENOTCONN;
        log("conn %llu: RDMA for %s failed: %s%s",
            static_cast<unsigned long long>(e.conn_id),
            io.decision.note.c_str(), strerror(-e.status),
            gone ? "; the connection goes down" : "");
        if (!gone) {
            const smb2_hdr &hdr = t.hdr;
            answer(io.conn_id, io.decision,
                   smb2rw::build_error_response(hdr, smb2rw::credit_response(hdr),
                                                smb2rw::NT_STATUS_INSUFFICIENT_RESOURCES));
        }
        return;
    }
    uint32_t moved = static_cast<uint32_t>(
        std::min<uint64_t>(e.u.rdma_done.bytes, t.bytes));
    if (t.write)
        summary_.rdma_bytes_read += moved;
    else
        summary_.rdma_bytes_written += moved;
    std::vector<uint8_t> response = files_->complete(t, moved, memory(io));
    buffers_->give(io.buffers);
    answer(io.conn_id, io.decision, std::move(response));
}

void Responder::flush_sends()
{
    std::vector<device::SendEntry> entries;
    for (const Send &s : pending_) {
        device::SendEntry e;
        e.conn_id = s.conn_id;
        e.iov.push_back(s.pdu);
        if (s.invalidate) {
            e.flags = SMBD_SEND_INVALIDATE;
            e.invalidate_token = *s.invalidate;
        }
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
    log("summary: %llu READs and %llu WRITEs answered, %llu refused, %llu "
        "waited for a buffer; RDMA: %llu operations, %llu bytes read from "
        "peers, %llu bytes written to peers, %llu errors",
        (unsigned long long)s.reads, (unsigned long long)s.writes,
        (unsigned long long)s.io_refused, (unsigned long long)s.io_queued,
        (unsigned long long)s.rdma_ops,
        (unsigned long long)s.rdma_bytes_read,
        (unsigned long long)s.rdma_bytes_written,
        (unsigned long long)s.rdma_errors);
    for (const auto &[reason, n] : s.reasons)
        log("summary: %llu disconnected by %s", (unsigned long long)n,
            reason.c_str());
}

} // namespace smbd::responder
