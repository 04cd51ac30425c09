// The responder's SMB2 I/O: READ and WRITE through pool memory and RDMA
// transfers, and the sending of every answer; see responder.h.
#include "responder.h"

#include "smb2_rw.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iterator>

namespace smbd::responder {

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
    count_answer(conn_id, d, response);
    pending_.push_back({conn_id, std::move(response), d.invalidate});
}

void Responder::count_answer(uint64_t conn_id, const Decision &d,
                             std::span<const uint8_t> response)
{
    uint32_t status = smbd_get_le32(response.data() + SMB2_HDR_STATUS);
    bool read =
        smbd_get_le16(response.data() + SMB2_HDR_COMMAND) == smb2rw::SMB2_READ;
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
}

// A READ's response, built before the RDMA WRITE that goes in front of it.
void Responder::prepare_reply(Io &io)
{
    const Transfer &t = *io.decision.transfer;
    if (t.write || !opts_.rw_reply || !(info_.features & SMBD_FEATURE_RW_REPLY))
        return;
    io.reply = files_->complete(t, t.bytes, memory(io));
}

smbd_dev_pdu Responder::pdu_of(uint64_t conn_id,
                               const std::vector<uint8_t> &bytes,
                               std::optional<uint32_t> invalidate, iovec &iov)
{
    iov = {const_cast<uint8_t *>(bytes.data()), bytes.size()};
    smbd_dev_pdu p{};
    p.conn_id = conn_id;
    p.iov = &iov;
    p.iovcnt = 1;
    if (invalidate) {
        p.flags = SMBD_SEND_INVALIDATE;
        p.invalidate_token = *invalidate;
    }
    return p;
}

void Responder::on_io_request(uint64_t conn_id, std::span<const uint8_t> pdu)
{
    setup_io();
    auto dialect = dialects_.find(conn_id);
    Decision d = files_->request(pdu, dialect == dialects_.end()
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
        answer(conn_id, d, std::move(response));
        return;
    }
    Io io;
    io.conn_id = conn_id;
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
        prepare_reply(ready);
        ready_.push_back(id);
    }
    if (glue_)
        return start_tevent_transfers();
    std::vector<smbd_dev_rdma> ops;
    std::vector<iovec> iovs(ready_.size());
    std::vector<smbd_dev_pdu> pdus(ready_.size());
    std::vector<const smbd_dev_pdu *> replies;
    for (uint64_t id : ready_) {
        const Io &io = in_flight_.at(id);
        ops.push_back(rdma_op(id));
        size_t i = replies.size();
        pdus[i] = pdu_of(io.conn_id, io.reply, io.decision.invalidate, iovs[i]);
        replies.push_back(io.reply.empty() ? nullptr : &pdus[i]);
    }
    size_t next = 0;
    while (next < ops.size()) {
        size_t done = 0;
        int err = smbd_dev_rdma_start_replies(dev_.get(), ops.data() + next,
                                              replies.data() + next,
                                              ops.size() - next, &done);
        for (size_t i = next; i < next + done; i++)
            in_flight_.at(ops[i].user_data).started = true;
        summary_.rdma_ops += done;
        next += done;
        if (!err)
            continue;
        // the kernel holds as many as it takes: the rest waits for
        // RDMA_DONEs, or a reply's full connection for its SEND_ROOM
        if (err == EAGAIN || err == ENOBUFS)
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
            answer(
                io.conn_id, io.decision,
                smb2rw::build_error_response(hdr, smb2rw::credit_response(hdr),
                                             NT_STATUS_INSUFFICIENT_RESOURCES));
        }
        return;
    }
    uint32_t moved = static_cast<uint32_t>(std::min<uint64_t>(bytes, t.bytes));
    if (t.write)
        summary_.rdma_bytes_read += moved;
    else
        summary_.rdma_bytes_written += moved;
    if (!io.reply.empty()) {
        // its response went behind the WRITE
        smbd_dev_buf_free(io.buf);
        count_answer(io.conn_id, io.decision, io.reply);
        summary_.pdus_sent++;
        summary_.bytes_sent += io.reply.size();
        summary_.rw_replies++;
        return;
    }
    std::vector<uint8_t> response = files_->complete(t, moved, memory(io));
    smbd_dev_buf_free(io.buf);
    answer(io.conn_id, io.decision, std::move(response));
}

