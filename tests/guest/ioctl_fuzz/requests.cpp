// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
// What the commands carry: each struct built as the header describes it,
// and, in a hostile request, fields out of range, counts past the limits,
// element sizes with tails, pointers to where nothing can be read, slices
// outside the pool and descriptors that wrap. Connection ids come from
// ACCEPT and NEW_CHANNEL on the same file, another file, or nowhere.
#include "worker.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace fuzz {

void Thread::build(unsigned op, const Handle &h, Request &req)
{
    switch (op) {
    case OP_GET_INFO:
        req.semantic = errnos({0});
        break;
    case OP_SET_PARAMS:
        build_set_params(req);
        break;
    case OP_LISTEN:
        req.semantic = errnos({0, EBUSY});
        break;
    case OP_ACCEPT:
        build_accept(req);
        break;
    case OP_REGISTER_SESSION:
    case OP_UNREGISTER_SESSION:
        build_session(req);
        break;
    case OP_GET_MEM_PARAMS:
        build_mem_params(h, req);
        break;
    case OP_GET_EVENTS:
        build_get_events(req);
        break;
    case OP_SEND_PDU:
        build_send_pdu(h, req);
        break;
    case OP_RDMA_RW:
        build_rdma_rw(h, req);
        break;
    case OP_DISCONNECT:
        req.as<smbd_disconnect>().conn_id = conn_id(h);
        req.semantic = errnos({0, ENOENT});
        break;
    case OP_CONN_STATS:
        // as root, another file's connection answers too
        req.as<smbd_conn_stats>().conn_id = conn_id(h);
        req.semantic = errnos({0, ENOENT});
        break;
    }
}

uint64_t Thread::conn_id(const Handle &h)
{
    if (focus && rng.percent(70))
        return focus;
    const uint64_t r = rng.below(100);
    if (r < 50) {
        // this file's, or another file's (ENOENT here)
        Handle other;
        other.slot =
            r < 40 && h.slot ? h.slot : proc.slots[rng.below(kSlots)].get();
        const auto conns = conns_of(other);
        if (!conns.empty())
            return conns[rng.below(conns.size())];
    }
    // any small id: mostly none of this file's
    if (r < 60)
        return rng.range(1, 64);
    // never ids (0, past 32 bits), and ids far beyond those in use
    const uint64_t odd[] = {0, 1ull << 32, UINT64_MAX, rng.next(),
                            rng.range(1ull << 20, UINT32_MAX)};
    return rng.pick(odd);
}

