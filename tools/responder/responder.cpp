// The test responder: its device, its policy and the events of a
// connection's life. The loops (poll_loop.cpp, tevent_loop.cpp), the forked
// children (children.cpp) and SMB2 READ/WRITE (smb2_io.cpp) have a file
// each; see responder.h.
#include "responder.h"

#include "hex.h"
#include "policy.h"
#include "reply.h"

#include <arpa/inet.h>
#include <cerrno>
#include <cinttypes>
#include <cstdarg>
#include <sys/eventfd.h>
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
    if (opts_.pool_buffers &&
        (err = smbd_dev_set_pool_buffers(dev, opts_.pool_buffers))) {
        log("%s", smbd_dev_errmsg(dev));
        return err;
    }
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
            on_io_request(ev.conn_id, data_of(ev));
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
    case SMBD_EVENT_SEND_ROOM:
        on_send_room(ev.conn_id);
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
        hex_bytes({ev.client_guid, SMBD_GUID_SIZE}).c_str());
    if (opts_.fork)
        return fork_child(ev);
    uint64_t id = 0;
    int err = smbd_dev_accept(dev_.get(), ev.token, &id);
    if (err)
        log("conn %llu: %s", static_cast<unsigned long long>(ev.conn_id),
            smbd_dev_errmsg(dev_.get()));
    else
        log("conn %llu: ACCEPTed in this process",
            static_cast<unsigned long long>(id));
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
    held_.erase(ev.conn_id);
    log("conn %llu: DISCONNECTED (%s)",
        static_cast<unsigned long long>(ev.conn_id), reason);
    forget_io(ev.conn_id);
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
        "errors, %llu waits for a full send queue, %llu disconnected, %llu "
        "connections ended",
        (unsigned long long)s.connections_offered,
        (unsigned long long)s.children, (unsigned long long)s.accepted,
        (unsigned long long)s.bound, (unsigned long long)s.sessions,
        (unsigned long long)s.pdus_received,
        (unsigned long long)s.bytes_received, (unsigned long long)s.pdus_sent,
        (unsigned long long)s.bytes_sent, (unsigned long long)s.send_errors,
        (unsigned long long)s.send_waits, (unsigned long long)s.disconnected,
        (unsigned long long)s.ended);
    log("summary: %llu READs and %llu WRITEs answered, %llu refused, %llu "
        "waited for a buffer; RDMA: %llu operations, %llu bytes read from "
        "peers, %llu bytes written to peers, %llu errors, %llu READ "
        "answers sent with their WRITE",
        (unsigned long long)s.reads, (unsigned long long)s.writes,
        (unsigned long long)s.io_refused, (unsigned long long)s.io_queued,
        (unsigned long long)s.rdma_ops, (unsigned long long)s.rdma_bytes_read,
        (unsigned long long)s.rdma_bytes_written,
        (unsigned long long)s.rdma_errors, (unsigned long long)s.rw_replies);
    for (const auto &[reason, n] : s.reasons)
        log("summary: %llu disconnected by %s", (unsigned long long)n,
            reason.c_str());
}

} // namespace smbd::responder
