// SPDX-License-Identifier: LGPL-3.0-or-later
// libsmbd on a tevent loop; see libsmbd-tevent.h. After Samba's
// vfs_io_uring: a request freed early only orphans its kernel-side record,
// which the completion then finds empty. Completions are delivered as
// their events are dispatched, so that a connection's transfers complete
// before its DISCONNECTED reaches smbd.
#include <libsmbd-tevent.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <memory>
#include <new>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace {

struct Glue;
struct RdmaState;

// A transfer the kernel runs. Its address is the transfer's user_data, as
// vfs_io_uring passes its request; it outlives a request freed early, so
// that the RDMA_DONE still has a record to end.
struct Transfer {
    RdmaState *state; // nullptr once its request was freed
};

// A talloc-allocated tevent_req state: plain data only.
struct RdmaState {
    Glue *glue; // NULL once the glue is gone
    struct tevent_req *req;
    struct smbd_dev_rdma op;   // descs copied into the state
    struct smbd_dev_pdu reply; // iovcnt 0: none; else one copied iovec
    struct iovec reply_iov;
    struct Transfer *transfer; // while the kernel runs it
    uint64_t bytes;
};

struct Conn {
    smbd_tevent_fn fn;
    void *private_data;
};

struct Glue {
    struct tevent_context *ev = nullptr;
    struct smbd_dev *dev = nullptr;
    struct smbd_dev_events *events = nullptr;
    struct tevent_fd *fde = nullptr;
    // starts what rdma_send queued in this turn of the loop, together
    struct tevent_immediate *kick = nullptr;
    smbd_tevent_fn default_fn = nullptr;
    void *private_data = nullptr;
    std::unordered_map<uint64_t, Conn> conns;
    // the records of running transfers, which the glue owns, by their
    // address, their user_data: an RDMA_DONE is the glue's only if its
    // user_data is one of them (not a transfer started on the handle
    // directly, nor one of an earlier glue's)
    std::unordered_map<uint64_t, Transfer *> running;
    std::deque<RdmaState *> waiting;
    // connections whose send queue had no room for a reply: their
    // transfers wait, in order, for the connection's SEND_ROOM
    std::unordered_set<uint64_t> full;
    std::vector<struct smbd_dev_rdma> batch;
    std::vector<const struct smbd_dev_pdu *> replies; // batch's, or nullptr
    int dead = 0; // fetching failed with this: nothing completes any more

    ~Glue();
    int start_batch(RdmaState *&stopped);
    void start_waiting();
    void complete(const struct smbd_dev_event *e);
    void fail_waiting(uint64_t conn_id);
    void fail_all(int err);
    void dispatch(const struct smbd_dev_event *e);
    void readable();
};

} // namespace

struct smbd_tevent {
    Glue *g;
};

