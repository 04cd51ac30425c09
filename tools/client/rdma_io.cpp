// SMB2 READ and WRITE over RDMA from the client's side; see rdma_io.h.
#include "rdma_io.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/mman.h>

#include <infiniband/verbs.h>

#include "buffer_desc.h"

namespace smbd::client {

using namespace smbd::smb2rw;

namespace {

// Between and around the descriptors' regions, so that a server writing
// past a descriptor shows up; and the byte a READ must overwrite.
constexpr size_t guard_size = 64;
constexpr uint8_t guard_byte = 0xEE;
constexpr uint8_t poison_byte = 0xA5;

size_t align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

std::string hex32(uint32_t v)
{
    char buf[16];
    std::snprintf(buf, sizeof(buf), "0x%08x", v);
    return buf;
}

Error io_error(Errc e, const std::string &what) { return make_error(e, what); }

} // namespace

RdmaIo::RdmaIo(Client &client, const IoOptions &opt, IoPath *path)
    : client_(client), opt_(opt), path_(path),
      next_message_id_(opt.first_message_id)
{
    client_.hold_domain();
}

Result<std::unique_ptr<RdmaIo>>
RdmaIo::create(Client &client, const IoOptions &opt, IoPath *path)
{
    if (opt.slots == 0 || opt.descriptors == 0 || opt.max_size == 0)
        return io_error(Errc::invalid_argument,
                        "RDMA I/O needs at least one slot, one descriptor "
                        "and one byte");
    if (!is_rdma(opt.channel))
        return io_error(Errc::invalid_argument,
                        "the channel must be RDMA_V1 or RDMA_V1_INVALIDATE");
    // ChannelInfoLength is 16 bits
    if (opt.descriptors > 0xFFFF / SMBD_BUFFER_DESC_SIZE)
        return io_error(Errc::invalid_argument,
                        "at most 4095 descriptors fit a request");
    if (uint64_t{opt.max_size} + opt.descriptor_extra > UINT32_MAX)
        return io_error(Errc::invalid_argument,
                        "the descriptors cannot describe 4 GiB or more");
    std::unique_ptr<RdmaIo> io(new RdmaIo(client, opt, path));
    if (auto st = io->setup(); !st)
        return st.error();
    return io;
}

Status RdmaIo::setup()
{
    ibv_pd *pd = client_.protection_domain();
    if (!pd)
        return io_error(Errc::closed, "the connection is closed");
    // room for the largest layout: every region 64-byte aligned after a
    // guard, and a guard at the end
    stride_ = align_up(size_t{opt_.max_size} + opt_.descriptor_extra +
                           (size_t{opt_.descriptors} + 1) * (guard_size + 64),
                       4096);
    length_ = stride_ * opt_.slots;
    void *p = mmap(nullptr, length_, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return io_error(Errc::invalid_argument,
                        "cannot allocate " + std::to_string(length_) +
                            " bytes for RDMA: " + std::strerror(errno));
    mem_ = static_cast<uint8_t *>(p);
    std::memset(mem_, guard_byte, length_);
    // what MS-SMBD's Memory Registration asks for, and window binding
    mr_ = ibv_reg_mr(pd, mem_, length_,
                     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
                         IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_MW_BIND);
    if (!mr_)
        return io_error(Errc::rdma, "ibv_reg_mr of " + std::to_string(length_) +
                                        " bytes: " + std::strerror(errno));
    windows_.resize(opt_.slots);
    registrations_.resize(opt_.slots);
    busy_.assign(opt_.slots, false);
    if (opt_.channel == CHANNEL_RDMA_V1_INVALIDATE) {
        // whether the device has windows shows when one is asked for
        ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
        if (mw)
            windows_[0].push_back(mw);
        else if (errno == EOPNOTSUPP)
            lending_ = Lending::registrations;
        else
            return io_error(Errc::rdma, std::string("ibv_alloc_mw (type 2): ") +
                                            std::strerror(errno));
    }
    return {};
}

RdmaIo::~RdmaIo()
{
    // windows first: an MR with windows bound to it cannot go
    for (auto &slot : windows_)
        for (ibv_mw *mw : slot)
            if (mw)
                ibv_dealloc_mw(mw);
    for (uint32_t slot = 0; slot < registrations_.size(); slot++)
        release_registrations(slot);
    if (mr_)
        ibv_dereg_mr(mr_);
    if (mem_)
        munmap(mem_, length_);
    client_.release_domain();
}

bool RdmaIo::invalidation_expected() const
{
    return opt_.channel == CHANNEL_RDMA_V1_INVALIDATE &&
           channel_allowed(opt_.channel, opt_.dialect);
}

std::optional<uint32_t> RdmaIo::free_slot() const
{
    for (uint32_t i = 0; i < busy_.size(); i++)
        if (!busy_[i])
            return i;
    return std::nullopt;
}

std::vector<RdmaIo::Region> RdmaIo::layout(uint32_t size) const
{
    uint32_t described = size + opt_.descriptor_extra;
    uint32_t n = std::min(opt_.descriptors, std::max<uint32_t>(described, 1));
    std::vector<Region> out;
    size_t pos = guard_size;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t len = described / n + (i == n - 1 ? described % n : 0);
        pos = align_up(pos, 64);
        out.push_back({pos, len});
        pos += len + guard_size;
    }
    return out;
}

std::vector<std::span<uint8_t>> RdmaIo::data(uint32_t slot, uint32_t size)
{
    std::vector<std::span<uint8_t>> out;
    uint32_t left = size;
    for (const Region &r : layout(size)) {
        uint32_t n = std::min(left, r.length);
        out.emplace_back(slot_base(slot) + r.offset, n);
        left -= n;
    }
    return out;
}

void RdmaIo::poison(uint32_t slot, uint32_t size)
{
    std::memset(slot_base(slot), guard_byte, stride_);
    for (const Region &r : layout(size))
        std::memset(slot_base(slot) + r.offset, poison_byte, r.length);
}

Status RdmaIo::check_untouched(uint32_t slot, uint32_t size) const
{
    const uint8_t *base = slot_base(slot);
    auto first_not = [](const uint8_t *p, size_t n,
                        uint8_t v) -> std::optional<size_t> {
        for (size_t i = 0; i < n; i++)
            if (p[i] != v)
                return i;
        return std::nullopt;
    };
    size_t pos = 0;
    uint32_t left = size;
    auto regions = layout(size);
    for (size_t i = 0; i <= regions.size(); i++) {
        size_t end = i < regions.size() ? regions[i].offset : stride_;
        if (auto bad = first_not(base + pos, end - pos, guard_byte))
            return io_error(
                Errc::mismatch,
                "the server wrote outside the descriptors: byte " +
                    std::to_string(pos + *bad) + " of the slot, " +
                    (i < regions.size()
                         ? "before descriptor " + std::to_string(i)
                         : std::string("after the last descriptor")));
        if (i == regions.size())
            break;
        uint32_t n = std::min(left, regions[i].length);
        left -= n;
        if (auto bad = first_not(base + regions[i].offset + n,
                                 regions[i].length - n, poison_byte))
            return io_error(Errc::mismatch,
                            "the server wrote past the data: byte " +
                                std::to_string(n + *bad) + " of descriptor " +
                                std::to_string(i) + " (" +
                                std::to_string(regions[i].length) + " bytes, " +
                                std::to_string(n) + " of data)");
        pos = regions[i].offset + regions[i].length;
    }
    return {};
}

Status RdmaIo::bind(uint32_t slot, const std::vector<Region> &regions,
                    std::vector<uint32_t> &tokens)
{
    auto &windows = windows_[slot];
    ibv_pd *pd = client_.protection_domain();
    if (windows.size() < regions.size())
        windows.resize(regions.size());
    for (size_t i = 0; i < regions.size(); i++) {
        ibv_mw *&mw = windows[i];
        if (!mw) {
            mw = pd ? ibv_alloc_mw(pd, IBV_MW_TYPE_2) : nullptr;
            if (!mw)
                return io_error(Errc::rdma,
                                std::string("ibv_alloc_mw (type 2): ") +
                                    std::strerror(errno));
        }
        // a new key per binding: a stale descriptor cannot reach the
        // memory again
        uint32_t rkey = ibv_inc_rkey(mw->rkey);
        ibv_send_wr wr{};
        wr.wr_id = slot;
        wr.opcode = IBV_WR_BIND_MW;
        wr.bind_mw.mw = mw;
        wr.bind_mw.rkey = rkey;
        wr.bind_mw.bind_info.mr = mr_;
        wr.bind_mw.bind_info.addr =
            reinterpret_cast<uintptr_t>(slot_base(slot) + regions[i].offset);
        wr.bind_mw.bind_info.length = regions[i].length;
        wr.bind_mw.bind_info.mw_access_flags =
            IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
        if (auto st = client_.post_memory_op(wr); !st)
            return st;
        // the provider names the window by mw->rkey in the next binding
        mw->rkey = rkey;
        tokens.push_back(rkey);
    }
    return {};
}

Status RdmaIo::register_regions(uint32_t slot,
                                const std::vector<Region> &regions,
                                std::vector<uint32_t> &tokens)
{
    release_registrations(slot);
    ibv_pd *pd = client_.protection_domain();
    for (const Region &r : regions) {
        // a zero-length registration is refused; the descriptor still
        // says 0
        ibv_mr *mr =
            pd ? ibv_reg_mr(pd, slot_base(slot) + r.offset,
                            std::max<uint32_t>(r.length, 1),
                            IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
                                IBV_ACCESS_REMOTE_WRITE)
               : nullptr;
        if (!mr)
            return io_error(Errc::rdma, "ibv_reg_mr of a descriptor's " +
                                            std::to_string(r.length) +
                                            " bytes: " + std::strerror(errno));
        registrations_[slot].push_back(mr);
        tokens.push_back(mr->rkey);
    }
    return {};
}

void RdmaIo::release_registrations(uint32_t slot)
{
    for (ibv_mr *mr : registrations_[slot])
        ibv_dereg_mr(mr);
    registrations_[slot].clear();
}

Status RdmaIo::check_transfer(uint32_t slot, uint32_t size) const
{
    if (slot >= busy_.size() || busy_[slot])
        return io_error(Errc::invalid_argument,
                        "slot " + std::to_string(slot) + " is not free");
    if (size > opt_.max_size)
        return io_error(Errc::invalid_argument,
                        "a transfer of " + std::to_string(size) +
                            " bytes is above the " +
                            std::to_string(opt_.max_size) + " registered");
    return {};
}

Result<std::vector<uint8_t>> RdmaIo::descriptors(uint32_t slot, uint32_t size,
                                                 std::vector<uint32_t> &tokens)
{
    auto regions = layout(size);
    if (opt_.channel == CHANNEL_RDMA_V1_INVALIDATE) {
        auto st = lending_ == Lending::windows
                      ? bind(slot, regions, tokens)
                      : register_regions(slot, regions, tokens);
        if (!st)
            return st.error();
    }
    else {
        tokens.assign(regions.size(), mr_->rkey);
    }
    std::vector<uint8_t> descs(regions.size() * SMBD_BUFFER_DESC_SIZE);
    for (size_t i = 0; i < regions.size(); i++) {
        smbd_buffer_desc d{
            reinterpret_cast<uintptr_t>(slot_base(slot) + regions[i].offset),
            tokens[i], regions[i].length};
        smbd_buffer_desc_put(descs.data(), uint32_t(i), &d);
    }
    return descs;
}

Result<std::vector<uint8_t>> RdmaIo::describe(uint32_t slot, uint32_t size)
{
    if (auto st = check_transfer(slot, size); !st)
        return st.error();
    std::vector<uint32_t> tokens;
    return descriptors(slot, size, tokens);
}

Status RdmaIo::start(uint32_t slot, bool write, uint64_t offset, uint32_t size)
{
    if (auto st = check_transfer(slot, size); !st)
        return st;
    std::vector<uint32_t> tokens;
    auto described = descriptors(slot, size, tokens);
    if (!described)
        return described.error();
    std::vector<uint8_t> &descs = *described;
    bool lent = opt_.channel == CHANNEL_RDMA_V1_INVALIDATE;

    // the charge, asked back
    uint16_t charge = smb2_credit_charge(size);
    smb2_hdr h{};
    h.credit_charge = charge;
    h.credits = charge;
    h.message_id = next_message_id_;
    h.process_id = 0xFEFF;
    h.tree_id = 1;
    h.session_id = client_.session_id();
    std::vector<uint8_t> pdu;
    if (write) {
        WriteRequest r;
        r.hdr = h;
        r.offset = offset;
        r.file_id = opt_.file_id;
        r.channel = opt_.channel;
        r.remaining_bytes = size;
        r.channel_info = descs;
        pdu = build_write_request(r);
    }
    else {
        ReadRequest r;
        r.hdr = h;
        r.length = size;
        r.offset = offset;
        r.file_id = opt_.file_id;
        r.channel = opt_.channel;
        r.channel_info = descs;
        pdu = build_read_request(r);
    }
    uint64_t message_id = next_message_id_;
    if (path_) {
        auto sent = path_->send_request(pdu);
        if (!sent)
            return sent.error();
        message_id = *sent;
    }
    else {
        if (auto st = client_.send_pdu(pdu); !st)
            return st;
        next_message_id_ += charge;
    }
    busy_[slot] = true;
    in_flight_[message_id] = {slot, write, offset, size, std::move(tokens),
                              lent};
    return {};
}

Result<IoCompletion> RdmaIo::finish(std::chrono::milliseconds timeout)
{
    auto got = path_ ? path_->next_response(timeout) : client_.recv(timeout);
    if (!got)
        return got.error();
    const std::vector<uint8_t> &pdu = got->bytes;
    uint16_t command =
        pdu.size() >= SMB2_HDR_SIZE ? smbd_get_le16(&pdu[12]) : 0;
    IoCompletion c;
    uint64_t message_id = 0;
    Rule rule;
    if (command == SMB2_READ) {
        ReadResponse r;
        rule = parse_read_response(pdu, r);
        c.status = r.hdr.status;
        c.bytes = r.data_remaining;
        message_id = r.hdr.message_id;
        if (rule == Rule::ok && r.data_length != 0)
            return io_error(Errc::protocol,
                            "a READ over RDMA was answered with " +
                                std::to_string(r.data_length) +
                                " bytes inline (DataLength must be 0)");
    }
    else if (command == SMB2_WRITE) {
        WriteResponse r;
        rule = parse_write_response(pdu, r);
        c.status = r.hdr.status;
        c.bytes = r.count;
        message_id = r.hdr.message_id;
    }
    else {
        return io_error(Errc::protocol,
                        "expected a READ or WRITE response, got a " +
                            std::to_string(pdu.size()) +
                            "-byte PDU of command " + std::to_string(command));
    }
    if (rule != Rule::ok)
        return io_error(Errc::protocol,
                        std::string("invalid ") +
                            (command == SMB2_READ ? "READ" : "WRITE") +
                            " response: " + rule_text(rule));
    auto it = in_flight_.find(message_id);
    if (it == in_flight_.end() || it->second.write != (command == SMB2_WRITE))
        return io_error(Errc::protocol,
                        "a response to MessageId " +
                            std::to_string(message_id) + ", which is no " +
                            (command == SMB2_READ ? "READ" : "WRITE") +
                            " in flight");
    Pending p = std::move(it->second);
    in_flight_.erase(it);
    c.slot = p.slot;
    c.write = p.write;
    c.offset = p.offset;
    c.size = p.size;
    c.first_token = p.tokens.front();
    c.invalidated = got->invalidated_rkey;

    // A window the server did not invalidate is replaced rather than
    // invalidated locally: Linux 6.1's rxe oopses on a local invalidate of a
    // window that is already free (rxe_do_invalidate_mw puts a NULL QP), so
    // a wrong guess would take the kernel down; deallocating is safe in
    // either state.
    if (p.lent && lending_ == Lending::windows)
        for (size_t i = 0; i < p.tokens.size(); i++) {
            ibv_mw *&mw = windows_[p.slot][i];
            if (mw && c.invalidated != mw->rkey) {
                ibv_dealloc_mw(mw);
                mw = nullptr;
            }
        }
    busy_[p.slot] = false;

    std::string what = std::string(p.write ? "WRITE" : "READ") + " MessageId " +
                       std::to_string(message_id);
    if (invalidation_expected()) {
        if (!c.invalidated && invalidation_reported())
            return io_error(Errc::protocol,
                            "the response to " + what +
                                " (RDMA_V1_INVALIDATE) came without a send "
                                "with invalidate");
        if (c.invalidated && *c.invalidated != c.first_token)
            return io_error(Errc::protocol,
                            "the response to " + what + " invalidated rkey " +
                                hex32(*c.invalidated) +
                                ", not the first descriptor's token " +
                                hex32(c.first_token));
    }
    else if (c.invalidated) {
        return io_error(Errc::protocol, "the response to " + what +
                                            " invalidated rkey " +
                                            hex32(*c.invalidated) +
                                            " though its channel asks "
                                            "for no invalidation");
    }
    return c;
}

} // namespace smbd::client