void Thread::build_set_params(Request &req)
{
    auto &sp = req.as<smbd_set_params>();
    sp = valid_params;
    // long enough for a thread to read the NEW_CONNECTION and ACCEPT it
    sp.accept_timeout_ms = static_cast<uint32_t>(rng.range(1000, 10000));
    req.semantic = errnos({0, EBUSY, ENOMEM});
    if (rng.percent(15)) {
        // any bytes up to the limit: the driver passes the blob on
        const size_t len = rng.below(SMBD_MAX_SEC_BLOB + 1);
        if (uint8_t *b = alloc(len)) {
            for (size_t i = 0; i < len; i++)
                b[i] = static_cast<uint8_t>(rng.next());
            sp.sec_blob_ptr = reinterpret_cast<uint64_t>(b);
            sp.sec_blob_len = static_cast<uint32_t>(len);
        }
    }
    if (!chance(50))
        return;

    // one field out of its range
    const uint32_t credits[] = {0, 65536, UINT32_MAX};
    const uint32_t io_sizes[] = {0, 127, 65537};
    const uint32_t ms[] = {0, SMBD_MAX_TIMEOUT_MS + 1};
    const uint32_t pdu_max = proc.info.out_max_pdu_size;
    req.inner = EINVAL;
    switch (rng.below(16)) {
    case 0:
        sp.receive_credit_max = rng.pick(credits);
        req.mutated("receive_credit_max");
        break;
    case 1:
        sp.send_credit_target = rng.pick(credits);
        req.mutated("send_credit_target");
        break;
    case 2:
        sp.max_send_size = rng.pick(io_sizes);
        req.mutated("max_send_size");
        break;
    case 3:
        sp.max_receive_size = rng.pick(io_sizes);
        req.mutated("max_receive_size");
        break;
    case 4: {
        const uint32_t v[] = {0, 131071, pdu_max + 1};
        sp.max_fragmented_size = rng.pick(v);
        req.mutated("max_fragmented_size");
        break;
    }
    case 5: {
        const uint32_t v[] = {0, pdu_max + 1};
        sp.max_read_write_size = rng.pick(v);
        req.mutated("max_read_write_size");
        break;
    }
    case 6: {
        uint32_t *fields[] = {
            &sp.keepalive_interval_ms, &sp.keepalive_timeout_ms,
            &sp.negotiate_timeout_ms,  &sp.accept_timeout_ms,
            &sp.setup_timeout_ms,      &sp.credit_timeout_ms};
        uint32_t *field = rng.pick(fields);
        // 0 is valid for these two: another timeout stands in
        bool zero_ok =
            field == &sp.setup_timeout_ms || field == &sp.credit_timeout_ms;
        *field = zero_ok ? SMBD_MAX_TIMEOUT_MS + 1 : rng.pick(ms);
        req.mutated("a timeout");
        break;
    }
    case 7: {
        const uint32_t v[] = {0, 2, 4, 7};
        sp.security_mode = rng.pick(v);
        req.mutated("security_mode");
        break;
    }
    case 8:
        if (rng.percent(50)) {
            const uint32_t v[] = {0x0202, 0x0210, 0x0301};
            sp.min_dialect = rng.pick(v);
        }
        else {
            sp.min_dialect = 0x0311;
            sp.max_dialect = 0x0300;
        }
        req.mutated("dialects");
        break;
    case 9: {
        uint32_t *fields[] = {&sp.max_transact_size, &sp.max_read_size,
                              &sp.max_write_size};
        *rng.pick(fields) = 65535;
        req.mutated("a max size");
        break;
    }
    case 10:
        sp.policy_flags = 1u << rng.range(1, 31);
        req.mutated("policy_flags");
        break;
    case 11: {
        const uint32_t v[] = {SMBD_MAX_ALGORITHMS + 1, UINT32_MAX};
        sp.cipher_count = rng.pick(v);
        req.mutated("cipher_count");
        break;
    }
    case 12:
    case 13: {
        // a duplicate, an unknown id, or an unused entry set
        const bool cipher = rng.percent(50);
        uint16_t *ids = cipher ? sp.ciphers : sp.signing_algorithms;
        switch (rng.below(3)) {
        case 0:
            ids[1] = ids[0];
            break;
        case 1:
            ids[0] = cipher ? (rng.percent(50) ? 0 : 5) : 3;
            break;
        default:
            ids[SMBD_MAX_ALGORITHMS - 1] = 1;
            break;
        }
        req.mutated(cipher ? "ciphers" : "signing_algorithms");
        break;
    }
    case 14: {
        const uint32_t v[] = {SMBD_MAX_SEC_BLOB + 1, UINT32_MAX};
        sp.sec_blob_len = rng.pick(v);
        req.mutated("sec_blob_len");
        break;
    }
    default:
        sp.sec_blob_ptr = bad_pointer();
        req.inner = sp.sec_blob_len ? EFAULT : -1;
        req.mutated("sec_blob_ptr");
        break;
    }
}

void Thread::build_accept(Request &req)
{
    auto &a = req.as<smbd_accept>();
    const uint64_t r = rng.below(100);
    if (r < 80 && proc.setup.shared->tokens.get(rng, a.token)) {
        // offered to a file of any process; now and then one bit off
        if (r >= 60)
            a.token[rng.below(SMBD_TOKEN_SIZE)] ^=
                static_cast<uint8_t>(1u << rng.below(8));
    }
    else if (r < 95) {
        for (auto &b : a.token)
            b = static_cast<uint8_t>(rng.next());
    }
    req.semantic = errnos({0, ENOENT, ENOTCONN, ENOMEM});
}

