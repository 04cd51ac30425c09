// Helpers of the ioctl harness that runs in the guest against the module.
#ifndef SMBD_TESTS_GUEST_H
#define SMBD_TESTS_GUEST_H

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <functional>
#include <vector>

#include "caps.h"
#include "device.h"

namespace guest {

using smbd::device::Device;

// A file opened non-blocking: nothing in the harness may wait for events
// that no peer will ever cause.
inline Device open_device() { return Device(O_NONBLOCK); }

// GET_INFO of a fresh file (the limits the rules are checked against).
smbd_info device_info();

// Runs fn in a forked child and returns what it returned (an errno);
// kChildFailed if the child could not set itself up or died.
inline constexpr int kChildFailed = 255;
int in_child(const std::function<int()> &fn);

// A kernel address: any copy from or to it fails.
inline constexpr uint64_t kBadPointer = 0xffff800000000000ull;

// A command struct in a buffer with room after it, for the size rules.
class Request {
  public:
    template <typename T>
    explicit Request(const T &s, size_t extra = 0)
        : words_((sizeof(T) + extra + 7) / 8)
    {
        std::memcpy(words_.data(), &s, sizeof(T));
        set_size(static_cast<uint32_t>(sizeof(T) + extra));
    }
    void *data() { return words_.data(); }
    uint8_t *bytes() { return reinterpret_cast<uint8_t *>(words_.data()); }
    void set_size(uint32_t size) { std::memcpy(bytes(), &size, 4); }
    void set_u32(size_t offset, uint32_t v)
    {
        std::memcpy(bytes() + offset, &v, 4);
    }

  private:
    std::vector<uint64_t> words_;
};

} // namespace guest

#endif // SMBD_TESTS_GUEST_H