namespace {

Glue::~Glue()
{
    for (auto &[id, t] : running)
        delete t;
    smbd_dev_events_free(events);
}

// Starts in one call the waiting transfers of connections not full;
// @stopped is the one the kernel refused, if it refused one. The records
// come first: once started, a transfer must be tracked.
int Glue::start_batch(RdmaState *&stopped)
{
    stopped = nullptr;
    std::vector<RdmaState *> picked; // in the order they wait
    std::vector<std::unique_ptr<Transfer>> records;
    size_t started = 0;
    int err = 0;
    try {
        batch.clear();
        replies.clear();
        for (RdmaState *s : waiting)
            if (!full.count(s->op.conn_id))
                picked.push_back(s);
        records.reserve(picked.size());
        for (RdmaState *s : picked) {
            records.push_back(std::make_unique<Transfer>(Transfer{s}));
            s->op.user_data = reinterpret_cast<uintptr_t>(records.back().get());
            running.emplace(s->op.user_data, records.back().get());
            batch.push_back(s->op);
            replies.push_back(s->reply.iovcnt ? &s->reply : nullptr);
        }
    }
    catch (...) {
        err = ENOMEM;
    }
    if (!err && !picked.empty())
        err = smbd_dev_rdma_start_replies(dev, batch.data(), replies.data(),
                                          picked.size(), &started);
    // what started runs, owned by the set; the other records go
    for (size_t i = 0; i < records.size(); i++) {
        if (i < started) {
            Transfer *t = records[i].release();
            t->state->transfer = t;
        }
        else {
            running.erase(reinterpret_cast<uintptr_t>(records[i].get()));
        }
    }
    if (err && started < picked.size())
        stopped = picked[started];
    // the first @started picked, in one pass: they wait in that order
    size_t i = 0;
    std::erase_if(waiting, [&](RdmaState *s) {
        if (i == started || s != picked[i])
            return false;
        i++;
        return true;
    });
    return err;
}

// Starts what waits, in order, until the kernel is full again (EAGAIN);
// a reply that finds its connection's send queue full (ENOBUFS) holds
// that connection's transfers back until its SEND_ROOM; a transfer the
// kernel refuses otherwise fails alone.
void Glue::start_waiting()
{
    for (;;) {
        RdmaState *s = nullptr;
        int err = start_batch(s);
        if (!err || err == EAGAIN || !s)
            return;
        if (err == ENOBUFS && s->reply.iovcnt) {
            try {
                full.insert(s->op.conn_id);
                continue;
            }
            catch (...) {
                err = ENOMEM;
            }
        }
        waiting.erase(std::find(waiting.begin(), waiting.end(), s));
        s->glue = nullptr; // done with the glue: outlives it safely
        tevent_req_error(s->req, err);
    }
}

void kick_handler(struct tevent_context *, struct tevent_immediate *,
                  void *glue)
{
    static_cast<Glue *>(glue)->start_waiting();
}

void Glue::complete(const struct smbd_dev_event *e)
{
    auto it = running.find(e->user_data);
    if (it == running.end())
        return;
    std::unique_ptr<Transfer> t(it->second);
    running.erase(it);
    RdmaState *s = t->state;
    if (!s)
        return; // its request was freed; the library returned the memory
    s->transfer = nullptr;
    s->glue = nullptr;
    if (e->status) {
        tevent_req_error(s->req, -e->status);
        return;
    }
    s->bytes = e->count;
    tevent_req_done(s->req);
}

// A connection's transfers still waiting will never start: they end
// before its DISCONNECTED is delivered. One at a time, since a callback
// may free other requests.
void Glue::fail_waiting(uint64_t conn_id)
{
    for (;;) {
        auto it =
            std::find_if(waiting.begin(), waiting.end(), [&](RdmaState *s) {
                return s->op.conn_id == conn_id;
            });
        if (it == waiting.end())
            return;
        RdmaState *s = *it;
        waiting.erase(it);
        s->glue = nullptr;
        tevent_req_error(s->req, ENOTCONN);
    }
}

// Fetching failed: no RDMA_DONE will come, so every request ends now with
// @err, one at a time (a callback may free others). The library keeps the
// memory of running transfers lent until the handle closes.
void Glue::fail_all(int err)
{
    dead = err;
    while (!waiting.empty()) {
        RdmaState *s = waiting.front();
        waiting.pop_front();
        s->glue = nullptr;
        tevent_req_error(s->req, err);
    }
    for (;;) {
        auto it = std::find_if(running.begin(), running.end(),
                               [](const auto &r) { return r.second->state; });
        if (it == running.end())
            return;
        RdmaState *s = it->second->state;
        it->second->state = nullptr;
        s->transfer = nullptr;
        s->glue = nullptr;
        tevent_req_error(s->req, err);
    }
}

void Glue::dispatch(const struct smbd_dev_event *e)
{
    if (e->type == SMBD_EVENT_RDMA_DONE) {
        complete(e);
        return;
    }
    // readable() starts what waits once the batch is dispatched
    if (e->type == SMBD_EVENT_SEND_ROOM || e->type == SMBD_EVENT_DISCONNECTED)
        full.erase(e->conn_id);
    if (e->type == SMBD_EVENT_DISCONNECTED)
        fail_waiting(e->conn_id);
    auto it = e->type == SMBD_EVENT_NEW_CONNECTION ? conns.end()
                                                   : conns.find(e->conn_id);
    if (it == conns.end()) {
        default_fn(e, private_data);
        return;
    }
    Conn c = it->second;
    c.fn(e, c.private_data);
    // its last event: the callback may have detached it already
    if (e->type == SMBD_EVENT_DISCONNECTED)
        conns.erase(e->conn_id);
}

void Glue::readable()
{
    size_t count = 0;
    int err = smbd_dev_fetch(dev, events, &count);
    for (size_t i = 0; i < count; i++)
        dispatch(smbd_dev_events_at(events, i));
    if (err) {
        TALLOC_FREE(fde);
        fail_all(err);
        struct smbd_dev_event failed = {};
        failed.status = -err;
        default_fn(&failed, private_data);
    }
    start_waiting();
}

void fd_handler(struct tevent_context *, struct tevent_fd *, uint16_t,
                void *private_data)
{
    static_cast<Glue *>(private_data)->readable();
}

int glue_destructor(struct smbd_tevent *t)
{
    // requests still alive outlive the glue: they only forget it
    for (auto &[id, r] : t->g->running)
        if (r->state)
            r->state->glue = nullptr;
    for (RdmaState *s : t->g->waiting)
        s->glue = nullptr;
    delete t->g;
    return 0;
}

int rdma_state_destructor(RdmaState *s)
{
    Glue *g = s->glue;
    if (!g)
        return 0;
    if (s->transfer) {
        s->transfer->state = nullptr;
    }
    else {
        auto it = std::find(g->waiting.begin(), g->waiting.end(), s);
        if (it != g->waiting.end())
            g->waiting.erase(it);
    }
    return 0;
}

} // namespace

