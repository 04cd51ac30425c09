// Which buffers of the mapped pool are free. A transfer takes as many whole
// buffers as it needs (a 1 MiB buffer each, up to the max read/write size)
// and lays its bytes out across them in order, one slice per buffer.
#ifndef SMBD_TOOLS_RESPONDER_BUFFERS_H
#define SMBD_TOOLS_RESPONDER_BUFFERS_H

#include <linux/smbd.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace smbd::responder {

class Buffers {
public:
    Buffers(uint32_t count, uint32_t buffer_size);

    uint32_t count() const { return count_; }
    uint32_t buffer_size() const { return buffer_size_; }
    uint32_t free() const { return static_cast<uint32_t>(free_.size()); }
    // Buffers needed for @bytes (at least one).
    uint32_t needed(uint32_t bytes) const;
    // Buffers for @bytes, or nothing while too few are free.
    std::optional<std::vector<uint32_t>> take(uint32_t bytes);
    void give(const std::vector<uint32_t> &buffers);
    // @bytes laid out over @buffers: whole buffers, the last one partly.
    std::vector<smbd_slice> slices(const std::vector<uint32_t> &buffers,
                                   uint32_t bytes) const;

private:
    uint32_t count_;
    uint32_t buffer_size_;
    std::vector<uint32_t> free_;
};

} // namespace smbd::responder

#endif // SMBD_TOOLS_RESPONDER_BUFFERS_H
