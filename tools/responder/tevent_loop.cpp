// The responder on a tevent loop through libsmbd-tevent, as smbd runs;
// see responder.h.
#include "responder.h"

#include <cerrno>
#include <cstring>

namespace smbd::responder {

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

namespace {

struct RdmaCallback {
    Responder *responder;
    uint64_t id;
};

} // namespace

// The same service on a tevent loop: the glue fetches and dispatches
// events (connections attached at their NEW_CHANNEL), RDMA transfers are
// tevent requests, and what the callbacks queued is started and sent
// after each turn of the loop.
int Responder::serve_tevent()
{
    bool stopped = false;
    int err = 0;
    // Each step fails by returning NULL; errno, cleared before it, says
    // why when the step set it (epoll, the device's event storage), else
    // it could only allocate.
    auto failed = [&](const char *step) {
        err = errno ? errno : ENOMEM;
        log("%s failed: %s", step, strerror(err));
    };
    errno = 0;
    TALLOC_CTX *mem = talloc_new(nullptr);
    if (!mem) {
        failed("talloc_new");
        return err;
    }
    errno = 0;
    ev_ = tevent_context_init(mem);
    if (!ev_)
        failed("tevent_context_init");
    if (!err) {
        errno = 0;
        glue_ = smbd_tevent_setup(mem, ev_, dev_.get(), glue_event, this);
        if (!glue_)
            failed("smbd_tevent_setup");
    }
    if (!err) {
        errno = 0;
        if (!tevent_add_fd(ev_, mem, stop_fd_, TEVENT_FD_READ, stop_handler,
                           &stopped))
            failed("tevent_add_fd of the stop eventfd");
    }
    if (!err) {
        if (!child_)
            tick(ev_, nullptr, {}, this);
        log("serving on a tevent loop through libsmbd-tevent");
    }
    while (!err) {
        // what is left of an earlier call must not pass for the loop's
        errno = 0;
        if (tevent_loop_once(ev_) != 0) {
            err = errno ? errno : EIO;
            log("tevent_loop_once: %s", strerror(err));
            break;
        }
        if (stopped) {
            log("stopping");
            break;
        }
        if (glue_error_) {
            err = glue_error_;
            log("libsmbd-tevent stopped: %s", strerror(err));
            break;
        }
        if (!child_)
            reap_children(false);
        start_transfers();
        flush_sends();
        if (finished())
            break;
    }
    // the glue's requests go before the glue (libsmbd-tevent.h)
    free_io();
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

// On a tevent loop each transfer is a request of the glue.
void Responder::start_tevent_transfers()
{
    for (uint64_t id : ready_) {
        smbd_dev_rdma op = rdma_op(id);
        const Io &ready = in_flight_.at(id);
        iovec iov;
        smbd_dev_pdu reply =
            pdu_of(ready.conn_id, ready.reply, ready.decision.invalidate, iov);
        tevent_req *req =
            ready.reply.empty()
                ? smbd_tevent_rdma_send(ev_, ev_, glue_, &op)
                : smbd_tevent_rdma_reply_send(ev_, ev_, glue_, &op, &reply);
        auto *cb = req ? talloc(req, RdmaCallback) : nullptr;
        if (!cb) {
            talloc_free(req);
            transfer_failed(id, ENOMEM);
            continue;
        }
        *cb = {this, id};
        tevent_req_set_callback(req, glue_rdma_done, cb);
        Io &io = in_flight_.at(id);
        io.req = req;
        // the glue ends it before its connection's DISCONNECTED, whether
        // the kernel took it or it still waits (libsmbd-tevent.h), as the
        // kernel ends what it took: one still here then is a bug
        io.started = true;
        summary_.rdma_ops++;
    }
    ready_.clear();
}

void Responder::glue_rdma_done(tevent_req *req)
{
    auto cb = *static_cast<RdmaCallback *>(tevent_req_callback_data_void(req));
    uint64_t bytes = 0;
    int err = smbd_tevent_rdma_recv(req, &bytes);
    talloc_free(req);
    cb.responder->on_rdma_done(cb.id, -err, bytes);
}

} // namespace smbd::responder
