// Process-memory probes of the guest harness; see memory.h.
#include "memory.h"

#include <cerrno>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

namespace guest {

size_t page_size() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

Mapping::Mapping(int fd, size_t length, int64_t offset, int flags, int prot)
    : length_(length)
{
    void *p = ::mmap(nullptr, length, prot, flags, fd, offset);
    if (p == MAP_FAILED)
        error_ = errno;
    else
        addr_ = p;
}

int Mapping::unmap()
{
    if (!addr_)
        return 0;
    int err = ::munmap(addr_, length_) == 0 ? 0 : errno;
    addr_ = nullptr;
    return err;
}

bool maps_overlap(const void *addr, size_t length)
{
    const auto begin = reinterpret_cast<uintptr_t>(addr);
    const uintptr_t end = begin + length;
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
        // "start-end perms ..." in hex
        std::istringstream in(line);
        uintptr_t lo = 0, hi = 0;
        char dash = 0;
        if (in >> std::hex >> lo >> dash >> hi && dash == '-' && lo < end &&
            begin < hi)
            return true;
    }
    return false;
}

std::optional<uint64_t> mem_available()
{
    std::ifstream meminfo("/proc/meminfo");
    std::string key, unit;
    uint64_t kib = 0;
    while (meminfo >> key >> kib) {
        std::getline(meminfo, unit);
        if (key == "MemAvailable:")
            return kib * 1024;
    }
    return std::nullopt;
}

} // namespace guest