uint64_t Thread::session_id()
{
    switch (rng.below(10)) {
    case 0:
    case 1:
    case 2:
    case 3:
        return 0x1234; // the clients of tests/vm/ioctl-fuzz.sh bind to it
    case 4:
    case 5:
    case 6:
        return rng.range(1, 4); // few, so files of all processes collide
    case 7:
        return rng.next() | 1;
    case 8:
        return UINT64_MAX;
    default:
        return 0;
    }
}

void Thread::build_session(Request &req)
{
    auto &s = req.as<smbd_session>();
    s.session_id = session_id();
    if (!s.session_id) {
        req.mutated("session_id=0");
        req.inner = EINVAL;
    }
    req.semantic = req.op == OP_REGISTER_SESSION
                       ? errnos({0, EBUSY, ENOMEM, ENOSPC})
                       : errnos({0, ENOENT});
}

// The pool's count of buffers, or one past the module's. Never fewer: a
// slot's pool may not be allocated yet, and the fuzzer's windows, slices
// and checks take the count of GET_INFO (the guest tests cover fewer).
void Thread::build_mem_params(const Handle &h, Request &req)
{
    auto &mp = req.as<smbd_mem_params>();
    const uint32_t most = proc.info.out_pool_buffers;
    req.semantic = errnos({0, ENOMEM});
    req.force_invalid = !h.pool;
    // whatever a window holds could ask for fewer
    req.private_only = true;
    const uint64_t r = rng.below(10);
    if (r < 3) {
        mp.buffer_count = most;
    }
    else if (r < 4 && hostile) {
        mp.buffer_count = static_cast<uint32_t>(rng.range(
            uint64_t{most} + 1, rng.percent(50) ? most + 1 : UINT32_MAX));
        req.mutated("buffer_count");
        req.inner = EINVAL;
    }
}

void Thread::build_get_events(Request &req)
{
    auto &ge = req.as<smbd_get_events>();
    const smbd_info &info = proc.info;
    req.semantic = errnos({0, EAGAIN, EINTR, EMSGSIZE});
    switch (hostile ? rng.below(10) : 2 + rng.below(8)) {
    case 0:
        ge.max_events = 0;
        req.mutated("max_events=0");
        req.inner = EINVAL;
        break;
    case 1:
        ge.max_events = rng.percent(50) ? info.out_max_batch + 1 : UINT32_MAX;
        req.mutated("max_events");
        req.inner = EINVAL;
        break;
    case 2:
        ge.max_events = info.out_max_batch;
        break;
    default:
        ge.max_events = static_cast<uint32_t>(rng.range(1, 16));
        break;
    }
    const uint64_t e = hostile ? rng.below(20) : rng.below(17);
    if (e < 14) {
        ge.event_size = sizeof(smbd_event);
    }
    else if (e < 16) {
        // a newer caller's records: the kernel zeroes what it does not know
        ge.event_size =
            static_cast<uint32_t>(sizeof(smbd_event) + 8 * rng.range(1, 16));
    }
    else if (e < 17) {
        ge.event_size = 4096;
    }
    else {
        const uint32_t v[] = {0, sizeof(smbd_event) - 1, 4097, UINT32_MAX};
        ge.event_size = rng.pick(v);
        req.mutated("event_size");
        req.inner = EINVAL;
    }
    const size_t room = size_t{std::min(ge.max_events, info.out_max_batch)} *
                        std::min<uint32_t>(ge.event_size, 4096);
    Ptr kind;
    ge.events_ptr = space(room, req, "events", &kind);
    if (kind == Ptr::Private)
        req.events = reinterpret_cast<uint8_t *>(ge.events_ptr);

    constexpr uint32_t kDataRoom = 256 << 10;
    const uint64_t d = hostile ? rng.below(10) : rng.below(9);
    if (d < 4)
        ge.data_len = 64 << 10;
    else if (d < 6)
        ge.data_len = static_cast<uint32_t>(rng.below(4097)); // EMSGSIZE
    else if (d < 7)
        ge.data_len = 0;
    else if (d < 9)
        ge.data_len = static_cast<uint32_t>(rng.below(kDataRoom));
    else
        ge.data_len = UINT32_MAX;
    Ptr data_kind;
    ge.data_ptr =
        space(std::min(ge.data_len, kDataRoom), req, "data", &data_kind);
    if (ge.data_len > kDataRoom)
        req.mutated("data_len past the buffer");
    else if (data_kind == Ptr::Private)
        req.data = reinterpret_cast<uint8_t *>(ge.data_ptr);
}

