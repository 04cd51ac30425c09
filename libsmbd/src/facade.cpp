// SPDX-License-Identifier: LGPL-3.0-or-later
// The C API of libsmbd.h over the C++ core (handle.h). Nothing throws
// across it: allocation failure becomes ENOMEM.
#include <libsmbd.h>

#include "handle.h"
#include "policy.h"

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <new>

using smbd::lib::Handle;

struct smbd_dev {
    std::unique_ptr<Handle> h;
    std::string msg; // for failures before or outside the handle
};

struct smbd_dev_events {
    smbd::lib::EventBatch batch;
};

namespace {

// the fields version 0.1 of each struct has
constexpr size_t open_args_v1 =
    offsetof(smbd_dev_open_args, path) + sizeof(const char *);
constexpr size_t policy_v1 =
    offsetof(smbd_dev_policy, sec_blob_len) + sizeof(size_t);

int result(std::error_code ec) { return ec.value(); }

int invalid(smbd_dev *dev, const char *what)
{
    if (dev)
        dev->msg = std::string("invalid argument: ") + what;
    return EINVAL;
}

// Runs @fn, turning what it throws (std::bad_alloc) into ENOMEM.
template <typename Fn> int guarded(smbd_dev *dev, Fn fn)
{
    try {
        if (dev)
            dev->msg.clear();
        return fn();
    }
    catch (...) {
        if (dev)
            dev->msg = "out of memory";
        return ENOMEM;
    }
}

// A batch call: *@out (if given) counts what went, also on failure.
template <typename Fn>
int counted(smbd_dev *dev, bool has_array, const char *what, size_t *out, Fn fn)
{
    size_t done = 0;
    if (out)
        *out = 0;
    if (!dev)
        return EINVAL;
    if (!has_array)
        return invalid(dev, what);
    int err = guarded(dev, [&] { return result(fn(done)); });
    if (out)
        *out = done;
    return err;
}

void copy_message(const std::string &msg, char *buf, size_t len)
{
    if (!buf || !len)
        return;
    size_t n = std::min(msg.size(), len - 1);
    std::memcpy(buf, msg.data(), n);
    buf[n] = '\0';
}

const smbd::device::Params &defaults()
{
    static const smbd::device::Params p = smbd::device::default_params();
    return p;
}

} // namespace