// Drops what @conn_id's requests hold, once it is disconnected.
void Responder::forget_io(uint64_t conn_id)
{
    // its requests still waiting for buffers will never be answered
    std::erase_if(queued_, [&](const Io &io) { return io.conn_id == conn_id; });
    std::erase_if(ready_, [&](uint64_t id) {
        return in_flight_.at(id).conn_id == conn_id;
    });
    // DISCONNECTED is a connection's last event: every RDMA_DONE came
    // first, and on a tevent loop the glue ended each of its requests
    // (started counts them all). What never started (waiting for the
    // kernel in ready_) is dropped.
    for (auto it = in_flight_.begin(); it != in_flight_.end();) {
        Io &io = it->second;
        if (io.conn_id != conn_id) {
            ++it;
            continue;
        }
        if (io.started) {
            log("conn %llu: RDMA operation %llu had no RDMA_DONE before "
                "DISCONNECTED (a %s bug)",
                static_cast<unsigned long long>(conn_id),
                static_cast<unsigned long long>(it->first),
                glue_ ? "driver or libsmbd-tevent" : "driver");
            summary_.rdma_errors++;
        }
        // before its memory: a request the glue still holds is cancelled
        talloc_free(io.req);
        smbd_dev_buf_free(io.buf);
        it = in_flight_.erase(it);
    }
}

// Drops what every READ/WRITE holds, before the glue goes: each request
// the glue still has first (one the kernel is running is orphaned, its
// pool memory kept by the library until the kernel is done with it), then
// the buffers. None of them is answered.
void Responder::free_io()
{
    for (auto &[id, io] : in_flight_) {
        talloc_free(io.req);
        smbd_dev_buf_free(io.buf);
    }
    // waiting for a buffer: no request, and buf is nullptr until they get
    // one
    for (Io &io : queued_)
        smbd_dev_buf_free(io.buf);
    in_flight_.clear();
    queued_.clear();
    ready_.clear();
}

void Responder::flush_sends()
{
    std::vector<Send> sends;
    sends.swap(pending_);
    while (!sends.empty()) {
        std::vector<Send> now;
        for (Send &s : sends) {
            auto h = held_.find(s.conn_id);
            if (h != held_.end())
                h->second.push_back(std::move(s));
            else
                now.push_back(std::move(s));
        }
        sends.clear();
        std::vector<iovec> iov(now.size());
        std::vector<smbd_dev_pdu> pdus(now.size());
        for (size_t i = 0; i < now.size(); i++)
            pdus[i] =
                pdu_of(now[i].conn_id, now[i].pdu, now[i].invalidate, iov[i]);
        size_t next = 0;
        while (next < pdus.size()) {
            size_t done = 0;
            int err = smbd_dev_send(dev_.get(), pdus.data() + next,
                                    pdus.size() - next, &done);
            for (size_t i = next; i < next + done; i++) {
                summary_.pdus_sent++;
                summary_.bytes_sent += pdus[i].iov[0].iov_len;
            }
            next += done;
            if (!err)
                continue;
            if (err == EAGAIN) {
                // as on a full socket: the rest of the connection waits
                uint64_t conn = pdus[next].conn_id;
                summary_.send_waits++;
                log("conn %llu: %s", static_cast<unsigned long long>(conn),
                    smbd_dev_errmsg(dev_.get()));
                held_[conn];
                sends.assign(
                    std::make_move_iterator(now.begin() + std::ptrdiff_t(next)),
                    std::make_move_iterator(now.end()));
                break;
            }
            // the PDU that stopped the batch is dropped; the rest go on
            summary_.send_errors++;
            log("conn %llu: %zu bytes not sent: %s",
                static_cast<unsigned long long>(pdus[next].conn_id),
                pdus[next].iov[0].iov_len, smbd_dev_errmsg(dev_.get()));
            next++;
        }
    }
}

// What a full send queue held goes first, before what came since.
void Responder::on_send_room(uint64_t conn_id)
{
    auto h = held_.find(conn_id);
    if (h == held_.end())
        return;
    log("conn %llu: SEND_ROOM: %zu PDUs go on",
        static_cast<unsigned long long>(conn_id), h->second.size());
    pending_.insert(pending_.begin(),
                    std::make_move_iterator(h->second.begin()),
                    std::make_move_iterator(h->second.end()));
    held_.erase(h);
}

} // namespace smbd::responder