void Thread::build_send_pdu(const Handle &h, Request &req)
{
    auto &sp = req.as<smbd_send_pdu>();
    const smbd_info &info = proc.info;
    const uint32_t batch = info.out_max_batch;
    constexpr size_t esize = sizeof(smbd_send_entry);
    // EAGAIN: the connection holds its send queue's bound
    // ENOBUFS: a reply does not fit its connection's send queue
    req.semantic =
        errnos({0, ENOENT, ENOTCONN, EMSGSIZE, EAGAIN, ENOBUFS, ENOMEM});
    switch (hostile ? rng.below(10) : 2 + rng.below(18)) {
    case 0:
        sp.count = 0;
        req.mutated("count=0");
        req.inner = EINVAL;
        break;
    case 1:
        sp.count = rng.percent(50) ? batch + 1 : UINT32_MAX;
        req.mutated("count");
        req.inner = EINVAL;
        break;
    case 2:
        sp.count = batch;
        break;
    default:
        sp.count = static_cast<uint32_t>(rng.range(1, 4));
        break;
    }
    bool tail_nonzero = false;
    const uint64_t z = hostile ? rng.below(20) : rng.below(17);
    if (z < 15) {
        sp.entry_size = esize;
    }
    else if (z < 18) {
        sp.entry_size = static_cast<uint32_t>(esize + 8 * rng.range(1, 8));
        tail_nonzero = z == 17;
        if (tail_nonzero)
            req.mutated("entry tail");
    }
    else {
        const uint32_t v[] = {0, esize - 1, 4097};
        sp.entry_size = rng.pick(v);
        req.mutated("entry_size");
        req.inner = EINVAL;
    }
    const size_t n = std::min(sp.count, batch);
    const size_t stride = std::clamp<size_t>(sp.entry_size, esize, 4096);
    std::vector<uint8_t> entries(n * stride);
    const uint8_t *pdu = pdu_bytes();
    for (size_t i = 0; i < n; i++) {
        smbd_send_entry e = send_entry(conn_id(h), pdu, req);
        std::memcpy(&entries[i * stride], &e, esize);
        if (tail_nonzero)
            entries[i * stride + esize + rng.below(stride - esize)] =
                static_cast<uint8_t>(rng.range(1, 255));
    }
    sp.entries_ptr = put(entries.data(), entries.size(), req, "entries_ptr");
}

// PDU bytes entries point into: an SMB2 protocol id, then anything.
const uint8_t *Thread::pdu_bytes()
{
    uint8_t *pdu = alloc(kPduBytes);
    if (pdu) {
        std::memset(pdu, 0, kPduBytes);
        const uint8_t id[] = {0xfe, 'S', 'M', 'B', 64};
        std::memcpy(pdu, id, sizeof(id));
        for (int i = 0; i < 64; i++)
            pdu[rng.below(kPduBytes)] = static_cast<uint8_t>(rng.next());
    }
    return pdu;
}

