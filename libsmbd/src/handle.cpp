// SPDX-License-Identifier: LGPL-3.0-or-later
// One open /dev/smbd with its pool and unfinished transfers; see handle.h.
#include "handle.h"

#include "buffer_desc.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <climits>
#include <cstdio>
#include <fcntl.h>
#include <unistd.h>

namespace smbd::lib {

namespace {

// the first fetch's data area; it grows to what the largest PDU needs
constexpr size_t initial_data = 64 << 10;

std::string hex(uint64_t v)
{
    char buf[24];
    std::snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
    return buf;
}

} // namespace

std::error_code Handle::open(const OpenOptions &opts,
                             std::unique_ptr<Handle> &out, std::string &msg)
{
    std::unique_ptr<Handle> h(new Handle());
    std::error_code ec;
    // The ABI grows compatibly (structs with sizes, feature bits): a
    // program works with a library and a kernel at least as new as the
    // header it was built with, not with older ones.
    if (!opts.abi_version)
        ec = h->fail(Step::open, EINVAL,
                     opts.path + " (ABI version 0: use SMBD_ABI_VERSION)");
    else if (opts.abi_version > SMBD_ABI_VERSION)
        ec = h->fail(Step::open, EPROTONOSUPPORT,
                     opts.path + " (library ABI " +
                         std::to_string(SMBD_ABI_VERSION) + ", program ABI " +
                         std::to_string(opts.abi_version) + ")");
    else if (h->dev_ = device::Device(O_NONBLOCK, opts.path.c_str());
             !h->dev_.ok())
        ec = h->fail(Step::open, h->dev_.error(), opts.path);
    else if (int err = h->dev_.info(h->info_))
        ec = h->fail(Step::info, err);
    else if (h->info_.out_abi_version < opts.abi_version)
        ec = h->fail(Step::open, EPROTONOSUPPORT,
                     opts.path + " (kernel ABI " +
                         std::to_string(h->info_.out_abi_version) +
                         ", program ABI " + std::to_string(opts.abi_version) +
                         ")");
    else if (uint64_t missing = opts.required_features & ~h->info_.out_features)
        ec = h->fail(Step::open, EOPNOTSUPP,
                     opts.path + " (missing features " + hex(missing) + ")");
    if (ec) {
        msg = h->msg_;
        return ec;
    }
    h->opener_ = ::getpid();
    h->pool_buffers_ = h->info_.out_pool_buffers;
    out = std::move(h);
    return {};
}

Handle::~Handle()
{
    // a forked child has no copy of the mapping (VM_DONTCOPY): the range
    // may hold something else there
    if (::getpid() != opener_)
        map_.forget();
}

std::error_code Handle::fail(Step step, int err) { return fail(step, err, {}); }

std::error_code Handle::fail(Step step, int err, const std::string &detail)
{
    std::error_code ec = sys_error(err);
    msg_ = explain(step, ec, detail);
    return ec;
}

std::error_code Handle::set_policy(const device::Params &params)
{
    uint16_t busy_port = 0;
    int err = dev_.set_params(params, &busy_port);
    if (err == EADDRINUSE && busy_port)
        return fail(Step::set_policy, err,
                    "on RDMA port " + std::to_string(busy_port));
    return err ? fail(Step::set_policy, err) : std::error_code{};
}

std::error_code Handle::listen()
{
    int err = dev_.listen();
    return err ? fail(Step::listen, err) : std::error_code{};
}

std::error_code Handle::accept(const uint8_t *token, uint64_t &conn_id)
{
    if (!token)
        return fail(Step::accept, EINVAL, "without a token");
    int err = dev_.accept(
        std::span<const uint8_t, SMBD_TOKEN_SIZE>(token, SMBD_TOKEN_SIZE),
        conn_id);
    return err ? fail(Step::accept, err) : std::error_code{};
}

std::error_code Handle::register_session(uint64_t session_id)
{
    int err = dev_.register_session(session_id);
    return err ? fail(Step::register_session, err, hex(session_id))
               : std::error_code{};
}

std::error_code Handle::unregister_session(uint64_t session_id)
{
    int err = dev_.unregister_session(session_id);
    return err ? fail(Step::unregister_session, err, hex(session_id))
               : std::error_code{};
}

std::error_code Handle::disconnect(uint64_t conn_id)
{
    int err = dev_.disconnect(conn_id);
    return err ? fail(Step::disconnect, err,
                      "connection " + std::to_string(conn_id))
               : std::error_code{};
}

std::error_code Handle::conn_stats(uint64_t conn_id, smbd_conn_stats &out)
{
    const std::string what = "connection " + std::to_string(conn_id);
    if (!(info_.out_features & SMBD_FEATURE_CONN_STATS))
        return fail(Step::conn_stats, EOPNOTSUPP,
                    what + " (the kernel has no SMBD_FEATURE_CONN_STATS)");
    out = {};
    out.conn_id = conn_id;
    int err = dev_.conn_stats(out);
    return err ? fail(Step::conn_stats, err, what) : std::error_code{};
}

std::error_code Handle::fetch(EventBatch &batch)
{
    uint32_t max = std::max<uint32_t>(1, info_.out_max_batch);
    batch.raw.resize(max);
    if (batch.data.size() < initial_data)
        batch.data.resize(initial_data);
    batch.events.clear();
    uint32_t count = 0, used = 0;
    for (;;) {
        int err = dev_.get_events_raw(batch.raw, batch.data, count, used);
        if (err == EAGAIN)
            return {};
        // the first event's data needs more room: grow and fetch again
        if (err == EMSGSIZE && used > batch.data.size()) {
            batch.data.resize(used);
            continue;
        }
        if (err == EPROTO)
            return fail(Step::fetch, err, "(counts past the storage)");
        if (err)
            return fail(Step::fetch, err);
        break;
    }
    std::span<const uint8_t> data(batch.data.data(), used);
    for (uint32_t i = 0; i < count; i++) {
        smbd_dev_event ev;
        bool ok = decode_event(batch.raw[i], data, info_.out_max_pdu_size, ev);
        // a transfer's record ends with its RDMA_DONE, even a bad one
        if (batch.raw[i].type == SMBD_EVENT_RDMA_DONE) {
            auto it = in_flight_.find(batch.raw[i].user_data);
            if (it != in_flight_.end()) {
                ev.user_data = it->second.user_data;
                unpin(it->second.lease);
                in_flight_.erase(it);
            }
        }
        if (!ok) {
            // a kernel bug: the event is dropped, the others are delivered
            fail(Step::fetch, EPROTO,
                 "(event " + std::to_string(batch.raw[i].type) +
                     " points outside its data; dropped)");
            continue;
        }
        batch.events.push_back(ev);
    }
    return {};
}

namespace {

// @p as the kernel's entry, its iovecs appended to @iovs (reserved: the
// entry points into it).
smbd_send_entry to_entry(const smbd_dev_pdu &p, std::vector<smbd_iovec> &iovs)
{
    smbd_send_entry e{};
    e.conn_id = p.conn_id;
    e.user_data = p.user_data;
    e.iov_ptr = reinterpret_cast<uintptr_t>(iovs.data() + iovs.size());
    e.iov_count = static_cast<uint32_t>(p.iovcnt);
    e.flags = p.flags;
    e.invalidate_token = p.invalidate_token;
    for (size_t j = 0; j < p.iovcnt; j++)
        iovs.push_back(
            {reinterpret_cast<uintptr_t>(p.iov[j].iov_base), p.iov[j].iov_len});
    return e;
}

} // namespace

std::error_code Handle::send(std::span<const smbd_dev_pdu> pdus, size_t &sent)
{
    sent = 0;
    const size_t max = std::max<uint32_t>(1, info_.out_max_batch);
    auto &entries = send_entries_;
    auto &iovs = send_iovs_;
    while (sent < pdus.size()) {
        auto chunk = pdus.subspan(sent, std::min(max, pdus.size() - sent));
        // the PDUs before an invalid one go first; the next round reports
        // it
        size_t n = 0, total_iovs = 0;
        for (; n < chunk.size(); n++) {
            const smbd_dev_pdu &p = chunk[n];
            if ((!p.iov && p.iovcnt) || p.iovcnt > info_.out_max_iovs)
                break;
            total_iovs += p.iovcnt;
        }
        if (!n)
            return fail(Step::send, EINVAL,
                        "(" + std::to_string(chunk[0].iovcnt) +
                            " iovecs, at most " +
                            std::to_string(info_.out_max_iovs) + ")");
        chunk = chunk.first(n);
        // reserved up front: the entries point into it
        iovs.clear();
        iovs.reserve(total_iovs);
        entries.clear();
        for (const smbd_dev_pdu &p : chunk)
            entries.push_back(to_entry(p, iovs));
        uint32_t done = 0;
        if (int err = dev_.send_pdu_raw(entries, done))
            return fail(Step::send, err);
        if (!done || done > entries.size())
            return fail(Step::send, EPROTO);
        // a short batch: the next call starts at the entry that stopped
        // it and reports why
        sent += done;
    }
    return {};
}

std::error_code Handle::set_pool_buffers(uint32_t buffers)
{
    const std::string what = std::to_string(buffers) + " buffers";
    if (!buffers || buffers > info_.out_pool_buffers)
        return fail(Step::pool_size, EINVAL,
                    "to " + what + " (the module allows 1.." +
                        std::to_string(info_.out_pool_buffers) + ")");
    if (map_.ok() && buffers != pool_buffers_)
        return fail(Step::pool_size, EBUSY,
                    "to " + what + " (it is mapped, of " +
                        std::to_string(pool_buffers_) + ")");
    if (buffers != info_.out_pool_buffers &&
        !(info_.out_features & SMBD_FEATURE_POOL_SIZE))
        return fail(Step::pool_size, EOPNOTSUPP,
                    "to " + what +
                        " (the kernel has no SMBD_FEATURE_POOL_SIZE)");
    pool_buffers_ = buffers;
    return {};
}

std::error_code Handle::map_pool()
{
    // the kernel's default as 0, which a kernel without
    // SMBD_FEATURE_POOL_SIZE takes too
    const uint32_t ask =
        pool_buffers_ == info_.out_pool_buffers ? 0 : pool_buffers_;
    if (int err = map_.map(dev_, ask))
        return fail(Step::map_pool, err);
    pool_buffers_ = map_.buffer_count();
    pool_ = Pool(map_.buffer_count(), map_.buffer_size());
    return {};
}

std::error_code Handle::alloc(size_t len, Lease *&out)
{
    out = nullptr;
    if (!len)
        return fail(Step::alloc, EINVAL, "of 0 bytes");
    if (!map_.ok())
        if (auto ec = map_pool())
            return ec;
    if (len > uint64_t{pool_.count()} * pool_.buffer_size())
        return fail(Step::alloc, EMSGSIZE,
                    "of " + std::to_string(len) + " bytes");
    uint32_t n = pool_.needed(len);
    // one slice per buffer: a run the kernel cannot take in one transfer
    // would never move
    if (n > info_.out_max_slices)
        return fail(Step::alloc, EMSGSIZE,
                    "of " + std::to_string(len) + " bytes (" +
                        std::to_string(n) + " buffers, a transfer takes " +
                        std::to_string(info_.out_max_slices) + ")");
    auto first = pool_.take(n);
    if (!first)
        return fail(Step::alloc, ENOBUFS,
                    "of " + std::to_string(len) + " bytes");
    auto lease = std::make_unique<Lease>();
    lease->owner = this;
    lease->first = *first;
    lease->buffers = n;
    lease->len = len;
    lease->data = map_.buffer(*first);
    out = lease.get();
    leases_.emplace(out, std::move(lease));
    return {};
}

void Handle::release(Lease *lease)
{
    if (!lease || lease->freed)
        return;
    lease->freed = true;
    if (!lease->pins)
        unpin(lease);
}

// Drops one pin, or the lease itself once it is freed and unpinned.
void Handle::unpin(Lease *lease)
{
    if (!lease)
        return;
    if (lease->pins)
        lease->pins--;
    if (lease->freed && !lease->pins) {
        pool_.give(lease->first, lease->buffers);
        leases_.erase(lease);
    }
}

std::error_code Handle::descs_check(std::span<const uint8_t> descs,
                                    uint64_t &total)
{
    uint32_t count = 0;
    enum smbd_proto_error err = smbd_buffer_desc_validate(
        descs.data(), descs.size(), info_.out_max_descriptors, UINT64_MAX,
        &count, &total);
    if (err != SMBD_E_OK)
        return fail(Step::descs, EINVAL,
                    std::string("(") + smbd_proto_error_text(err) + ")");
    return {};
}

std::error_code Handle::check_rdma(const smbd_dev_rdma &op,
                                   const smbd_dev_pdu *reply)
{
    // looked up, not dereferenced: a freed lease may be gone already
    auto it = leases_.find(op.buf);
    const Lease *l = it == leases_.end() ? nullptr : it->second.get();
    if (!l || l->freed)
        return fail(Step::rdma, EINVAL, "(no live buffer of this handle)");
    if (!op.length || op.offset > l->len || op.length > l->len - op.offset)
        return fail(Step::rdma, EINVAL,
                    "(bytes " + std::to_string(op.offset) + "+" +
                        std::to_string(op.length) + " outside a buffer of " +
                        std::to_string(l->len) + ")");
    if (!op.descs || !op.descs_len || op.descs_len % SMBD_BUFFER_DESC_SIZE)
        return fail(Step::rdma, EINVAL, "(buffer descriptor list)");
    if (!reply)
        return {};
    if (!(info_.out_features & SMBD_FEATURE_RW_REPLY))
        return fail(Step::rdma, EOPNOTSUPP,
                    "with a reply (the kernel has no SMBD_FEATURE_RW_REPLY)");
    if (op.direction != SMBD_RW_WRITE_TO_PEER)
        return fail(Step::rdma, EINVAL, "(a reply goes only with a WRITE)");
    if (reply->conn_id != op.conn_id)
        return fail(Step::rdma, EINVAL, "(a reply for another connection)");
    if (reply->flags & SMBD_SEND_NOTIFY)
        return fail(Step::rdma, EINVAL,
                    "(a reply takes no SMBD_SEND_NOTIFY: RDMA_DONE tells)");
    if (!reply->iov || !reply->iovcnt || reply->iovcnt > info_.out_max_iovs)
        return fail(Step::rdma, EINVAL,
                    "(a reply of " + std::to_string(reply->iovcnt) +
                        " iovecs, 1 to " + std::to_string(info_.out_max_iovs) +
                        ")");
    return {};
}

std::error_code Handle::rdma_start(std::span<const smbd_dev_rdma> ops,
                                   std::span<const smbd_dev_pdu *const> replies,
                                   size_t &started)
{
    started = 0;
    const size_t max = std::max<uint32_t>(1, info_.out_max_batch);
    auto &raw = rw_ops_;
    auto &slices = rw_slices_;
    auto &ids = rw_ids_;
    auto reply_of = [&](size_t i) {
        return replies.empty() ? nullptr : replies[started + i];
    };
    while (started < ops.size()) {
        auto chunk = ops.subspan(started, std::min(max, ops.size() - started));
        // operations before an invalid one go first; the next round
        // reports it
        size_t n = 0, total_slices = 0, total_iovs = 0;
        std::error_code bad;
        for (; n < chunk.size(); n++) {
            if ((bad = check_rdma(chunk[n], reply_of(n))))
                break;
            total_slices += pool_.needed(chunk[n].offset % pool_.buffer_size() +
                                         chunk[n].length);
            total_iovs += reply_of(n) ? reply_of(n)->iovcnt : 0;
        }
        if (!n)
            return bad;
        slices.clear();
        slices.reserve(total_slices);
        // reserved up front: the ops point into them
        send_entries_.clear();
        send_entries_.reserve(n);
        send_iovs_.clear();
        send_iovs_.reserve(total_iovs);
        raw.assign(n, smbd_rw_op{});
        ids.clear();
        for (size_t i = 0; i < n; i++) {
            const smbd_dev_rdma &op = chunk[i];
            size_t first_slice = slices.size();
            pool_.slices(op.buf->first, op.offset, op.length, slices);
            smbd_rw_op &r = raw[i];
            r.conn_id = op.conn_id;
            r.user_data = next_op_++;
            r.slices_ptr =
                reinterpret_cast<uintptr_t>(slices.data() + first_slice);
            r.slice_count = static_cast<uint32_t>(slices.size() - first_slice);
            r.descs_ptr = reinterpret_cast<uintptr_t>(op.descs);
            r.desc_count =
                static_cast<uint32_t>(op.descs_len / SMBD_BUFFER_DESC_SIZE);
            r.direction = op.direction;
            if (const smbd_dev_pdu *reply = reply_of(i)) {
                send_entries_.push_back(to_entry(*reply, send_iovs_));
                r.reply_ptr =
                    reinterpret_cast<uintptr_t>(&send_entries_.back());
                r.reply_size = sizeof(smbd_send_entry);
            }
            ids.push_back(r.user_data);
        }
        // the records first: once started, a transfer must be tracked, and
        // nothing may throw after the kernel took it
        auto forget = [&](size_t from) {
            for (size_t i = from; i < ids.size(); i++)
                in_flight_.erase(ids[i]);
        };
        try {
            for (size_t i = 0; i < n; i++)
                in_flight_.emplace(ids[i],
                                   InFlight{chunk[i].user_data, chunk[i].buf});
        }
        catch (...) {
            forget(0);
            throw;
        }
        uint32_t done = 0;
        int err = dev_.rdma_rw_raw(raw, done);
        if (!err && (!done || done > n))
            err = EPROTO;
        if (err) {
            forget(0);
            return fail(Step::rdma, err);
        }
        // only what started holds its memory until RDMA_DONE
        forget(done);
        for (size_t i = 0; i < done; i++)
            chunk[i].buf->pins++;
        started += done;
    }
    return {};
}

} // namespace smbd::lib
