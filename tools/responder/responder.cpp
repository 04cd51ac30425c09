// The test responder's event loop; see responder.h.
#include "responder.h"

#include "policy.h"
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

namespace {

std::span<const uint8_t> data_of(const smbd_dev_event &ev)
{
    return {ev.data, ev.data_len};
}

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

// This process's own handle of the device, with its event storage.
int Responder::open_device()
{
    smbd_dev_open_args args = SMBD_DEV_OPEN_ARGS_INIT;
    args.required_features = SMBD_FEATURE_EVENTS | SMBD_FEATURE_SEND_PDU;
    smbd_dev *dev = nullptr;
    char why[256];
    int err = smbd_dev_open(&args, &dev, why, sizeof(why));
    if (err) {
        log("%s", why);
        return err;
    }
    dev_.reset(dev);
    smbd_dev_events *evs = nullptr;
    err = smbd_dev_events_new(dev, &evs);
    if (err) {
        log("%s", smbd_dev_errmsg(dev));
        return err;
    }
    events_.reset(evs);
    smbd_dev_get_info(dev, &info_, sizeof(info_));
    return 0;
}

int Responder::start()
{
    if (stop_fd_ < 0)
        return errno;
    int err = open_device();
    if (err)
        return err;
    log("device: ABI %u, features 0x%llx, pool %u x %u bytes, PDU %u "
        "bytes; libsmbd %s",
        info_.abi_version, static_cast<unsigned long long>(info_.features),
        info_.pool_buffers, info_.buffer_size, info_.max_pdu_size,
        smbd_dev_version());

    const device::Params &p = opts_.params;
    smbd_dev_policy policy = lib::policy_of(p);
    err = smbd_dev_set_policy(dev_.get(), &policy);
    if (err) {
        log("%s", smbd_dev_errmsg(dev_.get()));
        return err;
    }
    log("SET_PARAMS: credits %u/%u, send/receive %u/%u, fragmented %u, "
        "read/write %u, keepalive %u/%u ms, negotiate %u ms, setup %u ms, "
        "credit %u ms, accept %u ms, dialects 0x%04x..0x%04x",
        p.receive_credit_max, p.send_credit_target, p.max_send_size,
        p.max_receive_size, p.max_fragmented_size, p.max_read_write_size,
        p.keepalive_interval_ms, p.keepalive_timeout_ms, p.negotiate_timeout_ms,
        p.setup_timeout_ms, p.credit_timeout_ms, p.accept_timeout_ms,
        p.min_dialect, p.max_dialect);
    if (opts_.listen) {
        err = smbd_dev_listen(dev_.get());
        if (err) {
            log("%s", smbd_dev_errmsg(dev_.get()));
            return err;
        }
        log("LISTEN: new sessions come to this process");
    }
    for (uint64_t id : opts_.register_sessions) {
        err = smbd_dev_register_session(dev_.get(), id);
        if (err) {
            log("%s", smbd_dev_errmsg(dev_.get()));
            return err;
        }
        summary_.sessions++;
        log("REGISTER_SESSION 0x%" PRIx64 ": bound channels of it come here",
            id);
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

int Responder::serve() { return opts_.tevent ? serve_tevent() : serve_poll(); }

int Responder::serve_poll()
{
    for (;;) {
        pollfd fds[2] = {{smbd_dev_fd(dev_.get()), POLLIN, 0},
                         {stop_fd_, POLLIN, 0}};
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

namespace {

void stop_handler(tevent_context *, tevent_fd *, uint16_t, void *stopped)
{
    *static_cast<bool *>(stopped) = true;
}

// the master wakes now and then to reap its children
void tick(tevent_context *ev, tevent_timer *, timeval, void *self)
{
    tevent_add_timer(ev, ev, tevent_timeval_current_ofs(0, 100000), tick, self);
}

} // namespace

// The same service on a tevent loop: the glue fetches and dispatches
// events (connections attached at their NEW_CHANNEL), RDMA transfers are
// tevent requests, and what the callbacks queued is started and sent
// after each turn of the loop.
int Responder::serve_tevent()
{
    TALLOC_CTX *mem = talloc_new(nullptr);
    bool stopped = false;
    int err = ENOMEM;
    ev_ = mem ? tevent_context_init(mem) : nullptr;
    glue_ = ev_ ? smbd_tevent_setup(mem, ev_, dev_.get(), glue_event, this)
                : nullptr;
    if (glue_ && tevent_add_fd(ev_, mem, stop_fd_, TEVENT_FD_READ, stop_handler,
                               &stopped)) {
        if (!child_)
            tick(ev_, nullptr, {}, this);
        log("serving on a tevent loop through libsmbd-tevent");
        err = 0;
    }
    while (!err) {
        if (tevent_loop_once(ev_) != 0) {
            err = errno ? errno : EIO;
            break;
        }
        if (stopped) {
            log("stopping");
            break;
        }
        if (glue_error_) {
            err = glue_error_;
            break;
        }
        if (!child_)
            reap_children(false);
        start_transfers();
        flush_sends();
        if (finished())
            break;
    }
    if (err)
        log("tevent loop: %s", strerror(err));
    // requests still running are orphaned: the library keeps their memory
    // until the kernel is done
    talloc_free(mem);
    ev_ = nullptr;
    glue_ = nullptr;
    return err;
}

void Responder::glue_event(const smbd_dev_event *ev, void *self)
{
    auto *r = static_cast<Responder *>(self);
    if (ev->type == 0) {
        r->glue_error_ = -ev->status;
        r->log("%s", smbd_dev_errmsg(r->dev_.get()));
        return;
    }
    r->handle(*ev);
}

namespace {

struct RdmaCallback {
    Responder *responder;
    uint64_t id;
};

} // namespace

int Responder::drain_events()
{
    for (;;) {
        size_t count = 0;
        int err = smbd_dev_fetch(dev_.get(), events_.get(), &count);
        if (err) {
            log("%s", smbd_dev_errmsg(dev_.get()));
            return err;
        }
        if (!count)
            return 0;
        for (size_t i = 0; i < count; i++)
            handle(*smbd_dev_events_at(events_.get(), i));
        // what arrived together is started together: one RDMA_RW
        start_transfers();
        flush_sends();
    }
}

void Responder::handle(const smbd_dev_event &ev)
{
    switch (ev.type) {
    case SMBD_EVENT_NEW_CONNECTION:
        on_new_connection(ev);
        break;
    case SMBD_EVENT_NEW_CHANNEL:
        on_new_channel(ev);
        break;
    case SMBD_EVENT_PDU_RECEIVED:
        summary_.pdus_received++;
        summary_.bytes_received += ev.data_len;
        if (FileServer::handles(data_of(ev))) {
            on_io_request(ev);
            break;
        }
        log("conn %llu: PDU_RECEIVED %zu bytes, %s: echoing",
            static_cast<unsigned long long>(ev.conn_id), ev.data_len,
            describe_pdu(data_of(ev)).c_str());
        pending_.push_back({ev.conn_id, echo_response(data_of(ev)), {}});
        break;
    case SMBD_EVENT_RDMA_DONE:
        on_rdma_done(ev.user_data, ev.status, ev.count);
        break;
    case SMBD_EVENT_SEND_DONE:
        log("conn %llu: SEND_DONE user_data %llu status %d",
            static_cast<unsigned long long>(ev.conn_id),
            static_cast<unsigned long long>(ev.user_data), ev.status);
        break;
    case SMBD_EVENT_DISCONNECTED:
        on_disconnected(ev);
        break;
    case SMBD_EVENT_OVERFLOW:
        log("OVERFLOW: %llu events lost",
            static_cast<unsigned long long>(ev.count));
        break;
    default:
        log("conn %llu: event %u (%s), ignored",
            static_cast<unsigned long long>(ev.conn_id), ev.type,
            smbd_dev_event_name(ev.type));
    }
}

void Responder::on_new_connection(const smbd_dev_event &ev)
{
    summary_.connections_offered++;
    log("conn %llu: NEW_CONNECTION from %s to %s, client guid %s: "
        "a new session, offered to the listener",
        static_cast<unsigned long long>(ev.conn_id),
        address(*ev.remote).c_str(), address(*ev.local).c_str(),
        hex(ev.client_guid, SMBD_GUID_SIZE).c_str());
    if (!opts_.fork) {
        uint64_t id = 0;
        int err = smbd_dev_accept(dev_.get(), ev.token, &id);
        if (err)
            log("conn %llu: %s", static_cast<unsigned long long>(ev.conn_id),
                smbd_dev_errmsg(dev_.get()));
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
    if (pid == 0) {
        uint8_t token[SMBD_TOKEN_SIZE];
        // the event storage goes with the master's handle
        std::copy_n(ev.token, SMBD_TOKEN_SIZE, token);
        serve_child(token); // does not return
    }
    children_.insert(pid);
    summary_.children++;
    log("conn %llu: forked child %d to claim it",
        static_cast<unsigned long long>(ev.conn_id), pid);
}

// The child, like a forked smbd, drops the master's file and serves the
// connection from its own.
void Responder::serve_child(const uint8_t *token)
{
    child_ = true;
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    // the parent's transfers and memory are not this process's
    reset_io();
    events_.reset();
    dev_.reset();
    close(stop_fd_);
    stop_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    children_.clear();
    pending_.clear();
    live_.clear();
    summary_ = Summary{};
    int rc = 1;
    uint64_t id = 0;
    int err = open_device();
    if (!err && (err = smbd_dev_accept(dev_.get(), token, &id)))
        log("%s", smbd_dev_errmsg(dev_.get()));
    if (stop_fd_ < 0) {
        log("eventfd: %s", strerror(errno));
    }
    else if (!err) {
        live_.insert(id);
        log("conn %llu: ACCEPTed on this process's own file",
            static_cast<unsigned long long>(id));
        err = serve();
        rc = err ? 1 : 0;
    }
    print_summary();
    _exit(rc);
}

void Responder::on_new_channel(const smbd_dev_event &e)
{
    bool bound = e.flags & SMBD_CHANNEL_BOUND;
    live_.insert(e.conn_id);
    // smbd adopts the connection: its events go to it from now on
    if (glue_)
        smbd_tevent_conn_attach(glue_, e.conn_id, glue_event, this);
    dialects_[e.conn_id] = static_cast<uint16_t>(e.dialect);
    log("conn %llu: NEW_CHANNEL (%s%s) from %s, dialect 0x%04x, session "
        "0x%llx; NEGOTIATE request %zu, response %zu, SESSION_SETUP %zu "
        "bytes",
        static_cast<unsigned long long>(e.conn_id),
        bound ? "bound to a registered session" : "new session",
        e.flags & SMBD_CHANNEL_ACCEPTED ? ", accepted" : "",
        address(*e.remote).c_str(), e.dialect,
        static_cast<unsigned long long>(e.session_id), e.negotiate_req_len,
        e.negotiate_resp_len, e.session_setup_len);
    std::span<const uint8_t> setup(e.session_setup, e.session_setup_len);

    uint64_t session_id;
    if (bound) {
        summary_.bound++;
        session_id = e.session_id;
    }
    else {
        summary_.accepted++;
        session_id = new_session_id();
        // registered before the answer, so that the client's next channel
        // can bind as soon as it sees the SessionId
        if (smbd_dev_register_session(dev_.get(), session_id))
            log("%s", smbd_dev_errmsg(dev_.get()));
        else
            summary_.sessions++;
    }
    std::string why;
    std::vector<uint8_t> resp = session_setup_response(setup, session_id, &why);
    if (resp.empty()) {
        log("conn %llu: the SESSION_SETUP is not valid (%s): disconnecting",
            static_cast<unsigned long long>(e.conn_id), why.c_str());
        smbd_dev_disconnect(dev_.get(), e.conn_id);
        return;
    }
    log("conn %llu: SESSION_SETUP answered with STATUS_SUCCESS, session "
        "0x%llx",
        static_cast<unsigned long long>(e.conn_id),
        static_cast<unsigned long long>(session_id));
    pending_.push_back({e.conn_id, std::move(resp), {}});
}

void Responder::on_disconnected(const smbd_dev_event &ev)
{
    const char *reason = smbd_dev_reason_name(ev.reason);
    summary_.disconnected++;
    summary_.ended++;
    summary_.reasons[reason]++;
    live_.erase(ev.conn_id);
    dialects_.erase(ev.conn_id);
    log("conn %llu: DISCONNECTED (%s)",
        static_cast<unsigned long long>(ev.conn_id), reason);
    // its requests still waiting for buffers will never be answered
    std::erase_if(queued_,
                  [&](const Io &io) { return io.conn_id == ev.conn_id; });
    std::erase_if(ready_, [&](uint64_t id) {
        return in_flight_.at(id).conn_id == ev.conn_id;
    });
    // DISCONNECTED is a connection's last event: every RDMA_DONE came
    // first. What never started (waiting for the kernel here or in the
    // glue) is dropped.
    for (auto it = in_flight_.begin(); it != in_flight_.end();) {
        Io &io = it->second;
        if (io.conn_id != ev.conn_id) {
            ++it;
            continue;
        }
        if (io.started) {
            log("conn %llu: RDMA operation %llu had no RDMA_DONE before "
                "DISCONNECTED (a driver bug)",
                static_cast<unsigned long long>(ev.conn_id),
                static_cast<unsigned long long>(it->first));
            summary_.rdma_errors++;
        }
        // before its memory: a request the glue still holds is cancelled
        talloc_free(io.req);
        smbd_dev_buf_free(io.buf);
        it = in_flight_.erase(it);
    }
}

void Responder::setup_io()
{
    if (files_)
        return;
    const device::Params &p = opts_.params;
    Limits l;
    l.max_io =
        std::min({p.max_read_write_size, p.max_read_size, p.max_write_size});
    l.max_descriptors = info_.max_descriptors;
    // one request must fit in the pool at once, or it would wait forever
    uint64_t pool_bytes = uint64_t{info_.pool_buffers} * info_.buffer_size;
    l.max_io = static_cast<uint32_t>(std::min<uint64_t>(l.max_io, pool_bytes));
    log("pool: %u buffers of %u bytes; READ/WRITE up to %u bytes and %u "
        "descriptors, file of %llu bytes",
        info_.pool_buffers, info_.buffer_size, l.max_io, l.max_descriptors,
        static_cast<unsigned long long>(opts_.file_size));
    files_.emplace(opts_.file_size, l);
}

void Responder::reset_io()
{
    dialects_.clear();
    files_.reset();
    queued_.clear();
    ready_.clear();
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

void Responder::on_io_request(const smbd_dev_event &ev)
{
    setup_io();
    auto dialect = dialects_.find(ev.conn_id);
    Decision d = files_->request(data_of(ev), dialect == dialects_.end()
                                                  ? uint16_t{SMB2_DIALECT_311}
                                                  : dialect->second);
    if (d.transfer && !(info_.features & SMBD_FEATURE_RDMA_RW)) {
        smb2_hdr hdr = d.transfer->hdr;
        d.transfer.reset();
        d.note = "refused: no RDMA transfers on this file";
        d.response = smb2rw::build_error_response(
            hdr, smb2rw::credit_response(hdr), NT_STATUS_NOT_SUPPORTED);
    }
    if (!d.transfer) {
        std::vector<uint8_t> response = std::move(d.response);
        answer(ev.conn_id, d, std::move(response));
        return;
    }
    Io io;
    io.conn_id = ev.conn_id;
    io.decision = std::move(d);
    queued_.push_back(std::move(io));
}

std::vector<std::span<uint8_t>> Responder::memory(const Io &io)
{
    return {std::span(smbd_dev_buf_data(io.buf), io.decision.transfer->bytes)};
}

void Responder::start_transfers()
{
    // first come, first served: a large request is not overtaken forever
    while (!queued_.empty()) {
        Io &io = queued_.front();
        int err = smbd_dev_buf_alloc(dev_.get(), io.decision.transfer->bytes,
                                     &io.buf);
        if (err == ENOBUFS) {
            if (!io.waited)
                summary_.io_queued++;
            io.waited = true;
            break;
        }
        uint64_t id = ++next_io_;
        Io &ready = in_flight_[id] = std::move(io);
        queued_.pop_front();
        if (err) {
            log("%s", smbd_dev_errmsg(dev_.get()));
            transfer_failed(id, err);
            continue;
        }
        const Transfer &t = *ready.decision.transfer;
        if (!t.write)
            files_->fill(t, memory(ready));
        ready_.push_back(id);
    }
    if (glue_) {
        for (uint64_t id : ready_) {
            smbd_dev_rdma op = rdma_op(id);
            tevent_req *req = smbd_tevent_rdma_send(ev_, ev_, glue_, &op);
            auto *cb = req ? talloc(req, RdmaCallback) : nullptr;
            if (!cb) {
                talloc_free(req);
                transfer_failed(id, ENOMEM);
                continue;
            }
            *cb = {this, id};
            tevent_req_set_callback(req, glue_rdma_done, cb);
            in_flight_.at(id).req = req;
            summary_.rdma_ops++;
        }
        ready_.clear();
        return;
    }
    std::vector<smbd_dev_rdma> ops;
    for (uint64_t id : ready_)
        ops.push_back(rdma_op(id));
    size_t next = 0;
    while (next < ops.size()) {
        size_t done = 0;
        int err = smbd_dev_rdma_start(dev_.get(), ops.data() + next,
                                      ops.size() - next, &done);
        for (size_t i = next; i < next + done; i++)
            in_flight_.at(ops[i].user_data).started = true;
        summary_.rdma_ops += done;
        next += done;
        if (!err)
            continue;
        // the kernel holds as many as it takes: the rest waits for
        // RDMA_DONEs
        if (err == EAGAIN)
            break;
        // the operation that stopped the batch fails alone; the rest go on
        log("%s", smbd_dev_errmsg(dev_.get()));
        transfer_failed(ops[next].user_data, err);
        next++;
    }
    ready_.erase(ready_.begin(), ready_.begin() + static_cast<long>(next));
}

smbd_dev_rdma Responder::rdma_op(uint64_t id) const
{
    const Io &io = in_flight_.at(id);
    const Transfer &t = *io.decision.transfer;
    smbd_dev_rdma op{};
    op.conn_id = io.conn_id;
    op.user_data = id;
    op.direction = t.write ? SMBD_RW_READ_FROM_PEER : SMBD_RW_WRITE_TO_PEER;
    op.buf = io.buf;
    op.length = t.bytes;
    op.descs = t.descriptors.data();
    op.descs_len = t.descriptors.size();
    return op;
}

void Responder::transfer_failed(uint64_t id, int err)
{
    auto it = in_flight_.find(id);
    Io io = std::move(it->second);
    in_flight_.erase(it);
    smbd_dev_buf_free(io.buf);
    summary_.rdma_errors++;
    log("conn %llu: RDMA for %s failed to start: %s",
        static_cast<unsigned long long>(io.conn_id), io.decision.note.c_str(),
        strerror(err));
    // a connection that is gone gets no answer; anything else is refused
    if (err == ENOTCONN || err == ENOENT)
        return;
    const smb2_hdr &hdr = io.decision.transfer->hdr;
    io.decision.note = "refused: RDMA " + std::string(strerror(err));
    answer(io.conn_id, io.decision,
           smb2rw::build_error_response(hdr, smb2rw::credit_response(hdr),
                                        NT_STATUS_INVALID_PARAMETER));
}

void Responder::glue_rdma_done(tevent_req *req)
{
    auto cb = *static_cast<RdmaCallback *>(tevent_req_callback_data_void(req));
    uint64_t bytes = 0;
    int err = smbd_tevent_rdma_recv(req, &bytes);
    talloc_free(req);
    cb.responder->on_rdma_done(cb.id, -err, bytes);
}

void Responder::on_rdma_done(uint64_t id, int32_t status, uint64_t bytes)
{
    auto it = in_flight_.find(id);
    if (it == in_flight_.end()) {
        log("RDMA_DONE for unknown operation %llu",
            static_cast<unsigned long long>(id));
        return;
    }
    Io io = std::move(it->second);
    in_flight_.erase(it);
    const Transfer &t = *io.decision.transfer;
    if (status != 0) {
        summary_.rdma_errors++;
        smbd_dev_buf_free(io.buf);
        // EIO and ENOTCONN: the connection goes down, nobody to answer
        // (on a tevent loop ENOENT too: it was gone before the start);
        // otherwise the memory could not be mapped and the client waits
        bool gone = status == -EIO || status == -ENOTCONN || status == -ENOENT;
        log("conn %llu: RDMA for %s failed: %s%s",
            static_cast<unsigned long long>(io.conn_id),
            io.decision.note.c_str(), strerror(-status),
            gone ? "; the connection goes down" : "");
        if (!gone) {
            const smb2_hdr &hdr = t.hdr;
            answer(io.conn_id, io.decision,
                   smb2rw::build_error_response(
                       hdr, smb2rw::credit_response(hdr),
                       smb2rw::NT_STATUS_INSUFFICIENT_RESOURCES));
        }
        return;
    }
    uint32_t moved = static_cast<uint32_t>(std::min<uint64_t>(bytes, t.bytes));
    if (t.write)
        summary_.rdma_bytes_read += moved;
    else
        summary_.rdma_bytes_written += moved;
    std::vector<uint8_t> response = files_->complete(t, moved, memory(io));
    smbd_dev_buf_free(io.buf);
    answer(io.conn_id, io.decision, std::move(response));
}

void Responder::flush_sends()
{
    std::vector<iovec> iov(pending_.size());
    std::vector<smbd_dev_pdu> pdus(pending_.size());
    for (size_t i = 0; i < pending_.size(); i++) {
        Send &s = pending_[i];
        iov[i] = {s.pdu.data(), s.pdu.size()};
        smbd_dev_pdu &p = pdus[i];
        p.conn_id = s.conn_id;
        p.iov = &iov[i];
        p.iovcnt = 1;
        if (s.invalidate) {
            p.flags = SMBD_SEND_INVALIDATE;
            p.invalidate_token = *s.invalidate;
        }
    }
    std::span<const smbd_dev_pdu> rest(pdus);
    while (!rest.empty()) {
        size_t done = 0;
        int err = smbd_dev_send(dev_.get(), rest.data(), rest.size(), &done);
        for (size_t i = 0; i < done; i++) {
            summary_.pdus_sent++;
            summary_.bytes_sent += rest[i].iov[0].iov_len;
        }
        rest = rest.subspan(done);
        // the PDU that stopped the batch is dropped; the rest go on
        if (err && !rest.empty()) {
            summary_.send_errors++;
            log("conn %llu: %zu bytes not sent: %s",
                static_cast<unsigned long long>(rest.front().conn_id),
                rest.front().iov[0].iov_len, smbd_dev_errmsg(dev_.get()));
            rest = rest.subspan(1);
        }
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
                WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
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
        (unsigned long long)s.bytes_received, (unsigned long long)s.pdus_sent,
        (unsigned long long)s.bytes_sent, (unsigned long long)s.send_errors,
        (unsigned long long)s.disconnected, (unsigned long long)s.ended);
    log("summary: %llu READs and %llu WRITEs answered, %llu refused, %llu "
        "waited for a buffer; RDMA: %llu operations, %llu bytes read from "
        "peers, %llu bytes written to peers, %llu errors",
        (unsigned long long)s.reads, (unsigned long long)s.writes,
        (unsigned long long)s.io_refused, (unsigned long long)s.io_queued,
        (unsigned long long)s.rdma_ops, (unsigned long long)s.rdma_bytes_read,
        (unsigned long long)s.rdma_bytes_written,
        (unsigned long long)s.rdma_errors);
    for (const auto &[reason, n] : s.reasons)
        log("summary: %llu disconnected by %s", (unsigned long long)n,
            reason.c_str());
}

} // namespace smbd::responder