// One SEND_PDU entry for @conn (or an RDMA_RW reply), its iovecs into
// @pdu (pdu_bytes(); nullptr: elsewhere).
smbd_send_entry Thread::send_entry(uint64_t conn, const uint8_t *pdu,
                                   Request &req)
{
    const smbd_info &info = proc.info;
    constexpr size_t kPdu = kPduBytes;
    smbd_send_entry e = {};
    {
        e.conn_id = conn;
        e.user_data = rng.next();
        switch (hostile ? rng.below(20) : 2 + rng.below(18)) {
        case 0:
            e.iov_count = 0;
            req.mutated("iov_count=0");
            break;
        case 1:
            e.iov_count = rng.percent(50) ? info.out_max_iovs + 1 : UINT32_MAX;
            req.mutated("iov_count");
            break;
        case 2:
            e.iov_count = info.out_max_iovs;
            break;
        default:
            e.iov_count = static_cast<uint32_t>(rng.range(1, 4));
            break;
        }
        std::vector<smbd_iovec> iov(std::min(e.iov_count, info.out_max_iovs));
        for (size_t k = 0; k < iov.size(); k++) {
            auto &v = iov[k];
            if (chance(5)) {
                const uint64_t big[] = {uint64_t{info.out_max_pdu_size} + 1,
                                        UINT64_MAX};
                v.len = rng.pick(big);
                req.mutated("iov len");
            }
            else {
                // the first is never empty: the PDU is not
                v.len = rng.range(k ? 0 : 1, 2048);
            }
            if (pdu && v.len <= kPdu && !chance(8)) {
                v.base = reinterpret_cast<uint64_t>(pdu) +
                         rng.below(kPdu - v.len + 1);
            }
            else {
                Ptr kind;
                v.base = pointer(std::min<uint64_t>(v.len, kPdu), kind, true);
                req.mutated(std::string("iov base=") + ptr_name(kind));
            }
        }
        e.iov_ptr =
            put(iov.data(), iov.size() * sizeof(smbd_iovec), req, "iov_ptr");
        const uint64_t f = hostile ? rng.below(20) : rng.below(19);
        if (f < 14) {
        }
        else if (f < 17) {
            e.flags = SMBD_SEND_NOTIFY;
        }
        else if (f < 19) {
            e.flags = SMBD_SEND_INVALIDATE | (f == 18 ? SMBD_SEND_NOTIFY : 0);
            e.invalidate_token = static_cast<uint32_t>(rng.next());
        }
        else {
            e.flags =
                static_cast<uint32_t>(rng.next()) | 1u << rng.range(2, 31);
            req.mutated("entry flags");
        }
        if (chance(3) && !(e.flags & SMBD_SEND_INVALIDATE)) {
            e.invalidate_token = static_cast<uint32_t>(rng.next()) | 1;
            req.mutated("invalidate_token");
        }
        if (chance(3)) {
            e.__reserved = static_cast<uint32_t>(rng.next()) | 1;
            req.mutated("entry __reserved");
        }
    }
    return e;
}

// Slices of the pool: mostly in distinct buffers, so they never overlap.
std::vector<uint8_t> Thread::slices(Request &req)
{
    const smbd_info &info = proc.info;
    const uint32_t nbuf = info.out_pool_buffers;
    const uint32_t bsize = info.out_buffer_size;
    std::vector<smbd_slice> s;
    if (rng.percent(3)) {
        // as many as allowed, pieces of pages: many contexts, EMSGSIZE
        for (uint32_t k = 0; k < info.out_max_slices; k++) {
            const uint64_t at = uint64_t{k} * 512;
            s.push_back({static_cast<uint32_t>(at / bsize % nbuf),
                         static_cast<uint32_t>(at % bsize), 512, 0});
        }
    }
    else {
        const uint32_t n =
            static_cast<uint32_t>(rng.range(1, std::min(4u, nbuf)));
        const uint64_t b0 = rng.below(nbuf);
        for (uint32_t k = 0; k < n; k++) {
            smbd_slice x = {static_cast<uint32_t>((b0 + k) % nbuf), 0, 0, 0};
            const uint64_t o = rng.below(4);
            if (o == 1)
                x.offset = static_cast<uint32_t>(rng.below(bsize / proc.page) *
                                                 proc.page);
            else if (o == 2)
                x.offset = static_cast<uint32_t>(rng.below(bsize));
            x.length = rng.percent(10)
                           ? bsize - x.offset
                           : static_cast<uint32_t>(rng.range(
                                 1, std::min(bsize - x.offset, 65536u)));
            s.push_back(x);
        }
    }
    if (chance(8)) {
        smbd_slice &x = s[rng.below(s.size())];
        switch (rng.below(6)) {
        case 0:
            x.buffer = rng.percent(50) ? nbuf : UINT32_MAX;
            break;
        case 1:
            x.offset = bsize;
            break;
        case 2:
            x.length = 0;
            break;
        case 3:
            x.length = bsize - x.offset + 1;
            break;
        case 4:
            s.push_back(x); // overlaps itself
            break;
        default:
            x.__reserved = 1;
            break;
        }
        req.mutated("slice");
    }
    std::vector<uint8_t> out(s.size() * sizeof(smbd_slice));
    std::memcpy(out.data(), s.data(), out.size());
    return out;
}

