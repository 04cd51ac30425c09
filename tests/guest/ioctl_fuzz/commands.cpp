// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
// The commands: each built mostly valid, then mutated in its header (size,
// flags, reserved), its fields and its pointers, issued, and its result
// checked. Where a mutation decides the outcome (a size below the minimum,
// non-zero bytes past the kernel's struct, a pointer nothing is mapped at)
// exactly that errno is expected; an unmutated request may get only what
// its command gives a valid request; anything else may get any errno the
// header documents, plus the ones extras() justifies.
#include "worker.h"

#include "reply.h"
#include "smb2_rw.h"

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace fuzz {

namespace {

struct Command {
    unsigned long nr;
    size_t size;
    size_t reserved; // offset of a __u32 __reserved; 0: none
    // output fields: what the caller leaves in them must not matter
    size_t out_begin;
    size_t out_end;
    // the struct's first version, where it grew since; 0: size
    size_t min_size = 0;
};

const Command kTable[kCommands] = {
    {SMBD_IOC_GET_INFO, sizeof(smbd_info), 0,
     offsetof(smbd_info, out_abi_version), sizeof(smbd_info),
     offsetof(smbd_info, out_ib_port)},
    {SMBD_IOC_SET_PARAMS, sizeof(smbd_set_params),
     offsetof(smbd_set_params, __reserved), 0, 0,
     offsetof(smbd_set_params, setup_timeout_ms)},
    {SMBD_IOC_LISTEN, sizeof(smbd_listen), 0, 0, 0},
    {SMBD_IOC_ACCEPT, sizeof(smbd_accept), 0,
     offsetof(smbd_accept, out_conn_id), sizeof(smbd_accept)},
    {SMBD_IOC_REGISTER_SESSION, sizeof(smbd_session), 0, 0, 0},
    {SMBD_IOC_UNREGISTER_SESSION, sizeof(smbd_session), 0, 0, 0},
    {SMBD_IOC_GET_MEM_PARAMS, sizeof(smbd_mem_params),
     offsetof(smbd_mem_params, __reserved),
     offsetof(smbd_mem_params, out_buffer_count),
     offsetof(smbd_mem_params, buffer_count),
     offsetof(smbd_mem_params, buffer_count)},
    {SMBD_IOC_GET_EVENTS, sizeof(smbd_get_events),
     offsetof(smbd_get_events, __reserved),
     offsetof(smbd_get_events, out_count),
     offsetof(smbd_get_events, __reserved)},
    {SMBD_IOC_SEND_PDU, sizeof(smbd_send_pdu),
     offsetof(smbd_send_pdu, __reserved), offsetof(smbd_send_pdu, out_done),
     offsetof(smbd_send_pdu, __reserved)},
    {SMBD_IOC_RDMA_RW, sizeof(smbd_rdma_rw), offsetof(smbd_rdma_rw, __reserved),
     offsetof(smbd_rdma_rw, out_done), offsetof(smbd_rdma_rw, __reserved)},
    {SMBD_IOC_DISCONNECT, sizeof(smbd_disconnect), 0, 0, 0},
    {SMBD_IOC_CONN_STATS, sizeof(smbd_conn_stats), 0,
     offsetof(smbd_conn_stats, out_pdus_received), sizeof(smbd_conn_stats)},
};

// ENOMEM beyond the header's list: commands that allocate on the way (the
// parameter set, params.c; NEW_CHANNEL and DISCONNECTED events at adoption
// and the session entry, routing.c; the pool, pool.c; the kernel copy of a
// PDU, send.c; the slice check and the request, rw.c).
Errnos extras(unsigned op)
{
    switch (op) {
    case OP_SET_PARAMS:
    case OP_ACCEPT:
    case OP_REGISTER_SESSION:
    case OP_GET_MEM_PARAMS:
    case OP_SEND_PDU:
    case OP_RDMA_RW:
        return errnos({ENOMEM});
    default:
        return {};
    }
}

// ioctl types the VFS answers itself before the driver sees the number
// (do_vfs_ioctl: FIO*, FIFREEZE, FS_IOC_*, FICLONE, FIGETBSZ...).
bool vfs_type(uint32_t type)
{
    return type == 0 || type == 'T' || type == 'X' || type == 'f' ||
           type == 0x94 || type == 0x15;
}

// What is wrong with record @i of a GET_EVENTS batch, "" when nothing.
std::string event_problem(const smbd_event &ev, uint32_t i,
                          const smbd_get_events &ge)
{
    if (ev.type < SMBD_EVENT_NEW_CONNECTION || ev.type > SMBD_EVENT_SEND_ROOM)
        return "type " + std::to_string(ev.type);
    if (ev.data_len &&
        (ev.data_offset % 8 || ev.data_offset + ev.data_len > ge.out_data_used))
        return "data outside what out_data_used covers";
    if (ev.type == SMBD_EVENT_OVERFLOW)
        return i == 0 && ev.conn_id == 0 && ev.u.overflow.lost
                   ? ""
                   : "OVERFLOW not first or empty";
    if (ev.conn_id == 0 || ev.conn_id > UINT32_MAX)
        return "conn_id " + std::to_string(ev.conn_id);
    switch (ev.type) {
    case SMBD_EVENT_NEW_CHANNEL: {
        const auto &c = ev.u.new_channel;
        if (uint64_t{c.negotiate_req_len} + c.negotiate_resp_len +
                c.session_setup_len !=
            ev.data_len)
            return "NEW_CHANNEL lengths do not add up";
        if (ev.flags != SMBD_CHANNEL_BOUND && ev.flags != SMBD_CHANNEL_ACCEPTED)
            return "NEW_CHANNEL flags " + std::to_string(ev.flags);
        break;
    }
    case SMBD_EVENT_PDU_RECEIVED:
        if (!ev.data_len)
            return "empty PDU";
        break;
    case SMBD_EVENT_SEND_DONE:
        if (ev.status != 0 && ev.status != -ECONNRESET &&
            ev.status != -ENOTCONN)
            return "SEND_DONE status " + std::to_string(ev.status);
        break;
    case SMBD_EVENT_RDMA_DONE:
        if (ev.status != 0 && ev.status != -EIO && ev.status != -ENOTCONN &&
            ev.status != -ENOMEM && ev.status != -EINVAL)
            return "RDMA_DONE status " + std::to_string(ev.status);
        if (ev.status && ev.u.rdma_done.bytes)
            return "RDMA_DONE failed with bytes";
        break;
    case SMBD_EVENT_DISCONNECTED:
        if (std::string_view(smbd::device::reason_name(
                ev.u.disconnected.reason)) == "unknown")
            return "reason " + std::to_string(ev.u.disconnected.reason);
        break;
    }
    return "";
}

} // namespace

unsigned long smbd_command_nr(unsigned op) { return kTable[op].nr; }

void Thread::command(unsigned op, const Handle &h)
{
    Request req;
    req.op = op;
    req.ksize = kTable[op].size;
    std::memset(req.body, 0, sizeof(req.body));
    bump = kCmdArea;
    // most requests are valid, so they get past the checks into the
    // command; the others break many rules at once
    hostile = rng.percent(40);
    build(op, h, req);
    int err;
    uint32_t usize;
    const uint8_t *arg = issue(req, h, err, usize);
    // a raced call may have gone to another file: nothing to learn
    if (!arg || usize < req.ksize || h.raced())
        return;
    if (!after(req, h, err, arg) || !rng.percent(50))
        return;
    // a connection lives as long as its peer waits: use it at once
    focus = load<smbd_accept>(arg).out_conn_id;
    const unsigned next[] = {OP_SEND_PDU, OP_RDMA_RW, OP_GET_EVENTS,
                             OP_DISCONNECT, OP_CONN_STATS};
    for (uint64_t i = rng.range(1, 3); i > 0; i--)
        command(rng.pick(next), h);
    focus = 0;
}

uint8_t *Thread::issue(Request &req, const Handle &h, int &err, uint32_t &usize)
{
    const Command &c = kTable[req.op];
    const size_t ksize = c.size;
    const size_t kmin = c.min_size ? c.min_size : ksize;
    uint8_t *body = req.body;
    // a request that must fail before it allocates gets one of these
    enum : uint64_t { NONE, SHORT, TAIL, FLAGS, BAD_ARG };
    const uint64_t force = req.force_invalid ? rng.range(SHORT, BAD_ARG) : NONE;
    const uint64_t m = force ? 100 : rng.below(100);
    size_t tail = 0;
    bool tail_nonzero = false, huge = false, header_einval = false;
    usize = static_cast<uint32_t>(ksize);
    if (force == SHORT || (hostile && m < 10)) {
        // forced: below the first version, which an older caller's size
        // is not
        usize = static_cast<uint32_t>(rng.below(force ? kmin : ksize));
        req.mutated("size=" + std::to_string(usize));
    }
    else if (force == TAIL || (hostile && m < 20)) {
        tail = rng.range(1, 4096);
        usize = static_cast<uint32_t>(ksize + tail);
        tail_nonzero = true;
        req.mutated("size=" + std::to_string(usize) + " non-zero tail");
    }
    else if (hostile && m < 24) {
        const uint32_t sizes[] = {UINT32_MAX, 1u << 20, 64u << 10};
        usize = rng.pick(sizes);
        huge = true;
        req.mutated("size=" + std::to_string(usize));
    }
    else if (m >= 24 && m < 32) {
        // a newer caller's struct: zeros past what the kernel knows
        tail = 8 * rng.range(1, 64);
        usize = static_cast<uint32_t>(ksize + tail);
        req.what += "zero tail ";
    }
    uint32_t flags = 0;
    if (force == FLAGS || chance(10)) {
        flags = static_cast<uint32_t>(rng.next()) | 1u << rng.below(32);
        header_einval = true;
        req.mutated("flags");
    }
    store(body, usize);
    store(body + 4, flags);
    if (c.reserved && chance(8)) {
        store(body + c.reserved, static_cast<uint32_t>(rng.next()) | 1);
        header_einval = true;
        req.mutated("__reserved");
    }
    if (rng.percent(20))
        for (size_t i = c.out_begin; i < c.out_end; i++)
            body[i] = static_cast<uint8_t>(rng.next());
    // an older caller's struct sets nothing past its first version (the
    // kernel would read a field cut short: a count of its low bytes)
    if (usize >= kmin && usize < ksize)
        std::memset(body + kmin, 0, ksize - kmin);

    // where it goes, by a in 0..99: the scratch, from kBad where nothing
    // can be read, from kShared a pool window, from kEdge against the guard
    // page; never garbage from a window when it must fail or must not be
    // read from one (the garbage might be valid)
    constexpr uint64_t kBad = 70, kShared = 88, kEdge = 94;
    uint64_t a = 0;
    if (force == BAD_ARG)
        a = kBad;
    else if (force && hostile)
        a = rng.percent(50) ? 0 : rng.percent(50) ? kBad : kEdge;
    else if (hostile)
        a = rng.below(100);
    if (req.private_only && a >= kShared && a < kEdge)
        a = kBad;
    Ptr kind = Ptr::Private;
    uint64_t arg;
    int predict = -1;
    if (a < kBad) {
        uint8_t *p = scratch + (rng.percent(15) ? rng.range(1, 7) : 0);
        std::memcpy(p, body, ksize);
        if (!huge) {
            std::memset(p + ksize, 0, tail);
            if (tail_nonzero)
                p[ksize + rng.below(tail)] =
                    static_cast<uint8_t>(rng.range(1, 255));
        }
        arg = reinterpret_cast<uint64_t>(p);
        // the order the ioctl entry and copy_struct_from_user() check in
        if (usize < kmin)
            predict = EINVAL;
        else if (usize < ksize)
            predict = -1; // an older caller's struct: any documented answer
        else if (tail_nonzero)
            predict = E2BIG;
        else if (header_einval && !huge)
            predict = EINVAL;
        else if (!huge)
            predict = req.inner;
    }
    else if (a < kShared) {
        kind = Ptr::Bad;
        arg = bad_pointer();
        predict = EFAULT;
        req.mutated("arg=bad");
    }
    else if (a < kEdge) {
        kind = Ptr::Shared;
        arg = shared_pointer(ksize);
        req.mutated("arg=shared");
    }
    else {
        kind = Ptr::Edge;
        std::vector<uint8_t> whole(body, body + ksize);
        whole.resize(ksize + (huge ? 0 : tail));
        if (tail_nonzero)
            whole[ksize + rng.below(tail)] = 1;
        const size_t k = rng.below(std::min(whole.size(), kEdgeArea));
        uint8_t *p = scratch + kScratch - k;
        std::memcpy(p, whole.data(), k);
        arg = reinterpret_cast<uint64_t>(p);
        predict = k < 4 ? EFAULT : usize < kmin ? EINVAL : -1;
        req.mutated("arg=edge");
    }

    Errnos allowed;
    if (predict >= 0)
        allowed = errnos({predict});
    else if (req.valid && usize >= ksize)
        allowed = req.semantic;
    else // a mutation need not make it fail: a shared window may be mapped
        allowed = documented() | extras(req.op) | errnos({0});
    {
        InUse use(h);
        const bool blocks = req.op == OP_GET_EVENTS;
        if (blocks)
            proc.blocked[index] = now_ms();
        const long r = syscall(SYS_ioctl, h.fd, c.nr, arg);
        err = r < 0 ? errno : 0;
        if (blocks)
            proc.blocked[index] = 0;
    }
    check(req.op, err, allowed, h,
          "fd " + std::to_string(h.fd) + " arg=" + ptr_name(kind) + " " +
              req.what);
    return kind == Ptr::Private ? reinterpret_cast<uint8_t *>(arg) : nullptr;
}

bool Thread::after(const Request &req, const Handle &h, int err,
                   const uint8_t *arg)
{
    const smbd_info &info = proc.info;
    if (req.op == OP_GET_EVENTS) {
        after_get_events(req, h, err, load<smbd_get_events>(arg));
        return false;
    }
    if (err)
        return false;
    switch (req.op) {
    case OP_GET_INFO:
        // nothing the kernel reports changes while the module is loaded
        if (std::memcmp(arg + 8, reinterpret_cast<const uint8_t *>(&info) + 8,
                        sizeof(info) - 8))
            violation("GET_INFO differs from the parent's");
        break;
    case OP_ACCEPT: {
        const auto a = load<smbd_accept>(arg);
        if (a.out_conn_id == 0 || a.out_conn_id > UINT32_MAX)
            violation("ACCEPT out_conn_id " + std::to_string(a.out_conn_id));
        proc.stats.accepted++;
        return remember_conn(h.slot, a.out_conn_id);
    }
    case OP_GET_MEM_PARAMS: {
        const auto mp = load<smbd_mem_params>(arg);
        if (mp.out_buffer_count != info.out_pool_buffers ||
            mp.out_buffer_size != info.out_buffer_size ||
            mp.out_mmap_size != info.out_mmap_size || mp.out_mmap_offset)
            violation("GET_MEM_PARAMS disagrees with GET_INFO");
        break;
    }
    case OP_SEND_PDU:
    case OP_RDMA_RW: {
        // success: at least the first entry went, at most all
        const uint32_t count = load<uint32_t>(arg + 8);
        const uint32_t done = load<uint32_t>(arg + 24);
        if (done == 0 || done > count)
            violation(std::string(op_name(req.op)) + " out_done " +
                      std::to_string(done) + " of " + std::to_string(count));
        break;
    }
    }
    return false;
}

void Thread::after_get_events(const Request &req, const Handle &h, int err,
                              const smbd_get_events &ge)
{
    if (err == EMSGSIZE) {
        // the first event's data does not fit: out_data_used is its need
        if (ge.out_count || ge.out_data_used <= ge.data_len)
            violation("GET_EVENTS EMSGSIZE with out_count " +
                      std::to_string(ge.out_count) + " out_data_used " +
                      std::to_string(ge.out_data_used));
        return;
    }
    if (err)
        return;
    if (ge.out_count < 1 || ge.out_count > ge.max_events ||
        ge.out_data_used > ge.data_len) {
        violation("GET_EVENTS out_count " + std::to_string(ge.out_count) +
                  " out_data_used " + std::to_string(ge.out_data_used));
        return;
    }
    if (!req.events)
        return;
    Tokens &tokens = proc.setup.shared->tokens;
    for (uint32_t i = 0; i < ge.out_count; i++) {
        const uint8_t *rec = req.events + size_t{i} * ge.event_size;
        const auto ev = load<smbd_event>(rec);
        std::string problem = event_problem(ev, i, ge);
        // bytes past the kernel's record are zeroed
        if (std::any_of(rec + sizeof(ev), rec + ge.event_size,
                        [](uint8_t b) { return b != 0; }))
            problem = "record tail not zeroed";
        if (!problem.empty()) {
            violation("GET_EVENTS record " + std::to_string(i) + ": " +
                      problem);
            continue;
        }
        switch (ev.type) {
        case SMBD_EVENT_NEW_CONNECTION:
            tokens.put(ev.u.new_connection.token);
            break;
        case SMBD_EVENT_NEW_CHANNEL: {
            remember_conn(h.slot, ev.conn_id);
            // mostly let the peer's session start, as smbd would
            const auto &c = ev.u.new_channel;
            if (!req.data || !rng.percent(70))
                break;
            uint64_t session = c.session_id;
            while (!session)
                session = session_id();
            const auto resp = smbd::responder::session_setup_response(
                {req.data + ev.data_offset + c.negotiate_req_len +
                     c.negotiate_resp_len,
                 c.session_setup_len},
                session);
            if (!resp.empty())
                answer(h, ev.conn_id, resp);
            break;
        }
        case SMBD_EVENT_PDU_RECEIVED: {
            if (!req.data)
                break;
            const std::span<const uint8_t> pdu(req.data + ev.data_offset,
                                               ev.data_len);
            // mostly what the peer waits for: its data moved, its echo
            if (!serve_rw(h, ev.conn_id, pdu) && rng.percent(70))
                answer(h, ev.conn_id, smbd::responder::echo_response(pdu));
            break;
        }
        case SMBD_EVENT_DISCONNECTED:
            forget_conn(h.slot, ev.conn_id);
            break;
        }
    }
}

// A valid SEND_PDU of @pdu on @conn.
void Thread::answer(const Handle &h, uint64_t conn,
                    std::span<const uint8_t> pdu)
{
    smbd_iovec iov = {reinterpret_cast<uint64_t>(pdu.data()), pdu.size()};
    smbd_send_entry e = {};
    e.conn_id = conn;
    e.user_data = rng.next();
    e.iov_ptr = reinterpret_cast<uint64_t>(&iov);
    e.iov_count = 1;
    e.flags = rng.percent(20) ? SMBD_SEND_NOTIFY : 0;
    smbd_send_pdu sp = {};
    sp.size = sizeof(sp);
    sp.count = 1;
    sp.entry_size = sizeof(e);
    sp.entries_ptr = reinterpret_cast<uint64_t>(&e);
    int err;
    {
        InUse use(h);
        err = syscall(SYS_ioctl, h.fd, SMBD_IOC_SEND_PDU, &sp) < 0 ? errno : 0;
    }
    check(OP_SEND_PDU, err,
          errnos({0, ENOENT, ENOTCONN, EMSGSIZE, EAGAIN, ENOMEM}), h,
          "an answer to the peer");
}

// An SMB2 WRITE or READ with an RDMA channel, served as smbd would: one
// RDMA_RW against the peer's descriptors, now and then one of them gone
// wrong (past the registration, another token), then the response, or for
// a READ half the time the response with the RDMA WRITE. False when @pdu
// is no such request or the file has no pool.
bool Thread::serve_rw(const Handle &h, uint64_t conn,
                      std::span<const uint8_t> pdu)
{
    namespace rw = smbd::smb2rw;
    rw::WriteRequest w;
    rw::ReadRequest r;
    uint32_t bytes, direction;
    std::span<const uint8_t> channel_info;
    std::vector<uint8_t> resp;
    if (rw::parse_write_request(pdu, 0x0311, w) == rw::Rule::ok &&
        rw::is_rdma(w.channel)) {
        bytes = w.remaining_bytes;
        direction = SMBD_RW_READ_FROM_PEER;
        channel_info = w.channel_info;
        resp =
            rw::build_write_response(w.hdr, rw::credit_response(w.hdr), bytes);
    }
    else if (rw::parse_read_request(pdu, 0x0311, r) == rw::Rule::ok &&
             rw::is_rdma(r.channel)) {
        bytes = r.length;
        direction = SMBD_RW_WRITE_TO_PEER;
        channel_info = r.channel_info;
        resp =
            rw::build_read_response(r.hdr, rw::credit_response(r.hdr), bytes);
    }
    else {
        return false;
    }
    // whole buffers from the start of the pool
    const uint32_t bsize = proc.info.out_buffer_size;
    if (!h.pool || !bytes ||
        (bytes + uint64_t{bsize} - 1) / bsize > proc.info.out_pool_buffers)
        return false;
    std::vector<smbd_slice> slices;
    for (uint32_t left = bytes, b = 0; left; b++) {
        const uint32_t n = std::min(left, bsize);
        slices.push_back({b, 0, n, 0});
        left -= n;
    }
    std::vector<uint8_t> descs(channel_info.begin(), channel_info.end());
    if (!descs.empty() && rng.percent(30)) {
        uint8_t *d = &descs[rng.below(descs.size() / 16) * 16];
        if (rng.percent(50))
            store(d + 12, load<uint32_t>(d + 12) +
                              static_cast<uint32_t>(rng.range(1, 4096)));
        else
            store(d + 8, load<uint32_t>(d + 8) ^ 1u << rng.below(32));
    }
    smbd_rw_op op = {};
    op.conn_id = conn;
    op.user_data = rng.next();
    op.slices_ptr = reinterpret_cast<uint64_t>(slices.data());
    op.descs_ptr = reinterpret_cast<uint64_t>(descs.data());
    op.slice_count = static_cast<uint32_t>(slices.size());
    op.desc_count = static_cast<uint32_t>(descs.size() / 16);
    op.direction = direction;
    // a READ's response with its RDMA WRITE, or after it
    smbd_iovec iov = {reinterpret_cast<uint64_t>(resp.data()), resp.size()};
    smbd_send_entry reply = {};
    const bool with_reply = direction == SMBD_RW_WRITE_TO_PEER &&
                            (proc.info.out_features & SMBD_FEATURE_RW_REPLY) &&
                            rng.percent(50);
    if (with_reply) {
        reply.conn_id = conn;
        reply.iov_ptr = reinterpret_cast<uint64_t>(&iov);
        reply.iov_count = 1;
        op.reply_ptr = reinterpret_cast<uint64_t>(&reply);
        op.reply_size = sizeof(reply);
    }
    smbd_rdma_rw req = {};
    req.size = sizeof(req);
    req.count = 1;
    req.op_size = sizeof(op);
    req.ops_ptr = reinterpret_cast<uint64_t>(&op);
    int err;
    {
        InUse use(h);
        err = syscall(SYS_ioctl, h.fd, SMBD_IOC_RDMA_RW, &req) < 0 ? errno : 0;
    }
    // EINVAL: no descriptors, or the peer's are empty or wrap
    check(OP_RDMA_RW, err,
          errnos(
              {0, EINVAL, ENOENT, ENOTCONN, EMSGSIZE, EAGAIN, ENOBUFS, ENOMEM}),
          h, "serving an SMB2 READ/WRITE");
    if (!err && !with_reply && rng.percent(70))
        answer(h, conn, resp);
    return true;
}

void Thread::random_ioctl(const Handle &h)
{
    uint32_t type, nr;
    if (rng.percent(50)) {
        type = SMBD_IOCTL_TYPE;
        nr = static_cast<uint32_t>(
            rng.percent(50)
                ? rng.range(SMBD_CMD_BASE - 4, SMBD_CMD_BASE + kCommands + 4)
                : rng.below(256));
    }
    else {
        do
            type = static_cast<uint32_t>(rng.below(256));
        while (type == SMBD_IOCTL_TYPE || vfs_type(type));
        nr = static_cast<uint32_t>(rng.below(256));
    }
    const uint32_t dir = static_cast<uint32_t>(rng.below(4));
    const uint32_t size =
        dir || rng.percent(30) ? static_cast<uint32_t>(rng.below(1 << 14)) : 0;
    const unsigned long cmd = _IOC(dir, type, nr, size);
    unsigned op = OP_IOCTL_RANDOM;
    uint64_t arg;
    int predict;
    if (cmd == _IO(SMBD_IOCTL_TYPE, nr) && nr >= SMBD_CMD_BASE &&
        nr < SMBD_CMD_BASE + kCommands) {
        // an offered number with no struct behind the argument
        op = nr - SMBD_CMD_BASE;
        if (rng.percent(50)) {
            arg = bad_pointer();
            predict = EFAULT;
        }
        else {
            std::memset(scratch, 0, 8); // size 0
            arg = reinterpret_cast<uint64_t>(scratch);
            predict = EINVAL;
        }
    }
    else {
        // the number is refused before the argument is looked at
        arg = rng.next();
        predict = ENOTTY;
    }
    int err;
    {
        InUse use(h);
        err = syscall(SYS_ioctl, h.fd, cmd, arg) < 0 ? errno : 0;
    }
    char what[64];
    std::snprintf(what, sizeof(what), "cmd %#lx arg %#llx", cmd,
                  static_cast<unsigned long long>(arg));
    check(op, err, errnos({predict}), h, what);
}

} // namespace fuzz
