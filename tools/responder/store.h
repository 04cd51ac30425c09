// The responder's file: one byte store of a fixed size, zero where never
// written, kept in 1 MiB chunks allocated on first write so that a large
// file costs only what the tests touch.
#ifndef SMBD_TOOLS_RESPONDER_STORE_H
#define SMBD_TOOLS_RESPONDER_STORE_H

#include <cstdint>
#include <map>
#include <memory>
#include <span>

namespace smbd::responder {

class Store {
  public:
    explicit Store(uint64_t size) : size_(size) {}

    uint64_t size() const { return size_; }
    // [offset, offset + out.size()) must lie inside the store.
    void read(uint64_t offset, std::span<uint8_t> out) const;
    void write(uint64_t offset, std::span<const uint8_t> in);

  private:
    static constexpr uint64_t chunk_size = 1u << 20;
    using Chunk = std::unique_ptr<uint8_t[]>;

    uint64_t size_;
    std::map<uint64_t, Chunk> chunks_; // by chunk index
};

} // namespace smbd::responder

#endif // SMBD_TOOLS_RESPONDER_STORE_H