extern "C" {

struct smbd_tevent *smbd_tevent_setup(TALLOC_CTX *mem_ctx,
                                      struct tevent_context *ev,
                                      struct smbd_dev *dev,
                                      smbd_tevent_fn default_fn,
                                      void *private_data)
{
    if (!ev || !dev || !default_fn)
        return nullptr;
    struct smbd_tevent *t = talloc_zero(mem_ctx, struct smbd_tevent);
    if (!t)
        return nullptr;
    try {
        t->g = new Glue;
    }
    catch (...) {
        t->g = nullptr;
    }
    if (!t->g) {
        talloc_free(t);
        return nullptr;
    }
    talloc_set_destructor(t, glue_destructor);
    Glue *g = t->g;
    g->ev = ev;
    g->dev = dev;
    g->default_fn = default_fn;
    g->private_data = private_data;
    if (smbd_dev_events_new(dev, &g->events)) {
        talloc_free(t);
        return nullptr;
    }
    g->fde =
        tevent_add_fd(ev, t, smbd_dev_fd(dev), TEVENT_FD_READ, fd_handler, g);
    g->kick = tevent_create_immediate(t);
    if (!g->fde || !g->kick) {
        talloc_free(t);
        return nullptr;
    }
    return t;
}

int smbd_tevent_conn_attach(struct smbd_tevent *glue, uint64_t conn_id,
                            smbd_tevent_fn fn, void *private_data)
{
    if (!glue || !fn)
        return EINVAL;
    try {
        return glue->g->conns.emplace(conn_id, Conn{fn, private_data}).second
                   ? 0
                   : EEXIST;
    }
    catch (...) {
        return ENOMEM;
    }
}

void smbd_tevent_conn_detach(struct smbd_tevent *glue, uint64_t conn_id)
{
    if (glue)
        glue->g->conns.erase(conn_id);
}

} // extern "C"

