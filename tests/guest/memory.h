// Process-memory probes for the pool tests: an owned mmap() of a file, and
// what /proc tells about mappings and free memory.
#ifndef SMBD_TESTS_GUEST_MEMORY_H
#define SMBD_TESTS_GUEST_MEMORY_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <sys/mman.h>
#include <utility>

namespace guest {

size_t page_size();

// A mapping that is unmapped when it goes out of scope; ok() is false and
// error() holds the errno when mmap() failed.
class Mapping {
  public:
    Mapping(int fd, size_t length, int64_t offset, int flags,
            int prot = PROT_READ | PROT_WRITE);
    ~Mapping() { unmap(); }
    Mapping(Mapping &&other) noexcept
        : addr_(std::exchange(other.addr_, nullptr)), length_(other.length_),
          error_(other.error_)
    {
    }
    Mapping(const Mapping &) = delete;
    Mapping &operator=(const Mapping &) = delete;
    Mapping &operator=(Mapping &&) = delete;

    bool ok() const { return addr_ != nullptr; }
    int error() const { return error_; }
    uint8_t *data() const { return static_cast<uint8_t *>(addr_); }
    size_t size() const { return length_; }
    // returns the errno of munmap(), 0 if it worked or nothing was mapped
    int unmap();

  private:
    void *addr_ = nullptr;
    size_t length_ = 0;
    int error_ = 0;
};

// Whether any line of /proc/self/maps overlaps [addr, addr + length).
bool maps_overlap(const void *addr, size_t length);

// MemAvailable of /proc/meminfo in bytes.
std::optional<uint64_t> mem_available();

} // namespace guest

#endif // SMBD_TESTS_GUEST_MEMORY_H