// Buffer Descriptor V1 entries naming client memory that does not exist:
// an RDMA operation on a real connection fails and disconnects it.
std::vector<uint8_t> Thread::descriptors(Request &req)
{
    const smbd_info &info = proc.info;
    const size_t n =
        rng.percent(3) ? info.out_max_descriptors : rng.range(1, 4);
    std::vector<uint8_t> out(n * 16);
    for (size_t i = 0; i < n; i++) {
        store(&out[i * 16], rng.next() & ~uint64_t{0xfff});
        store(&out[i * 16 + 8], static_cast<uint32_t>(rng.next()));
        store(&out[i * 16 + 12], static_cast<uint32_t>(rng.range(1, 65536)));
    }
    if (chance(6)) {
        const size_t i = rng.below(n);
        if (rng.percent(50)) {
            store(&out[i * 16 + 12], uint32_t{0});
        }
        else {
            store(&out[i * 16], UINT64_MAX - rng.below(100));
            store(&out[i * 16 + 12], uint32_t{4096});
        }
        req.mutated("descriptor");
    }
    return out;
}

void Thread::build_rdma_rw(const Handle &h, Request &req)
{
    auto &rw = req.as<smbd_rdma_rw>();
    const smbd_info &info = proc.info;
    const uint32_t batch = info.out_max_batch;
    constexpr size_t osize = sizeof(smbd_rw_op);
    // ENOBUFS: a reply does not fit its connection's send queue
    req.semantic =
        errnos({0, ENOENT, ENOTCONN, EMSGSIZE, EAGAIN, ENOBUFS, ENOMEM});
    switch (hostile ? rng.below(10) : 2 + rng.below(18)) {
    case 0:
        rw.count = 0;
        req.mutated("count=0");
        req.inner = EINVAL;
        break;
    case 1:
        rw.count = rng.percent(50) ? batch + 1 : UINT32_MAX;
        req.mutated("count");
        req.inner = EINVAL;
        break;
    case 2:
        rw.count = batch;
        break;
    default:
        rw.count = static_cast<uint32_t>(rng.range(1, 4));
        break;
    }
    bool tail_nonzero = false;
    const uint64_t z = hostile ? rng.below(20) : rng.below(17);
    if (z < 15) {
        rw.op_size = osize;
    }
    else if (z < 18) {
        rw.op_size = static_cast<uint32_t>(osize + 8 * rng.range(1, 8));
        tail_nonzero = z == 17;
        if (tail_nonzero)
            req.mutated("op tail");
    }
    else {
        const uint32_t v[] = {0, SMBD_RW_OP_SIZE_V1 - 1, 4097};
        rw.op_size = rng.pick(v);
        req.mutated("op_size");
        req.inner = EINVAL;
    }
    // the first version, as old callers pass it: no reply
    const bool v1 = rw.op_size == osize && rng.percent(10);
    if (v1)
        rw.op_size = SMBD_RW_OP_SIZE_V1;
    const uint8_t *pdu = pdu_bytes();

    // a few slice and descriptor lists the operations share
    struct List {
        uint64_t ptr;
        uint32_t count;
    };
    List slice_lists[3], desc_lists[3];
    for (auto &l : slice_lists) {
        const auto s = slices(req);
        l = {put(s.data(), s.size(), req, "slices_ptr"),
             static_cast<uint32_t>(s.size() / sizeof(smbd_slice))};
    }
    for (auto &l : desc_lists) {
        const auto d = descriptors(req);
        l = {put(d.data(), d.size(), req, "descs_ptr"),
             static_cast<uint32_t>(d.size() / 16)};
    }
    const size_t n = std::min(rw.count, batch);
    const size_t stride =
        std::clamp<size_t>(rw.op_size, SMBD_RW_OP_SIZE_V1, 4096);
    std::vector<uint8_t> ops(n * stride);
    for (size_t i = 0; i < n; i++) {
        smbd_rw_op op = {};
        op.conn_id = conn_id(h);
        op.user_data = rng.next();
        const List &s = rng.pick(slice_lists);
        const List &d = rng.pick(desc_lists);
        op.slices_ptr = s.ptr;
        op.slice_count = s.count;
        op.descs_ptr = d.ptr;
        op.desc_count = d.count;
        if (chance(4)) {
            op.slice_count = rng.percent(50) ? 0 : info.out_max_slices + 1;
            req.mutated("slice_count");
        }
        if (chance(4)) {
            op.desc_count = rng.percent(50) ? 0 : info.out_max_descriptors + 1;
            req.mutated("desc_count");
        }
        op.direction =
            rng.percent(50) ? SMBD_RW_WRITE_TO_PEER : SMBD_RW_READ_FROM_PEER;
        if (chance(8) || !h.pool) {
            // no pool for this file (the memory budget): never a valid op
            const uint32_t v[] = {0, 3, static_cast<uint32_t>(rng.next()) | 4};
            op.direction = rng.pick(v);
            req.mutated("direction");
        }
        if (chance(3)) {
            op.__reserved = 1;
            req.mutated("op __reserved");
        }
        if (!v1 && rng.percent(25))
            add_reply(op, pdu, req);
        std::memcpy(&ops[i * stride], &op, std::min(osize, stride));
        if (tail_nonzero)
            ops[i * stride + osize + rng.below(stride - osize)] =
                static_cast<uint8_t>(rng.range(1, 255));
    }
    rw.ops_ptr = put(ops.data(), ops.size(), req, "ops_ptr");
}