extern "C" {

const char *smbd_dev_version(void) { return LIBSMBD_VERSION_STRING; }

int smbd_dev_open(const struct smbd_dev_open_args *args, struct smbd_dev **devp,
                  char *errbuf, size_t errlen)
{
    if (devp)
        *devp = nullptr;
    if (!args || !devp || args->size < open_args_v1) {
        copy_message("invalid argument: open arguments (use "
                     "SMBD_DEV_OPEN_ARGS_INIT)",
                     errbuf, errlen);
        return EINVAL;
    }
    std::string msg;
    int err = guarded(nullptr, [&] {
        smbd::lib::OpenOptions o;
        if (args->path)
            o.path = args->path;
        o.abi_version = args->abi_version;
        o.required_features = args->required_features;
        std::unique_ptr<Handle> h;
        if (auto ec = Handle::open(o, h, msg))
            return ec.value();
        *devp = new smbd_dev{std::move(h), {}};
        return 0;
    });
    if (err == ENOMEM && msg.empty())
        msg = "open the SMB Direct device: out of memory";
    if (err)
        copy_message(msg, errbuf, errlen);
    return err;
}

void smbd_dev_close(struct smbd_dev *dev) { delete dev; }

const char *smbd_dev_errmsg(const struct smbd_dev *dev)
{
    if (!dev)
        return "no device handle";
    return dev->msg.empty() ? dev->h->errmsg().c_str() : dev->msg.c_str();
}

int smbd_dev_fd(const struct smbd_dev *dev) { return dev ? dev->h->fd() : -1; }

void smbd_dev_get_info(const struct smbd_dev *dev, struct smbd_dev_info *out,
                       size_t size)
{
    if (!dev || !out)
        return;
    const smbd_info &i = dev->h->info();
    smbd_dev_info all{}, *info = &all;
    info->size = static_cast<uint32_t>(std::min(size, sizeof(all)));
    info->abi_version = i.out_abi_version;
    info->features = i.out_features;
    info->max_events = i.out_max_events;
    info->max_pdu_size = i.out_max_pdu_size;
    info->pool_buffers = dev->h->pool_buffers();
    info->buffer_size = i.out_buffer_size;
    info->max_iovs = i.out_max_iovs;
    info->max_descriptors = i.out_max_descriptors;
    std::memcpy(out, &all, all.size);
}

const char *smbd_dev_event_name(uint32_t type)
{
    return smbd::device::event_name(type);
}

const char *smbd_dev_reason_name(uint32_t reason)
{
    return smbd::device::reason_name(reason);
}

void smbd_dev_policy_init(struct smbd_dev_policy *out, size_t size)
{
    if (!out)
        return;
    smbd_dev_policy all = smbd::lib::policy_of(defaults());
    // the empty blob: the SPNEGO one is smbd's to give
    all.sec_blob = nullptr;
    all.sec_blob_len = 0;
    all.size = static_cast<uint32_t>(std::min(size, sizeof(all)));
    std::memcpy(out, &all, all.size);
}

int smbd_dev_set_policy(struct smbd_dev *dev, const struct smbd_dev_policy *p)
{
    if (!dev)
        return EINVAL;
    if (!p || p->size < policy_v1)
        return invalid(dev, "policy (fill it with smbd_dev_policy_init)");
    if ((p->cipher_count && !p->ciphers) ||
        (p->signing_algorithm_count && !p->signing_algorithms) ||
        (p->sec_blob_len && !p->sec_blob))
        return invalid(dev, "policy array without its pointer");
    return guarded(dev, [&] {
        return result(dev->h->set_policy(smbd::lib::params_of(*p, defaults())));
    });
}

int smbd_dev_listen(struct smbd_dev *dev)
{
    if (!dev)
        return EINVAL;
    return guarded(dev, [&] { return result(dev->h->listen()); });
}

int smbd_dev_accept(struct smbd_dev *dev, const uint8_t *token,
                    uint64_t *conn_id)
{
    if (!dev)
        return EINVAL;
    if (!token || !conn_id)
        return invalid(dev, "token or conn_id");
    return guarded(dev,
                   [&] { return result(dev->h->accept(token, *conn_id)); });
}

int smbd_dev_register_session(struct smbd_dev *dev, uint64_t session_id)
{
    if (!dev)
        return EINVAL;
    return guarded(
        dev, [&] { return result(dev->h->register_session(session_id)); });
}

int smbd_dev_unregister_session(struct smbd_dev *dev, uint64_t session_id)
{
    if (!dev)
        return EINVAL;
    return guarded(
        dev, [&] { return result(dev->h->unregister_session(session_id)); });
}

int smbd_dev_disconnect(struct smbd_dev *dev, uint64_t conn_id)
{
    if (!dev)
        return EINVAL;
    return guarded(dev, [&] { return result(dev->h->disconnect(conn_id)); });
}

int smbd_dev_get_conn_stats(struct smbd_dev *dev, uint64_t conn_id,
                            struct smbd_dev_conn_stats *out, size_t size)
{
    if (!dev)
        return EINVAL;
    if (!out)
        return invalid(dev, "stats");
    return guarded(dev, [&] {
        smbd_conn_stats st;
        if (std::error_code ec = dev->h->conn_stats(conn_id, st))
            return result(ec);
        smbd_dev_conn_stats all{};
        all.size = static_cast<uint32_t>(std::min(size, sizeof(all)));
        all.pdus_received = st.out_pdus_received;
        all.bytes_received = st.out_bytes_received;
        all.pdus_sent = st.out_pdus_sent;
        all.bytes_sent = st.out_bytes_sent;
        all.keepalives_sent = st.out_keepalives_sent;
        all.credit_stalls = st.out_credit_stalls;
        all.rdma_reads = st.out_rdma_reads;
        all.rdma_writes = st.out_rdma_writes;
        all.rdma_read_bytes = st.out_rdma_read_bytes;
        all.rdma_write_bytes = st.out_rdma_write_bytes;
        all.rdma_errors = st.out_rdma_errors;
        std::memcpy(out, &all, all.size);
        return 0;
    });
}

int smbd_dev_set_pool_buffers(struct smbd_dev *dev, uint32_t buffers)
{
    if (!dev)
        return EINVAL;
    return guarded(dev,
                   [&] { return result(dev->h->set_pool_buffers(buffers)); });
}

int smbd_dev_events_new(struct smbd_dev *dev, struct smbd_dev_events **evsp)
{
    if (!dev || !evsp)
        return EINVAL;
    *evsp = nullptr;
    return guarded(dev, [&] {
        *evsp = new smbd_dev_events;
        return 0;
    });
}

void smbd_dev_events_free(struct smbd_dev_events *evs) { delete evs; }

int smbd_dev_fetch(struct smbd_dev *dev, struct smbd_dev_events *evs,
                   size_t *count)
{
    if (count)
        *count = 0;
    if (!dev)
        return EINVAL;
    if (!evs || !count)
        return invalid(dev, "event storage or count");
    return guarded(dev, [&] {
        std::error_code ec = dev->h->fetch(evs->batch);
        *count = evs->batch.events.size();
        return result(ec);
    });
}

const struct smbd_dev_event *
smbd_dev_events_at(const struct smbd_dev_events *evs, size_t index)
{
    if (!evs || index >= evs->batch.events.size())
        return nullptr;
    return &evs->batch.events[index];
}

int smbd_dev_send(struct smbd_dev *dev, const struct smbd_dev_pdu *pdus,
                  size_t count, size_t *sent)
{
    return counted(dev, pdus || !count, "PDU array", sent, [&](size_t &n) {
        return dev->h->send({pdus, count}, n);
    });
}

int smbd_dev_buf_alloc(struct smbd_dev *dev, size_t len,
                       struct smbd_dev_buf **bufp)
{
    if (!dev)
        return EINVAL;
    if (!bufp)
        return invalid(dev, "buffer pointer");
    *bufp = nullptr;
    return guarded(dev, [&] {
        smbd::lib::Lease *l = nullptr;
        std::error_code ec = dev->h->alloc(len, l);
        *bufp = l;
        return result(ec);
    });
}

uint8_t *smbd_dev_buf_data(const struct smbd_dev_buf *buf)
{
    return buf ? buf->data : nullptr;
}

size_t smbd_dev_buf_len(const struct smbd_dev_buf *buf)
{
    return buf ? buf->len : 0;
}

void smbd_dev_buf_free(struct smbd_dev_buf *buf)
{
    if (buf)
        buf->owner->release(buf);
}

int smbd_dev_descs_check(const struct smbd_dev *dev, const uint8_t *descs,
                         size_t descs_len, uint64_t *total)
{
    if (!dev || !total || (!descs && descs_len))
        return EINVAL;
    // the message lives in the handle, which checking does not change
    // otherwise
    auto *d = const_cast<smbd_dev *>(dev);
    return guarded(d, [&] {
        return result(d->h->descs_check({descs, descs_len}, *total));
    });
}

int smbd_dev_rdma_start_replies(struct smbd_dev *dev,
                                const struct smbd_dev_rdma *ops,
                                const struct smbd_dev_pdu *const *replies,
                                size_t count, size_t *started)
{
    return counted(dev, ops || !count, "operation array", started,
                   [&](size_t &n) {
                       return dev->h->rdma_start(
                           {ops, count}, {replies, replies ? count : 0}, n);
                   });
}

int smbd_dev_rdma_start(struct smbd_dev *dev, const struct smbd_dev_rdma *ops,
                        size_t count, size_t *started)
{
    return smbd_dev_rdma_start_replies(dev, ops, nullptr, count, started);
}

} // extern "C"
