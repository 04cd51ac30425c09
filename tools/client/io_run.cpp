// Write-read rounds and the benchmark; see io_run.h.
#include "io_run.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "pattern.h"

namespace smbd::client {

namespace {

using Clock = std::chrono::steady_clock;

// Bytes compared at each end of a benchmark READ.
constexpr uint32_t spot_bytes = 8;

// The @round-th range of @size bytes from @first, wrapping inside the file.
uint64_t round_offset(const FileOptions &file, uint64_t first, uint32_t size,
                      uint32_t round)
{
    uint64_t span = file.size - size + 1;
    return (first + uint64_t{round} * size) % span;
}

void fill(RdmaIo &io, const FileOptions &file, uint32_t slot, uint64_t offset,
          uint32_t size)
{
    for (std::span<uint8_t> piece : io.data(slot, size)) {
        fill_file_pattern(file.seed, offset, piece);
        offset += piece.size();
    }
}

// Every byte of a READ against the file pattern.
Status verify(RdmaIo &io, const FileOptions &file, uint32_t slot,
              uint64_t offset, uint32_t size)
{
    uint64_t at = offset;
    for (std::span<uint8_t> piece : io.data(slot, size)) {
        if (auto bad = file_pattern_mismatch(file.seed, at, piece)) {
            char buf[160];
            std::snprintf(buf, sizeof(buf),
                          "READ of %u bytes at %llu: byte %llu of the file "
                          "differs from what was written (0x%02x)",
                          size, (unsigned long long)offset,
                          static_cast<unsigned long long>(at) + *bad,
                          piece[*bad]);
            return make_error(Errc::mismatch, buf);
        }
        at += piece.size();
    }
    return io.check_untouched(slot, size);
}

// A transfer answered with anything but all its bytes is a failure.
Status expect_all(const IoCompletion &c)
{
    std::string what = std::string(c.write ? "WRITE" : "READ") + " of " +
                       std::to_string(c.size) + " bytes at " +
                       std::to_string(c.offset);
    if (c.status != NT_STATUS_SUCCESS)
        return make_error(Errc::smb2_status,
                          what + " failed with " + nt_status_text(c.status));
    if (c.bytes != c.size)
        return make_error(Errc::mismatch, what + " moved " +
                                              std::to_string(c.bytes) +
                                              " bytes");
    return {};
}

Status one(RdmaIo &io, bool write, uint64_t offset, uint32_t size,
           std::chrono::milliseconds timeout, IoReport &report)
{
    if (auto st = io.start(0, write, offset, size); !st)
        return st;
    auto c = io.finish(timeout);
    if (!c)
        return c.error();
    if (auto st = expect_all(*c); !st)
        return st;
    report.ops++;
    report.invalidations += c->invalidated.has_value();
    (write ? report.bytes_written : report.bytes_read) += size;
    return {};
}

// The spot check of a benchmark READ: the first and last bytes.
std::vector<std::span<uint8_t>> ends(RdmaIo &io, uint32_t slot, uint32_t size)
{
    auto pieces = io.data(slot, size);
    std::span<uint8_t> first = pieces.front(), last = pieces.back();
    return {first.first(std::min<size_t>(spot_bytes, first.size())),
            last.last(std::min<size_t>(spot_bytes, last.size()))};
}

} // namespace

Status write_read(RdmaIo &io, const FileOptions &file,
                  const WriteReadOptions &opt,
                  std::chrono::milliseconds timeout, IoReport &report,
                  const std::function<void(const std::string &)> &step)
{
    if (opt.size == 0 || opt.size > file.size)
        return make_error(Errc::invalid_argument,
                          "transfers of 1 byte up to the file's " +
                              std::to_string(file.size) + " bytes");
    auto start = Clock::now();
    for (uint32_t round = 0; round < opt.rounds; round++) {
        uint64_t offset = round_offset(file, opt.offset, opt.size, round);
        fill(io, file, 0, offset, opt.size);
        if (auto st = one(io, true, offset, opt.size, timeout, report); !st)
            return st;
        io.poison(0, opt.size);
        if (auto st = one(io, false, offset, opt.size, timeout, report); !st)
            return st;
        if (auto st = verify(io, file, 0, offset, opt.size); !st)
            return st;
        report.bytes_verified += opt.size;
        if (step)
            step("round " + std::to_string(round + 1) +
                 ": wrote and read back " + std::to_string(opt.size) +
                 " bytes at " + std::to_string(offset) +
                 ", every byte as written");
    }
    report.elapsed = Clock::now() - start;
    return {};
}

Status bench(RdmaIo &io, const FileOptions &file, const BenchOptions &opt,
             std::chrono::milliseconds timeout, IoReport &report)
{
    if (opt.size == 0 || opt.size > file.size || opt.depth == 0 ||
        opt.depth > io.options().slots)
        return make_error(Errc::invalid_argument,
                          "a benchmark needs 1..file size bytes and 1.." +
                              std::to_string(io.options().slots) +
                              " transfers in flight");
    std::vector<uint64_t> offsets(opt.depth);
    for (uint32_t s = 0; s < opt.depth; s++) {
        offsets[s] = round_offset(file, 0, opt.size, s);
        // each slot moves the same range every time: its pattern once
        fill(io, file, s, offsets[s], opt.size);
        if (!opt.write) {
            if (auto st = io.start(s, true, offsets[s], opt.size); !st)
                return st;
            auto c = io.finish(timeout);
            if (!c)
                return c.error();
            if (auto st = expect_all(*c); !st)
                return st;
        }
    }
    auto begin = Clock::now();
    auto until = begin + opt.duration;
    auto launch = [&](uint32_t s) {
        if (!opt.write)
            for (std::span<uint8_t> end : ends(io, s, opt.size))
                std::fill(end.begin(), end.end(), uint8_t(0xA5));
        return io.start(s, opt.write, offsets[s], opt.size);
    };
    for (uint32_t s = 0; s < opt.depth; s++)
        if (auto st = launch(s); !st)
            return st;
    while (io.in_flight()) {
        auto c = io.finish(timeout);
        if (!c)
            return c.error();
        if (auto st = expect_all(*c); !st)
            return st;
        if (!opt.write) {
            auto pieces = ends(io, c->slot, opt.size);
            uint64_t last_at = offsets[c->slot] + opt.size - pieces[1].size();
            if (file_pattern_mismatch(file.seed, offsets[c->slot], pieces[0]) ||
                file_pattern_mismatch(file.seed, last_at, pieces[1]))
                return make_error(Errc::mismatch,
                                  "a READ of " + std::to_string(opt.size) +
                                      " bytes at " +
                                      std::to_string(offsets[c->slot]) +
                                      " does not start or end as written");
        }
        report.ops++;
        report.invalidations += c->invalidated.has_value();
        (opt.write ? report.bytes_written : report.bytes_read) += opt.size;
        if (Clock::now() < until)
            if (auto st = launch(c->slot); !st)
                return st;
    }
    report.elapsed = Clock::now() - begin;
    return {};
}

} // namespace smbd::client