// An RDMA WRITE's reply: mostly as it should be, now and then not.
void Thread::add_reply(smbd_rw_op &op, const uint8_t *pdu, Request &req)
{
    constexpr size_t esize = sizeof(smbd_send_entry);
    // a reply goes with an RDMA WRITE (a mutated direction stays)
    if (op.direction == SMBD_RW_READ_FROM_PEER)
        op.direction = SMBD_RW_WRITE_TO_PEER;
    smbd_send_entry e = send_entry(op.conn_id, pdu, req);
    // RDMA_DONE tells whether a reply went: SEND_DONE is refused
    if ((e.flags & SMBD_SEND_NOTIFY) && hostile)
        req.mutated("reply notify");
    else
        e.flags &= ~SMBD_SEND_NOTIFY;
    if (chance(5)) {
        e.conn_id = op.conn_id + 1;
        req.mutated("reply conn_id");
    }
    uint8_t raw[esize + 16] = {};
    std::memcpy(raw, &e, esize);
    op.reply_size = static_cast<uint32_t>(esize);
    switch (hostile ? rng.below(12) : 4 + rng.below(8)) {
    case 0:
        op.reply_size = rng.percent(50) ? SMBD_SEND_ENTRY_SIZE_V1 - 1 : 4097;
        req.mutated("reply_size");
        break;
    case 1:
        op.reply_size = 0;
        req.mutated("reply_size=0");
        break;
    case 2:
        op.reply_size = static_cast<uint32_t>(esize + 16);
        raw[esize + rng.below(16)] = static_cast<uint8_t>(rng.range(1, 255));
        req.mutated("reply tail");
        break;
    case 3:
        op.direction = SMBD_RW_READ_FROM_PEER;
        req.mutated("reply with an RDMA READ");
        break;
    case 4:
        op.reply_size = static_cast<uint32_t>(esize + 16);
        break;
    default:
        break;
    }
    op.reply_ptr = put(raw, sizeof(raw), req, "reply_ptr");
    if (chance(4)) {
        op.__reserved2 = 1;
        req.mutated("op __reserved2");
    }
}

} // namespace fuzz
