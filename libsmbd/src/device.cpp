// SPDX-License-Identifier: LGPL-3.0-or-later
// /dev/smbd through raw ioctls; see device.h.
#include "device.h"

#include "buffer_desc.h"
#include "smb2.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <poll.h>
#include <random>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <utility>

namespace smbd::device {

namespace {

// a GUID for a policy that names none: unique, as a GUID must be
void random_bytes(__u8 *out, size_t n)
{
    std::random_device rd;
    for (size_t i = 0; i < n; i++)
        out[i] = static_cast<__u8>(rd());
}

template <size_t N>
uint32_t copy_ids(const std::vector<uint16_t> &ids, __u16 (&out)[N])
{
    std::copy_n(ids.begin(), std::min(ids.size(), N), out);
    return static_cast<uint32_t>(ids.size());
}

} // namespace

smbd_set_params Params::to_uapi() const
{
    smbd_set_params p{};
    p.size = sizeof(p);
#define SMBD_PARAMS_COPY(name) p.name = name;
    SMBD_POLICY_U32_FIELDS(SMBD_PARAMS_COPY)
#undef SMBD_PARAMS_COPY
    std::copy(server_guid.begin(), server_guid.end(), p.server_guid);
    if (std::all_of(server_guid.begin(), server_guid.end(),
                    [](uint8_t b) { return b == 0; }))
        random_bytes(p.server_guid, sizeof(p.server_guid));
    p.cipher_count = copy_ids(ciphers, p.ciphers);
    p.signing_algorithm_count =
        copy_ids(signing_algorithms, p.signing_algorithms);
    p.sec_blob_len = static_cast<uint32_t>(sec_blob.size());
    p.sec_blob_ptr = reinterpret_cast<uintptr_t>(sec_blob.data());
    return p;
}

Params default_params()
{
    Params p{};
    p.receive_credit_max = 255;
    p.send_credit_target = 255;
    p.max_send_size = 1364;
    p.max_receive_size = 1364;
    p.max_fragmented_size = 1u << 20;
    p.max_read_write_size = 8u << 20;
    p.keepalive_interval_ms = 120000;
    p.keepalive_timeout_ms = 5000;
    p.negotiate_timeout_ms = 5000;
    // a client prepares its session between the SMB2 NEGOTIATE and the
    // SESSION_SETUP: seconds on a loaded machine
    p.setup_timeout_ms = 30000;
    // a client grants once its reader has consumed what it received: the
    // Linux client with signing, on a loaded machine, needs more than 5 s
    p.credit_timeout_ms = 30000;
    p.accept_timeout_ms = 5000;
    p.capabilities = SMB2_GLOBAL_CAP_DFS | SMB2_GLOBAL_CAP_LEASING |
                     SMB2_GLOBAL_CAP_LARGE_MTU | SMB2_GLOBAL_CAP_MULTI_CHANNEL |
                     SMB2_GLOBAL_CAP_ENCRYPTION;
    p.security_mode = SMB2_NEGOTIATE_SIGNING_ENABLED;
    p.min_dialect = SMB2_DIALECT_300;
    p.max_dialect = SMB2_DIALECT_311;
    p.max_transact_size = 8u << 20;
    p.max_read_size = 8u << 20;
    p.max_write_size = 8u << 20;
    p.ciphers = {SMB2_ENCRYPTION_AES128_GCM, SMB2_ENCRYPTION_AES128_CCM,
                 SMB2_ENCRYPTION_AES256_GCM, SMB2_ENCRYPTION_AES256_CCM};
    p.signing_algorithms = {SMB2_SIGNING_AES128_GMAC, SMB2_SIGNING_AES128_CMAC,
                            SMB2_SIGNING_HMAC_SHA256};
    // negTokenInit with the SPNEGO OID and an NTLMSSP mechType
    p.sec_blob = {0x60, 0x1c, 0x06, 0x06, 0x2b, 0x06, 0x01, 0x05, 0x05, 0x02,
                  0xa0, 0x12, 0x30, 0x10, 0xa0, 0x0e, 0x30, 0x0c, 0x06, 0x0a,
                  0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x02, 0x0a};
    return p;
}

std::span<const uint8_t> Event::negotiate_request() const
{
    const auto &c = raw.u.new_channel;
    if (uint64_t{c.negotiate_req_len} + c.negotiate_resp_len +
            c.session_setup_len !=
        data.size())
        return {};
    return std::span(data).subspan(0, c.negotiate_req_len);
}

std::span<const uint8_t> Event::negotiate_response() const
{
    const auto &c = raw.u.new_channel;
    if (negotiate_request().size() != c.negotiate_req_len)
        return {};
    return std::span(data).subspan(c.negotiate_req_len, c.negotiate_resp_len);
}

std::span<const uint8_t> Event::session_setup() const
{
    const auto &c = raw.u.new_channel;
    if (negotiate_request().size() != c.negotiate_req_len)
        return {};
    return std::span(data).subspan(c.negotiate_req_len + c.negotiate_resp_len,
                                   c.session_setup_len);
}

Device::Device(int open_flags, const char *path)
{
    fd_ = ::open(path, O_RDWR | O_CLOEXEC | open_flags);
    open_errno_ = fd_ < 0 ? errno : 0;
}

Device::~Device() { close(); }

Device::Device(Device &&other) noexcept
    : fd_(std::exchange(other.fd_, -1)), open_errno_(other.open_errno_)
{
}

Device &Device::operator=(Device &&other) noexcept
{
    if (this != &other) {
        close();
        fd_ = std::exchange(other.fd_, -1);
        open_errno_ = other.open_errno_;
    }
    return *this;
}

void Device::close()
{
    if (fd_ >= 0)
        ::close(fd_);
    fd_ = -1;
}

int Device::raw(unsigned long cmd, void *arg)
{
    return ::ioctl(fd_, cmd, arg) == 0 ? 0 : errno;
}

int Device::info(smbd_info &out)
{
    out = {};
    out.size = sizeof(out);
    return raw(SMBD_IOC_GET_INFO, &out);
}

int Device::set_params(const Params &p, uint16_t *busy_port)
{
    smbd_set_params sp = p.to_uapi();
    int err = raw(SMBD_IOC_SET_PARAMS, &sp);
    if (busy_port)
        *busy_port = err == EADDRINUSE ? uint16_t(sp.out_busy_port) : 0;
    return err;
}

int Device::listen()
{
    smbd_listen l{};
    l.size = sizeof(l);
    return raw(SMBD_IOC_LISTEN, &l);
}

int Device::accept(std::span<const uint8_t, SMBD_TOKEN_SIZE> token,
                   uint64_t &conn_id)
{
    smbd_accept a{};
    a.size = sizeof(a);
    std::copy(token.begin(), token.end(), a.token);
    int err = raw(SMBD_IOC_ACCEPT, &a);
    if (!err)
        conn_id = a.out_conn_id;
    return err;
}

int Device::register_session(uint64_t session_id)
{
    smbd_session s{};
    s.size = sizeof(s);
    s.session_id = session_id;
    return raw(SMBD_IOC_REGISTER_SESSION, &s);
}

int Device::unregister_session(uint64_t session_id)
{
    smbd_session s{};
    s.size = sizeof(s);
    s.session_id = session_id;
    return raw(SMBD_IOC_UNREGISTER_SESSION, &s);
}

int Device::get_mem_params(smbd_mem_params &out, uint32_t buffers)
{
    out = {};
    out.size = sizeof(out);
    out.buffer_count = buffers;
    return raw(SMBD_IOC_GET_MEM_PARAMS, &out);
}

int Device::get_events_raw(std::span<smbd_event> events,
                           std::span<uint8_t> data, uint32_t &count,
                           uint32_t &data_used)
{
    smbd_get_events g{};
    g.size = sizeof(g);
    g.max_events = static_cast<uint32_t>(events.size());
    g.event_size = sizeof(smbd_event);
    g.events_ptr = reinterpret_cast<uintptr_t>(events.data());
    g.data_ptr = reinterpret_cast<uintptr_t>(data.data());
    g.data_len =
        static_cast<uint32_t>(std::min<size_t>(data.size(), UINT32_MAX));
    int err = raw(SMBD_IOC_GET_EVENTS, &g);
    // a kernel that reports more than it was given is a bug the caller
    // should see as EPROTO, not a crash
    if (!err && (g.out_count > g.max_events || g.out_data_used > g.data_len))
        err = EPROTO;
    count = err ? 0 : g.out_count;
    data_used = !err || err == EMSGSIZE ? g.out_data_used : 0;
    return err;
}

int Device::get_events(std::vector<Event> &out, uint32_t max_events,
                       uint32_t data_len, uint32_t *data_needed)
{
    std::vector<smbd_event> events(max_events);
    // not value-initialised: the kernel writes what it reports as used
    std::unique_ptr<uint8_t[]> data(new uint8_t[data_len]);
    uint32_t count = 0, used = 0;
    int err =
        get_events_raw(events, std::span(data.get(), data_len), count, used);
    if (err == EMSGSIZE && data_needed)
        *data_needed = used;
    if (err)
        return err;
    for (uint32_t i = 0; i < count; i++) {
        const smbd_event &e = events[i];
        if (e.data_offset > used || e.data_len > used - e.data_offset)
            return EPROTO;
        out.push_back(
            {e, std::vector<uint8_t>(data.get() + e.data_offset,
                                     data.get() + e.data_offset + e.data_len)});
    }
    return 0;
}

int Device::rdma_rw_raw(std::span<const smbd_rw_op> ops, uint32_t &done)
{
    smbd_rdma_rw rw{};
    rw.size = sizeof(rw);
    rw.count = static_cast<uint32_t>(ops.size());
    rw.op_size = sizeof(smbd_rw_op);
    rw.ops_ptr = reinterpret_cast<uintptr_t>(ops.data());
    int err = raw(SMBD_IOC_RDMA_RW, &rw);
    done = err ? 0 : rw.out_done;
    return err;
}

int Device::rdma_rw(std::span<const RwOp> ops, uint32_t *done)
{
    std::vector<smbd_rw_op> raw_ops(ops.size());
    for (size_t i = 0; i < ops.size(); i++) {
        const RwOp &o = ops[i];
        smbd_rw_op &r = raw_ops[i];
        r.conn_id = o.conn_id;
        r.user_data = o.user_data;
        r.slices_ptr = reinterpret_cast<uintptr_t>(o.slices.data());
        r.slice_count = static_cast<uint32_t>(o.slices.size());
        r.descs_ptr = reinterpret_cast<uintptr_t>(o.descriptors.data());
        r.desc_count =
            static_cast<uint32_t>(o.descriptors.size() / SMBD_BUFFER_DESC_SIZE);
        r.direction = o.direction;
    }
    uint32_t n = 0;
    int err = rdma_rw_raw(raw_ops, n);
    if (done)
        *done = n;
    return err;
}

int Device::send_pdu_raw(std::span<const smbd_send_entry> entries,
                         uint32_t &done)
{
    smbd_send_pdu s{};
    s.size = sizeof(s);
    s.count = static_cast<uint32_t>(entries.size());
    s.entry_size = sizeof(smbd_send_entry);
    s.entries_ptr = reinterpret_cast<uintptr_t>(entries.data());
    int err = raw(SMBD_IOC_SEND_PDU, &s);
    done = err ? 0 : s.out_done;
    return err;
}

int Device::send_pdu(std::span<const SendEntry> entries, uint32_t *done)
{
    std::vector<std::vector<smbd_iovec>> iovs(entries.size());
    std::vector<smbd_send_entry> raw_entries(entries.size());
    for (size_t i = 0; i < entries.size(); i++) {
        const SendEntry &e = entries[i];
        for (auto piece : e.iov)
            iovs[i].push_back(
                {reinterpret_cast<uintptr_t>(piece.data()), piece.size()});
        smbd_send_entry &r = raw_entries[i];
        r.conn_id = e.conn_id;
        r.user_data = e.user_data;
        r.iov_ptr = reinterpret_cast<uintptr_t>(iovs[i].data());
        r.iov_count = static_cast<uint32_t>(iovs[i].size());
        r.flags = e.flags;
        r.invalidate_token = e.invalidate_token;
    }
    uint32_t n = 0;
    int err = send_pdu_raw(raw_entries, n);
    if (done)
        *done = n;
    return err;
}

int Device::send_pdu(uint64_t conn_id, std::span<const uint8_t> pdu)
{
    SendEntry e;
    e.conn_id = conn_id;
    e.iov.push_back(pdu);
    uint32_t done = 0;
    int err = send_pdu(std::span(&e, 1), &done);
    // a batch of one either fails or is accepted whole
    return err ? err : done == 1 ? 0 : EPROTO;
}

int Device::disconnect(uint64_t conn_id)
{
    smbd_disconnect d{};
    d.size = sizeof(d);
    d.conn_id = conn_id;
    return raw(SMBD_IOC_DISCONNECT, &d);
}

int Device::conn_stats(smbd_conn_stats &st)
{
    st.size = sizeof(st);
    st.flags = 0;
    return raw(SMBD_IOC_CONN_STATS, &st);
}

int Device::poll_in(int timeout_ms)
{
    pollfd p{fd_, POLLIN, 0};
    int n = ::poll(&p, 1, timeout_ms);
    if (n < 0)
        return -errno;
    return n ? p.revents : 0;
}

PoolMapping::~PoolMapping() { unmap(); }

PoolMapping::PoolMapping(PoolMapping &&other) noexcept
    : base_(std::exchange(other.base_, nullptr)), length_(other.length_),
      count_(other.count_), buffer_size_(other.buffer_size_)
{
}

PoolMapping &PoolMapping::operator=(PoolMapping &&other) noexcept
{
    if (this != &other) {
        unmap();
        base_ = std::exchange(other.base_, nullptr);
        length_ = other.length_;
        count_ = other.count_;
        buffer_size_ = other.buffer_size_;
    }
    return *this;
}

int PoolMapping::map(Device &dev, uint32_t buffers)
{
    unmap();
    smbd_mem_params mem;
    if (int err = dev.get_mem_params(mem, buffers))
        return err;
    void *p =
        ::mmap(nullptr, mem.out_mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED,
               dev.fd(), static_cast<off_t>(mem.out_mmap_offset));
    if (p == MAP_FAILED)
        return errno;
    base_ = static_cast<uint8_t *>(p);
    length_ = mem.out_mmap_size;
    count_ = mem.out_buffer_count;
    buffer_size_ = mem.out_buffer_size;
    return 0;
}

void PoolMapping::unmap()
{
    if (base_)
        ::munmap(base_, length_);
    base_ = nullptr;
}

std::vector<std::string> counter_names()
{
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto &entry :
         std::filesystem::directory_iterator(counters_dir, ec))
        names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

std::optional<uint64_t> read_counter(std::string_view name)
{
    std::ifstream f(std::string(counters_dir) + "/" + std::string(name));
    std::string text;
    if (!f || !std::getline(f, text))
        return std::nullopt;
    uint64_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty())
        return std::nullopt;
    return v;
}

const char *event_name(uint32_t type)
{
    switch (type) {
    case SMBD_EVENT_NEW_CONNECTION:
        return "NEW_CONNECTION";
    case SMBD_EVENT_NEW_CHANNEL:
        return "NEW_CHANNEL";
    case SMBD_EVENT_PDU_RECEIVED:
        return "PDU_RECEIVED";
    case SMBD_EVENT_SEND_DONE:
        return "SEND_DONE";
    case SMBD_EVENT_RDMA_DONE:
        return "RDMA_DONE";
    case SMBD_EVENT_DISCONNECTED:
        return "DISCONNECTED";
    case SMBD_EVENT_OVERFLOW:
        return "OVERFLOW";
    case SMBD_EVENT_SEND_ROOM:
        return "SEND_ROOM";
    }
    return "unknown";
}

const char *reason_name(uint32_t reason)
{
    switch (reason) {
#define SMBD_REASON_CASE(name, value, text)                                    \
    case value:                                                                \
        return #text;
        SMBD_REASONS(SMBD_REASON_CASE)
#undef SMBD_REASON_CASE
    }
    return "unknown";
}

} // namespace smbd::device
