// SPDX-License-Identifier: LGPL-3.0-or-later
// A thin C++ wrapper of /dev/smbd with raw ioctls: the bottom of libsmbd,
// and what the guest tests use to assert the exact error the ABI documents.
// Every call returns 0 or the errno of the ioctl.
#ifndef LIBSMBD_DEVICE_H
#define LIBSMBD_DEVICE_H

#include <linux/smbd.h>

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace smbd::device {

// The policy's 32-bit fields, named alike in struct smbd_set_params (the
// kernel's), struct smbd_dev_policy (the C API's) and Params: the one list
// the conversions between them are generated from, so that none misses a
// field. The GUID, the algorithm lists and the blob differ in type and are
// converted by hand.
#define SMBD_POLICY_U32_FIELDS(X)                                              \
    X(receive_credit_max)                                                      \
    X(send_credit_target)                                                      \
    X(max_send_size)                                                           \
    X(max_receive_size)                                                        \
    X(max_fragmented_size)                                                     \
    X(max_read_write_size)                                                     \
    X(keepalive_interval_ms)                                                   \
    X(keepalive_timeout_ms)                                                    \
    X(negotiate_timeout_ms)                                                    \
    X(setup_timeout_ms)                                                        \
    X(credit_timeout_ms)                                                       \
    X(accept_timeout_ms)                                                       \
    X(capabilities)                                                            \
    X(security_mode)                                                           \
    X(min_dialect)                                                             \
    X(max_dialect)                                                             \
    X(max_transact_size)                                                       \
    X(max_read_size)                                                           \
    X(max_write_size)                                                          \
    X(policy_flags)

// What SET_PARAMS carries, in C++ types; to_uapi() builds the ioctl struct.
struct Params {
#define SMBD_PARAMS_FIELD(name) uint32_t name;
    SMBD_POLICY_U32_FIELDS(SMBD_PARAMS_FIELD)
#undef SMBD_PARAMS_FIELD
    // all zero: a random one at every to_uapi()
    std::array<uint8_t, SMBD_GUID_SIZE> server_guid;
    std::vector<uint16_t> ciphers;
    std::vector<uint16_t> signing_algorithms;
    std::vector<uint8_t> sec_blob;

    // The struct as the kernel reads it; sec_blob_ptr points into this
    // object, which must outlive the ioctl. More than SMBD_MAX_ALGORITHMS
    // ids are cut off but counted, so the kernel sees the bad count.
    smbd_set_params to_uapi() const;
};

// The values a Linux cifs client meets in practice and Samba would offer,
// with no ServerGuid (Samba gives its own).
Params default_params();

// One event of GET_EVENTS with its data copied out.
struct Event {
    smbd_event raw;
    std::vector<uint8_t> data;

    uint32_t type() const { return raw.type; }
    uint64_t conn_id() const { return raw.conn_id; }
    // NEW_CHANNEL: the three messages the driver delivers back to back;
    // empty spans when the lengths do not add up to the data.
    std::span<const uint8_t> negotiate_request() const;
    std::span<const uint8_t> negotiate_response() const;
    std::span<const uint8_t> session_setup() const;
};

// One PDU of SEND_PDU: its pieces are concatenated by the kernel.
struct SendEntry {
    uint64_t conn_id = 0;
    uint64_t user_data = 0;
    std::vector<std::span<const uint8_t>> iov;
    uint32_t flags = 0;
    uint32_t invalidate_token = 0;
};

// One operation of RDMA_RW: local pool slices against the peer's buffer
// descriptors, raw as the SMB2 READ/WRITE request carried them.
struct RwOp {
    uint64_t conn_id = 0;
    uint64_t user_data = 0;
    std::vector<smbd_slice> slices;
    std::span<const uint8_t> descriptors;
    uint32_t direction = 0; // SMBD_RW_*
};

class Device {
  public:
    struct Closed {};
    static constexpr Closed closed{};

    // Opens /dev/smbd (or @path); ok() tells whether it worked, error()
    // why not.
    explicit Device(int open_flags = 0,
                    const char *path = "/dev/" SMBD_DEVICE_NAME);
    explicit Device(Closed) {}
    ~Device();
    Device(Device &&other) noexcept;
    Device &operator=(Device &&other) noexcept;
    Device(const Device &) = delete;
    Device &operator=(const Device &) = delete;

    bool ok() const { return fd_ >= 0; }
    int error() const { return open_errno_; }
    int fd() const { return fd_; }
    void close();

    // Any command with any argument: what the validation tests use.
    int raw(unsigned long cmd, void *arg);

    int info(smbd_info &out);
    // @busy_port: on EADDRINUSE, the RDMA port another listener holds
    int set_params(const Params &p, uint16_t *busy_port = nullptr);
    int listen();
    int accept(std::span<const uint8_t, SMBD_TOKEN_SIZE> token,
               uint64_t &conn_id);
    int register_session(uint64_t session_id);
    int unregister_session(uint64_t session_id);
    // The pool's geometry; the first call on a file allocates the pool,
    // of @buffers buffers (0: the kernel's default).
    int get_mem_params(smbd_mem_params &out, uint32_t buffers = 0);
    // Appends up to max_events events; data_len is the data area offered.
    // With EMSGSIZE, *data_needed (if given) is what the first event needs.
    int get_events(std::vector<Event> &out, uint32_t max_events = 64,
                   uint32_t data_len = 1u << 20,
                   uint32_t *data_needed = nullptr);
    // done: operations started (out_done); each ends with an RDMA_DONE.
    int rdma_rw(std::span<const RwOp> ops, uint32_t *done = nullptr);
    // done: entries the kernel accepted (out_done).
    int send_pdu(std::span<const SendEntry> entries, uint32_t *done = nullptr);
    int send_pdu(uint64_t conn_id, std::span<const uint8_t> pdu);

    // The same three on the ABI's own arrays, in storage the caller keeps
    // (libsmbd's hot path allocates nothing): the one place their ioctl
    // structs are built. get_events_raw fills @events and @data; @count
    // and @data_used say how much (with EMSGSIZE, @data_used is what the
    // first event needs), and EPROTO means the kernel reported more than
    // it was given.
    int get_events_raw(std::span<smbd_event> events, std::span<uint8_t> data,
                       uint32_t &count, uint32_t &data_used);
    int rdma_rw_raw(std::span<const smbd_rw_op> ops, uint32_t &done);
    int send_pdu_raw(std::span<const smbd_send_entry> entries, uint32_t &done);
    int disconnect(uint64_t conn_id);
    // @st.conn_id in, the counters out
    int conn_stats(smbd_conn_stats &st);
    // poll() revents for POLLIN within timeout_ms, or -errno.
    int poll_in(int timeout_ms);

  private:
    int fd_ = -1;
    int open_errno_ = 0;
};

// A file's buffer pool mapped into this process (GET_MEM_PARAMS, then
// mmap of exactly what it reports); unmapped when it goes out of scope.
class PoolMapping {
  public:
    PoolMapping() = default;
    ~PoolMapping();
    PoolMapping(PoolMapping &&other) noexcept;
    PoolMapping &operator=(PoolMapping &&other) noexcept;
    PoolMapping(const PoolMapping &) = delete;
    PoolMapping &operator=(const PoolMapping &) = delete;

    // 0 or the errno of the ioctl or of mmap(); @buffers as for
    // Device::get_mem_params().
    int map(Device &dev, uint32_t buffers = 0);
    // Drops the mapping without munmap(): a forked child does not inherit
    // it (VM_DONTCOPY), and the range may hold something else there.
    void forget() { base_ = nullptr; }
    bool ok() const { return base_ != nullptr; }
    uint32_t buffer_count() const { return count_; }
    uint32_t buffer_size() const { return buffer_size_; }
    uint8_t *buffer(uint32_t i) const
    {
        return base_ + static_cast<size_t>(i) * buffer_size_;
    }

  private:
    void unmap();

    uint8_t *base_ = nullptr;
    size_t length_ = 0;
    uint32_t count_ = 0;
    uint32_t buffer_size_ = 0;
};

// Driver counters under /sys/class/misc/smbd/counters.
inline constexpr std::string_view counters_dir =
    "/sys/class/misc/" SMBD_DEVICE_NAME "/counters";
// Every counter the driver exports, by name (empty without the driver).
std::vector<std::string> counter_names();
// The value of one counter; nullopt if absent or not one decimal number.
std::optional<uint64_t> read_counter(std::string_view name);

const char *event_name(uint32_t type);
const char *reason_name(uint32_t reason);

} // namespace smbd::device

#endif // LIBSMBD_DEVICE_H