namespace {

// Both kinds of transfer: @reply (or nullptr) is copied flat into the
// state, as the descriptors are, since the caller's may go first.
struct tevent_req *rdma_send(TALLOC_CTX *mem_ctx, struct tevent_context *ev,
                             struct smbd_tevent *glue,
                             const struct smbd_dev_rdma *op,
                             const struct smbd_dev_pdu *reply)
{
    RdmaState *s = nullptr;
    struct tevent_req *req = tevent_req_create(mem_ctx, &s, RdmaState);
    if (!req)
        return nullptr;
    s->req = req;
    if (!glue || !op || (!op->descs && op->descs_len) ||
        (reply && (!reply->iov || !reply->iovcnt))) {
        tevent_req_error(req, EINVAL);
        return tevent_req_post(req, ev);
    }
    s->op = *op;
    // a waiting transfer must not depend on the caller's copy
    s->op.descs = static_cast<const uint8_t *>(
        talloc_memdup(s, op->descs, op->descs_len));
    if (op->descs_len && !s->op.descs) {
        tevent_req_error(req, ENOMEM);
        return tevent_req_post(req, ev);
    }
    if (reply) {
        size_t len = 0;
        for (size_t i = 0; i < reply->iovcnt; i++)
            len += reply->iov[i].iov_len;
        auto *flat = static_cast<uint8_t *>(talloc_size(s, len));
        if (!flat) {
            tevent_req_error(req, ENOMEM);
            return tevent_req_post(req, ev);
        }
        uint8_t *at = flat;
        for (size_t i = 0; i < reply->iovcnt; i++) {
            std::memcpy(at, reply->iov[i].iov_base, reply->iov[i].iov_len);
            at += reply->iov[i].iov_len;
        }
        s->reply = *reply;
        s->reply_iov = {flat, len};
        s->reply.iov = &s->reply_iov;
        s->reply.iovcnt = 1;
    }
    if (glue->g->dead) {
        tevent_req_error(req, glue->g->dead);
        return tevent_req_post(req, ev);
    }
    s->glue = glue->g;
    talloc_set_destructor(s, rdma_state_destructor);
    try {
        glue->g->waiting.push_back(s);
    }
    catch (...) {
        s->glue = nullptr;
        tevent_req_error(req, ENOMEM);
        return tevent_req_post(req, ev);
    }
    tevent_schedule_immediate(glue->g->kick, glue->g->ev, kick_handler,
                              glue->g);
    return req;
}

} // namespace

extern "C" {

struct tevent_req *smbd_tevent_rdma_send(TALLOC_CTX *mem_ctx,
                                         struct tevent_context *ev,
                                         struct smbd_tevent *glue,
                                         const struct smbd_dev_rdma *op)
{
    return rdma_send(mem_ctx, ev, glue, op, nullptr);
}

struct tevent_req *smbd_tevent_rdma_reply_send(TALLOC_CTX *mem_ctx,
                                               struct tevent_context *ev,
                                               struct smbd_tevent *glue,
                                               const struct smbd_dev_rdma *op,
                                               const struct smbd_dev_pdu *reply)
{
    // no reply is as bad as an empty one
    static const struct smbd_dev_pdu none = {};
    return rdma_send(mem_ctx, ev, glue, op, reply ? reply : &none);
}

int smbd_tevent_rdma_recv(struct tevent_req *req, uint64_t *bytes)
{
    RdmaState *s = static_cast<RdmaState *>(tevent_req_data(req, RdmaState));
    enum tevent_req_state state;
    uint64_t err = 0;
    if (bytes)
        *bytes = 0;
    // as Samba's tevent_req_is_unix_error, which libtevent does not export
    if (tevent_req_is_error(req, &state, &err)) {
        tevent_req_received(req);
        switch (state) {
        case TEVENT_REQ_USER_ERROR:
            return static_cast<int>(err);
        case TEVENT_REQ_TIMED_OUT:
            return ETIMEDOUT;
        case TEVENT_REQ_NO_MEMORY:
            return ENOMEM;
        default:
            return EINVAL;
        }
    }
    if (bytes)
        *bytes = s->bytes;
    tevent_req_received(req);
    return 0;
}

} // extern "C"
