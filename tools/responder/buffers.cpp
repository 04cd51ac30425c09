// The pool's free list; see buffers.h.
#include "buffers.h"

#include <algorithm>

namespace smbd::responder {

Buffers::Buffers(uint32_t count, uint32_t buffer_size)
    : count_(count), buffer_size_(buffer_size)
{
    // handed out from the back: buffer 0 first
    for (uint32_t i = count; i-- > 0;)
        free_.push_back(i);
}

uint32_t Buffers::needed(uint32_t bytes) const
{
    return std::max<uint32_t>(1, static_cast<uint32_t>(
                                     (uint64_t{bytes} + buffer_size_ - 1) /
                                     buffer_size_));
}

std::optional<std::vector<uint32_t>> Buffers::take(uint32_t bytes)
{
    uint32_t n = needed(bytes);
    if (n > free_.size())
        return std::nullopt;
    std::vector<uint32_t> out(free_.rbegin(), free_.rbegin() + n);
    free_.resize(free_.size() - n);
    return out;
}

void Buffers::give(const std::vector<uint32_t> &buffers)
{
    free_.insert(free_.end(), buffers.rbegin(), buffers.rend());
}

std::vector<smbd_slice> Buffers::slices(const std::vector<uint32_t> &buffers,
                                        uint32_t bytes) const
{
    std::vector<smbd_slice> out;
    for (uint32_t b : buffers) {
        if (bytes == 0)
            break;
        smbd_slice s{};
        s.buffer = b;
        s.length = std::min(bytes, buffer_size_);
        out.push_back(s);
        bytes -= s.length;
    }
    return out;
}

} // namespace smbd::responder
