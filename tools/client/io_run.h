// The client's two uses of SMB2 READ/WRITE over RDMA: write-read rounds
// that check every byte (and every byte around the data), and a benchmark
// that keeps N transfers in flight for S seconds and spot-checks them.
#ifndef SMBD_CLIENT_IO_RUN_H
#define SMBD_CLIENT_IO_RUN_H

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "rdma_io.h"

namespace smbd::client {

// Where transfers go in the responder's file (every FileId names it).
struct FileOptions {
    uint64_t size = 64u << 20; // as the responder's --file-size
    uint64_t seed = 1;         // of the file pattern (pattern.h)
};

struct WriteReadOptions {
    uint32_t size = 0;   // bytes per transfer
    uint32_t rounds = 1; // each a WRITE, then a READ of the same range
    // The first round's file offset; each round moves on by size. Off a
    // 1 MiB boundary by default, so the data crosses them unaligned.
    uint64_t offset = (1u << 20) - 1000;
};

struct BenchOptions {
    bool write = false;
    uint32_t size = 0;
    uint32_t depth = 1;
    std::chrono::milliseconds duration{1000};
};

struct IoReport {
    uint64_t ops = 0; // transfers answered with success
    uint64_t bytes_written = 0;
    uint64_t bytes_read = 0;
    uint64_t bytes_verified = 0; // compared with the file pattern
    uint64_t invalidations = 0;  // responses that invalidated a token
    std::chrono::nanoseconds elapsed{0};
};

// @io has at least one slot.
Status write_read(RdmaIo &io, const FileOptions &file,
                  const WriteReadOptions &opt,
                  std::chrono::milliseconds timeout, IoReport &report,
                  const std::function<void(const std::string &)> &step = {});

// @io has at least @opt.depth slots. A read benchmark writes each slot's
// range once first, so that there is something to check.
Status bench(RdmaIo &io, const FileOptions &file, const BenchOptions &opt,
             std::chrono::milliseconds timeout, IoReport &report);

} // namespace smbd::client

#endif // SMBD_CLIENT_IO_RUN_H
