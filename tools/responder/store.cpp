// The sparse byte store; see store.h.
#include "store.h"

#include <algorithm>
#include <cstring>

namespace smbd::responder {

void Store::read(uint64_t offset, std::span<uint8_t> out) const
{
    while (!out.empty()) {
        uint64_t in_chunk = offset % chunk_size;
        size_t n = static_cast<size_t>(
            std::min<uint64_t>(out.size(), chunk_size - in_chunk));
        auto it = chunks_.find(offset / chunk_size);
        if (it == chunks_.end())
            std::memset(out.data(), 0, n);
        else
            std::memcpy(out.data(), it->second.get() + in_chunk, n);
        offset += n;
        out = out.subspan(n);
    }
}

void Store::write(uint64_t offset, std::span<const uint8_t> in)
{
    while (!in.empty()) {
        uint64_t in_chunk = offset % chunk_size;
        size_t n = static_cast<size_t>(
            std::min<uint64_t>(in.size(), chunk_size - in_chunk));
        Chunk &c = chunks_[offset / chunk_size];
        if (!c)
            c.reset(new uint8_t[chunk_size]());
        std::memcpy(c.get() + in_chunk, in.data(), n);
        offset += n;
        in = in.subspan(n);
    }
}

} // namespace smbd::responder
