// SPDX-License-Identifier: LGPL-3.0-or-later
// The library's C++ core: one open /dev/smbd with its pool, its lent
// memory and its unfinished RDMA operations. The C facade (facade.cpp) is a
// thin layer over it; every failure returns a std::error_code and leaves
// a message for a person in errmsg().
#ifndef LIBSMBD_HANDLE_H
#define LIBSMBD_HANDLE_H

#include "device.h"
#include "errors.h"
#include "events.h"
#include "pool.h"
#include <libsmbd.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <system_error>
#include <unordered_map>
#include <vector>

#include <sys/types.h>

namespace smbd::lib {
class Handle;
}

// Pool memory lent to one transfer: a contiguous run of buffers. It goes
// back to the pool once freed and no RDMA operation pins it. The C API's
// opaque struct smbd_dev_buf is this.
struct smbd_dev_buf {
    smbd::lib::Handle *owner = nullptr;
    uint32_t first = 0; // first buffer of the run
    uint32_t buffers = 0;
    size_t len = 0;
    uint8_t *data = nullptr;
    uint32_t pins = 0; // RDMA operations not yet reported done
    bool freed = false;
};

namespace smbd::lib {

using Lease = smbd_dev_buf;

struct OpenOptions {
    std::string path = "/dev/" SMBD_DEVICE_NAME;
    uint32_t abi_version = SMBD_ABI_VERSION;
    uint64_t required_features = 0;
};

class Handle {
  public:
    // On failure @out stays empty and @msg says why.
    static std::error_code open(const OpenOptions &opts,
                                std::unique_ptr<Handle> &out, std::string &msg);
    ~Handle();
    Handle(const Handle &) = delete;
    Handle &operator=(const Handle &) = delete;

    const std::string &errmsg() const { return msg_; }
    int fd() const { return dev_.fd(); }
    const smbd_info &info() const { return info_; }
    // Buffers the pool has, or will have when first mapped.
    uint32_t pool_buffers() const { return pool_buffers_; }
    std::error_code set_pool_buffers(uint32_t buffers);

    std::error_code set_policy(const device::Params &params);
    std::error_code listen();
    std::error_code accept(const uint8_t *token, uint64_t &conn_id);
    std::error_code register_session(uint64_t session_id);
    std::error_code unregister_session(uint64_t session_id);
    std::error_code disconnect(uint64_t conn_id);
    std::error_code conn_stats(uint64_t conn_id, smbd_conn_stats &out);

    // What is queued now, decoded into @batch.events (empty: nothing).
    std::error_code fetch(EventBatch &batch);
    std::error_code send(std::span<const smbd_dev_pdu> pdus, size_t &sent);

    std::error_code alloc(size_t len, Lease *&out);
    void release(Lease *lease);
    std::error_code descs_check(std::span<const uint8_t> descs,
                                uint64_t &total);
    // @replies: empty, or one per op (nullptr: none)
    std::error_code rdma_start(std::span<const smbd_dev_rdma> ops,
                               std::span<const smbd_dev_pdu *const> replies,
                               size_t &started);

  private:
    struct InFlight {
        uint64_t user_data;
        Lease *lease;
    };

    Handle() = default;
    std::error_code fail(Step step, int err);
    std::error_code fail(Step step, int err, const std::string &detail);
    std::error_code map_pool();
    void unpin(Lease *lease);
    std::error_code check_rdma(const smbd_dev_rdma &op,
                               const smbd_dev_pdu *reply);

    device::Device dev_{device::Device::closed};
    device::PoolMapping map_;
    Pool pool_;
    smbd_info info_{};
    uint32_t pool_buffers_ = 0;
    pid_t opener_ = 0;
    std::unordered_map<Lease *, std::unique_ptr<Lease>> leases_;
    // by the user_data the kernel sees, which is this library's
    std::unordered_map<uint64_t, InFlight> in_flight_;
    uint64_t next_op_ = 1;
    // reused by send() and rdma_start(), the hot path
    std::vector<smbd_send_entry> send_entries_;
    std::vector<smbd_iovec> send_iovs_;
    std::vector<smbd_rw_op> rw_ops_;
    std::vector<smbd_slice> rw_slices_;
    std::vector<uint64_t> rw_ids_;
    std::string msg_;
};

} // namespace smbd::lib

#endif // LIBSMBD_HANDLE_H
