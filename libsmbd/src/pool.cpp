// SPDX-License-Identifier: LGPL-3.0-or-later
// Lending pool buffers in contiguous runs; see pool.h.
#include "pool.h"

#include <algorithm>

namespace smbd::lib {

Pool::Pool(uint32_t count, uint32_t buffer_size)
    : used_(count, false), buffer_size_(buffer_size), free_(count)
{
}

uint32_t Pool::needed(size_t bytes) const
{
    if (!buffer_size_)
        return 0;
    // no rounding up by addition: @bytes may be near SIZE_MAX
    size_t n = bytes / buffer_size_ + (bytes % buffer_size_ != 0);
    return static_cast<uint32_t>(std::clamp<size_t>(n, 1, UINT32_MAX));
}

std::optional<uint32_t> Pool::take(uint32_t n)
{
    if (!n || n > free_)
        return std::nullopt;
    // first fit: transfers are short-lived, so runs free up in order
    uint32_t run = 0;
    for (uint32_t i = 0; i < count(); i++) {
        run = used_[i] ? 0 : run + 1;
        if (run == n) {
            uint32_t first = i + 1 - n;
            std::fill_n(used_.begin() + first, n, true);
            free_ -= n;
            return first;
        }
    }
    return std::nullopt;
}

void Pool::give(uint32_t first, uint32_t n)
{
    for (uint32_t i = first; i < first + n && i < count(); i++) {
        if (used_[i])
            free_++;
        used_[i] = false;
    }
}

void Pool::slices(uint32_t first, size_t offset, size_t length,
                  std::vector<smbd_slice> &out) const
{
    while (length) {
        smbd_slice s{};
        s.buffer = first + static_cast<uint32_t>(offset / buffer_size_);
        s.offset = static_cast<uint32_t>(offset % buffer_size_);
        s.length = static_cast<uint32_t>(
            std::min<size_t>(length, buffer_size_ - s.offset));
        out.push_back(s);
        offset += s.length;
        length -= s.length;
    }
}

} // namespace smbd::lib
