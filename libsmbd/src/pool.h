// SPDX-License-Identifier: LGPL-3.0-or-later
// Which buffers of a handle's mapped pool are lent out. A transfer gets a
// contiguous run of whole buffers, so that smbd sees one flat range it can
// pread() into or pwrite() from; the kernel wants each RDMA slice inside one
// buffer, so the range is cut into one slice per buffer it touches.
#ifndef LIBSMBD_POOL_H
#define LIBSMBD_POOL_H

#include <linux/smbd.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace smbd::lib {

class Pool {
  public:
    Pool() = default;
    Pool(uint32_t count, uint32_t buffer_size);

    uint32_t count() const { return static_cast<uint32_t>(used_.size()); }
    uint32_t buffer_size() const { return buffer_size_; }
    uint32_t free() const { return free_; }
    // Buffers @bytes need (at least one; UINT32_MAX for more than that).
    uint32_t needed(size_t bytes) const;
    // The first of @n free adjacent buffers, now lent; nothing if no run of
    // @n is free.
    std::optional<uint32_t> take(uint32_t n);
    void give(uint32_t first, uint32_t n);
    // Appends to @out bytes [@offset, @offset + @length) of the run
    // starting at buffer @first, one slice per buffer.
    void slices(uint32_t first, size_t offset, size_t length,
                std::vector<smbd_slice> &out) const;

  private:
    std::vector<bool> used_;
    uint32_t buffer_size_ = 0;
    uint32_t free_ = 0;
};

} // namespace smbd::lib

#endif // LIBSMBD_POOL_H
