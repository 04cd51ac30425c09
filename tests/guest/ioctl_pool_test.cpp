// The buffer pool: GET_MEM_PARAMS and the mmap() contract of smbd_mem_params
// (lazy, zeroed, MAP_SHARED at exactly the reported offset and size, not
// inherited by fork, not growable, the same pages for every mapping of a
// file, valid until unmapped, released with the last mapping and fd). A
// child's view of the file is in ioctl_fork_test.cpp.
#include <linux/smbd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstring>
#include <functional>
#include <sys/mman.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "guest.h"
#include "memory.h"

namespace guest {
namespace {

// Offsets written in every buffer: both ends and a few pages in between,
// so that a pool of pages stitched together wrongly shows up.
std::vector<size_t> probe_offsets(size_t buffer_size)
{
    const size_t page = page_size();
    std::vector<size_t> out;
    for (size_t off : {size_t{0}, page, buffer_size / 2, buffer_size - page,
                       buffer_size - 1})
        if (off < buffer_size && (out.empty() || off > out.back()))
            out.push_back(off);
    return out;
}

// Never zero, different per buffer, probe and seed.
uint8_t pattern(uint8_t seed, size_t buffer, size_t probe)
{
    return static_cast<uint8_t>(1 + (seed + buffer * 7 + probe * 13) % 255);
}

void write_pattern(uint8_t *base, const smbd_mem_params &mem, uint8_t seed)
{
    const auto offsets = probe_offsets(mem.out_buffer_size);
    for (size_t i = 0; i < mem.out_buffer_count; i++)
        for (size_t k = 0; k < offsets.size(); k++)
            base[i * mem.out_buffer_size + offsets[k]] = pattern(seed, i, k);
}

::testing::AssertionResult has_pattern(const uint8_t *base,
                                       const smbd_mem_params &mem, uint8_t seed)
{
    const auto offsets = probe_offsets(mem.out_buffer_size);
    for (size_t i = 0; i < mem.out_buffer_count; i++)
        for (size_t k = 0; k < offsets.size(); k++) {
            const size_t at = i * mem.out_buffer_size + offsets[k];
            if (base[at] != pattern(seed, i, k))
                return ::testing::AssertionFailure()
                       << "buffer " << i << " offset " << offsets[k] << ": "
                       << int{base[at]} << " instead of "
                       << int{pattern(seed, i, k)};
        }
    return ::testing::AssertionSuccess();
}

// Page by page with memcmp(): a byte loop over 64 MiB takes seconds under
// TCG and the sanitizers.
::testing::AssertionResult all_zero(const uint8_t *base, size_t length)
{
    const size_t page = page_size();
    const std::vector<uint8_t> zero(page);
    for (size_t at = 0; at < length; at += page) {
        const size_t n = std::min(page, length - at);
        if (std::memcmp(base + at, zero.data(), n) == 0)
            continue;
        for (size_t i = at; i < at + n; i++)
            if (base[i])
                return ::testing::AssertionFailure()
                       << "byte " << i << " is " << int{base[i]};
    }
    return ::testing::AssertionSuccess();
}

// A fresh file with its pool's geometry.
class Pool : public ::testing::Test {
  protected:
    void SetUp() override
    {
        ASSERT_TRUE(dev_.ok()) << strerror(dev_.error());
        ASSERT_EQ(dev_.get_mem_params(mem_), 0);
        ASSERT_GT(mem_.out_mmap_size, page_size());
    }
    Mapping map(int flags = MAP_SHARED)
    {
        return Mapping(dev_.fd(), mem_.out_mmap_size,
                       static_cast<int64_t>(mem_.out_mmap_offset), flags);
    }

    Device dev_ = open_device();
    smbd_mem_params mem_{};
};

TEST_F(Pool, GetMemParamsReportsTheGeometryOfGetInfo)
{
    const smbd_info info = device_info();
    EXPECT_EQ(mem_.size, sizeof(mem_));
    EXPECT_EQ(mem_.out_buffer_count, info.out_pool_buffers);
    EXPECT_EQ(mem_.out_buffer_count, 64u);
    EXPECT_EQ(mem_.out_buffer_size, info.out_buffer_size);
    EXPECT_EQ(mem_.out_buffer_size, 1u << 20);
    EXPECT_EQ(mem_.out_mmap_size,
              uint64_t{mem_.out_buffer_count} * mem_.out_buffer_size);
    EXPECT_EQ(mem_.out_mmap_size, info.out_mmap_size);
    EXPECT_EQ(mem_.out_mmap_offset, 0u);
}

TEST_F(Pool, GetMemParamsIsTheSameOnEveryCall)
{
    smbd_mem_params again{};
    ASSERT_EQ(dev_.get_mem_params(again), 0);
    EXPECT_EQ(again.out_buffer_count, mem_.out_buffer_count);
    EXPECT_EQ(again.out_buffer_size, mem_.out_buffer_size);
    EXPECT_EQ(again.out_mmap_size, mem_.out_mmap_size);
    EXPECT_EQ(again.out_mmap_offset, mem_.out_mmap_offset);
}

TEST_F(Pool, ExactSharedMappingStartsZeroed)
{
    Mapping m = map();
    ASSERT_TRUE(m.ok()) << strerror(m.error());
    EXPECT_TRUE(all_zero(m.data(), m.size()));
}

TEST_F(Pool, WritesToEveryBufferReadBack)
{
    Mapping m = map();
    ASSERT_TRUE(m.ok()) << strerror(m.error());
    write_pattern(m.data(), mem_, 1);
    EXPECT_TRUE(has_pattern(m.data(), mem_, 1));
}

TEST_F(Pool, EveryMappingOfTheFileShowsTheSamePages)
{
    Mapping first = map(), second = map();
    ASSERT_TRUE(first.ok()) << strerror(first.error());
    ASSERT_TRUE(second.ok()) << strerror(second.error());
    ASSERT_NE(first.data(), second.data());
    write_pattern(first.data(), mem_, 2);
    EXPECT_TRUE(has_pattern(second.data(), mem_, 2));
    write_pattern(second.data(), mem_, 3);
    EXPECT_TRUE(has_pattern(first.data(), mem_, 3));
}

TEST_F(Pool, EachFileHasItsOwnZeroedPool)
{
    Mapping mine = map();
    ASSERT_TRUE(mine.ok()) << strerror(mine.error());
    write_pattern(mine.data(), mem_, 4);

    Device other = open_device();
    smbd_mem_params other_mem{};
    ASSERT_EQ(other.get_mem_params(other_mem), 0);
    Mapping theirs(other.fd(), other_mem.out_mmap_size,
                   static_cast<int64_t>(other_mem.out_mmap_offset), MAP_SHARED);
    ASSERT_TRUE(theirs.ok()) << strerror(theirs.error());
    EXPECT_TRUE(all_zero(theirs.data(), theirs.size()));
    write_pattern(theirs.data(), other_mem, 5);
    EXPECT_TRUE(has_pattern(mine.data(), mem_, 4));
}

// The pool is allocated by whichever comes first, GET_MEM_PARAMS or mmap;
// GET_INFO tells the size and GET_MEM_PARAMS the offset 0 checked above.
TEST(PoolLazy, MmapWorksWithoutGetMemParamsFirst)
{
    const smbd_info info = device_info();
    Device dev = open_device();
    Mapping m(dev.fd(), info.out_mmap_size, 0, MAP_SHARED);
    ASSERT_TRUE(m.ok()) << strerror(m.error());
    EXPECT_TRUE(all_zero(m.data(), m.size()));

    smbd_mem_params mem{};
    ASSERT_EQ(dev.get_mem_params(mem), 0);
    EXPECT_EQ(mem.out_mmap_size, info.out_mmap_size);
    EXPECT_EQ(mem.out_mmap_offset, 0u);
    // the pool GET_MEM_PARAMS describes is the one already mapped
    write_pattern(m.data(), mem, 6);
    Mapping again(dev.fd(), mem.out_mmap_size,
                  static_cast<int64_t>(mem.out_mmap_offset), MAP_SHARED);
    ASSERT_TRUE(again.ok()) << strerror(again.error());
    EXPECT_TRUE(has_pattern(again.data(), mem, 6));
}

// SMBD_FEATURE_POOL_SIZE: the first GET_MEM_PARAMS may choose fewer
// buffers; mmap() then takes exactly that pool, and every later call must
// agree with it.
TEST(PoolSize, TheFirstGetMemParamsChoosesFewerBuffers)
{
    const smbd_info info = device_info();
    ASSERT_GT(info.out_pool_buffers, 4u);
    Device dev = open_device();
    smbd_mem_params mem{};
    ASSERT_EQ(dev.get_mem_params(mem, 4), 0);
    EXPECT_EQ(mem.out_buffer_count, 4u);
    EXPECT_EQ(mem.out_buffer_size, info.out_buffer_size);
    EXPECT_EQ(mem.out_mmap_size, 4ull * info.out_buffer_size);
    EXPECT_EQ(mem.out_mmap_offset, 0u);

    // the default's length is not this pool's
    Mapping whole(dev.fd(), info.out_mmap_size, 0, MAP_SHARED);
    EXPECT_FALSE(whole.ok());
    EXPECT_EQ(whole.error(), EINVAL);
    Mapping m(dev.fd(), mem.out_mmap_size, 0, MAP_SHARED);
    ASSERT_TRUE(m.ok()) << strerror(m.error());
    EXPECT_TRUE(all_zero(m.data(), m.size()));
    write_pattern(m.data(), mem, 14);
    EXPECT_TRUE(has_pattern(m.data(), mem, 14));

    // 0 and the same count describe it; another count is refused
    smbd_mem_params again{};
    ASSERT_EQ(dev.get_mem_params(again), 0);
    EXPECT_EQ(again.out_buffer_count, 4u);
    EXPECT_EQ(again.out_mmap_size, mem.out_mmap_size);
    EXPECT_EQ(dev.get_mem_params(again, 4), 0);
    EXPECT_EQ(dev.get_mem_params(again, 3), EBUSY);
    EXPECT_EQ(dev.get_mem_params(again, info.out_pool_buffers), EBUSY);
    EXPECT_TRUE(has_pattern(m.data(), mem, 14));
}

TEST(PoolSize, APoolMappedFirstHasTheDefaultCount)
{
    const smbd_info info = device_info();
    Device dev = open_device();
    Mapping m(dev.fd(), info.out_mmap_size, 0, MAP_SHARED);
    ASSERT_TRUE(m.ok()) << strerror(m.error());
    smbd_mem_params mem{};
    EXPECT_EQ(dev.get_mem_params(mem, 1), EBUSY);
    ASSERT_EQ(dev.get_mem_params(mem, info.out_pool_buffers), 0);
    EXPECT_EQ(mem.out_buffer_count, info.out_pool_buffers);
}

TEST(PoolSize, CountsOutsideOneToTheModulesAreInvalidAndAllocateNothing)
{
    const smbd_info info = device_info();
    Device dev = open_device();
    smbd_mem_params mem{};
    for (uint32_t n : {info.out_pool_buffers + 1, UINT32_MAX}) {
        SCOPED_TRACE(n);
        EXPECT_EQ(dev.get_mem_params(mem, n), EINVAL);
    }
    // nothing was allocated by the refusals: one buffer can still be chosen
    ASSERT_EQ(dev.get_mem_params(mem, 1), 0);
    EXPECT_EQ(mem.out_buffer_count, 1u);
    EXPECT_EQ(mem.out_mmap_size, uint64_t{info.out_buffer_size});
}

TEST(PoolSize, ANonZeroReservedFieldIsInvalid)
{
    Device dev = open_device();
    smbd_mem_params mem{};
    mem.size = sizeof(mem);
    mem.__reserved = 1;
    EXPECT_EQ(dev.raw(SMBD_IOC_GET_MEM_PARAMS, &mem), EINVAL);
    mem.__reserved = 0;
    EXPECT_EQ(dev.raw(SMBD_IOC_GET_MEM_PARAMS, &mem), 0);
}

// A caller that predates the field (32 bytes) gets the default pool.
TEST(PoolSize, TheFirstVersionOfTheStructGetsTheDefault)
{
    const smbd_info info = device_info();
    Device dev = open_device();
    smbd_mem_params mem{};
    mem.size = offsetof(smbd_mem_params, buffer_count);
    mem.buffer_count = 2; // beyond the size: not read
    ASSERT_EQ(dev.raw(SMBD_IOC_GET_MEM_PARAMS, &mem), 0);
    EXPECT_EQ(mem.out_buffer_count, info.out_pool_buffers);
}

// The memory a smaller pool pins is what it has: the memory cgroup's
// charge, through MemAvailable, grows by its buffers, not the default's.
TEST(PoolSize, ASmallerPoolPinsOnlyItsBuffers)
{
    const smbd_info info = device_info();
    const uint64_t whole = info.out_mmap_size;
    ASSERT_GE(whole, 16ull << 20);
    const auto before = mem_available();
    ASSERT_TRUE(before);
    std::vector<Device> devs;
    for (int i = 0; i < 8; i++) {
        devs.push_back(open_device());
        smbd_mem_params mem{};
        ASSERT_EQ(devs.back().get_mem_params(mem, 1), 0);
    }
    const auto after = mem_available();
    ASSERT_TRUE(after);
    const uint64_t used = *before > *after ? *before - *after : 0;
    // eight default pools would take 8 x whole; eight of one buffer, 8 MiB
    EXPECT_LT(used, 4 * whole) << "MemAvailable dropped by " << (used >> 20)
                               << " MiB for eight pools of one buffer";
}

TEST_F(Pool, PrivateMappingIsInvalid)
{
    for (int prot : {PROT_READ | PROT_WRITE, PROT_READ}) {
        SCOPED_TRACE(prot);
        Mapping m(dev_.fd(), mem_.out_mmap_size,
                  static_cast<int64_t>(mem_.out_mmap_offset), MAP_PRIVATE,
                  prot);
        EXPECT_FALSE(m.ok());
        EXPECT_EQ(m.error(), EINVAL);
    }
}

TEST_F(Pool, LengthOtherThanTheMmapSizeIsInvalid)
{
    const size_t page = page_size();
    for (size_t length : {size_t{mem_.out_mmap_size} - page,
                          size_t{mem_.out_mmap_size} + page, page}) {
        SCOPED_TRACE(length);
        Mapping m(dev_.fd(), length, static_cast<int64_t>(mem_.out_mmap_offset),
                  MAP_SHARED);
        EXPECT_FALSE(m.ok());
        EXPECT_EQ(m.error(), EINVAL);
    }
}

TEST_F(Pool, OffsetOtherThanTheMmapOffsetIsInvalid)
{
    for (uint64_t offset : {mem_.out_mmap_offset + page_size(),
                            mem_.out_mmap_offset + mem_.out_mmap_size}) {
        SCOPED_TRACE(offset);
        Mapping m(dev_.fd(), mem_.out_mmap_size, static_cast<int64_t>(offset),
                  MAP_SHARED);
        EXPECT_FALSE(m.ok());
        EXPECT_EQ(m.error(), EINVAL);
    }
}

// VM_DONTEXPAND: mm/mremap.c refuses to grow such a mapping with EFAULT,
// whether it could stay in place or would have to move.
TEST_F(Pool, MappingCannotGrow)
{
    Mapping m = map();
    ASSERT_TRUE(m.ok()) << strerror(m.error());
    write_pattern(m.data(), mem_, 7);
    const size_t bigger = m.size() + page_size();
    for (int flags : {MREMAP_MAYMOVE, 0}) {
        SCOPED_TRACE(flags);
        errno = 0;
        void *p = ::mremap(m.data(), m.size(), bigger, flags);
        EXPECT_EQ(p, MAP_FAILED);
        EXPECT_EQ(errno, EFAULT);
        if (p != MAP_FAILED) {
            // it moved or grew: put it back where Mapping will unmap it
            ::munmap(p, bigger);
            return;
        }
    }
    EXPECT_TRUE(has_pattern(m.data(), mem_, 7));
}

// VM_DONTCOPY: the child has nothing at the parent's address. Both the
// child's /proc/self/maps and mincore() (ENOMEM on unmapped pages) say so;
// the child reports through its exit status.
TEST_F(Pool, ForkedChildDoesNotInheritTheMapping)
{
    Mapping m = map();
    ASSERT_TRUE(m.ok()) << strerror(m.error());
    write_pattern(m.data(), mem_, 8);
    // allocated before fork: the child should not map anything new
    std::vector<unsigned char> residency(m.size() / page_size());
    enum { kUnmapped = 0, kInMaps = 1, kResident = 2 };
    int rc = in_child([&] {
        if (maps_overlap(m.data(), m.size()))
            return int{kInMaps};
        if (::mincore(m.data(), m.size(), residency.data()) == 0 ||
            errno != ENOMEM)
            return int{kResident};
        return int{kUnmapped};
    });
    EXPECT_EQ(rc, kUnmapped) << "1: in /proc/self/maps, 2: mincore() works";
    // and the parent's mapping is untouched by the fork
    EXPECT_TRUE(has_pattern(m.data(), mem_, 8));
}

// MADV_DOFORK undoes VM_DONTCOPY, and the child gets the range, but not the
// pages: its first touch is a SIGBUS (the fault handler serves the opener's
// address space alone). The parent's pages are untouched.
TEST_F(Pool, AChildThatInheritsTheMappingAnywayGetsNoPages)
{
    Mapping m = map();
    ASSERT_TRUE(m.ok()) << strerror(m.error());
    write_pattern(m.data(), mem_, 9);
    ASSERT_EQ(::madvise(m.data(), m.size(), MADV_DOFORK), 0) << strerror(errno);
    const size_t last = m.size() - 1;
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        // the sanitizers' handler would turn the signal into an exit
        ::signal(SIGBUS, SIG_DFL);
        volatile uint8_t *p = m.data();
        p[last] = 0x5a;
        _exit(p[0] == pattern(9, 0, 0) ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS)
        << "the child " << (WIFEXITED(status) ? "exited " : "died by ")
        << (WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    EXPECT_TRUE(has_pattern(m.data(), mem_, 9));
}

// MADV_DONTNEED drops the process's page table entries, not the pool: the
// next touch maps the same pages again.
TEST_F(Pool, PagesComeBackAfterMadvDontneed)
{
    Mapping m = map();
    ASSERT_TRUE(m.ok()) << strerror(m.error());
    write_pattern(m.data(), mem_, 12);
    ASSERT_EQ(::madvise(m.data(), m.size(), MADV_DONTNEED), 0)
        << strerror(errno);
    EXPECT_TRUE(has_pattern(m.data(), mem_, 12));
    write_pattern(m.data(), mem_, 13);
    Mapping second = map();
    ASSERT_TRUE(second.ok()) << strerror(second.error());
    EXPECT_TRUE(has_pattern(second.data(), mem_, 13));
}

TEST_F(Pool, PagesStayValidAfterTheFileIsClosed)
{
    Mapping m = map();
    ASSERT_TRUE(m.ok()) << strerror(m.error());
    write_pattern(m.data(), mem_, 10);
    dev_.close();
    EXPECT_TRUE(has_pattern(m.data(), mem_, 10));
    write_pattern(m.data(), mem_, 11);
    EXPECT_TRUE(has_pattern(m.data(), mem_, 11));

    // a new file does not get the orphaned pool
    Device next = open_device();
    Mapping fresh(next.fd(), mem_.out_mmap_size,
                  static_cast<int64_t>(mem_.out_mmap_offset), MAP_SHARED);
    ASSERT_TRUE(fresh.ok()) << strerror(fresh.error());
    EXPECT_TRUE(all_zero(fresh.data(), fresh.size()));
    EXPECT_TRUE(has_pattern(m.data(), mem_, 11));
    EXPECT_EQ(m.unmap(), 0);
}

// Leak checks: each cycle allocates a whole pool (64 MiB by default), so
// 20 cycles that leaked would take more than a GiB. The bound is generous
// and freeing may lag a little (RCU, deferred work), so MemAvailable is
// given a few seconds to come back; this is not a timing check.
constexpr int kCycles = 20;
constexpr uint64_t kLeakBound = 128ull << 20;

void expect_no_leak(const std::function<void()> &cycle)
{
    cycle(); // one-time costs (page tables, caches) before measuring
    ASSERT_FALSE(::testing::Test::HasFatalFailure());
    const auto before = mem_available();
    ASSERT_TRUE(before);
    for (int i = 0; i < kCycles; i++) {
        SCOPED_TRACE(i);
        cycle();
        ASSERT_FALSE(::testing::Test::HasFatalFailure());
    }
    uint64_t drop = 0;
    for (int wait = 0; wait < 50; wait++) {
        const auto after = mem_available();
        ASSERT_TRUE(after);
        drop = *after < *before ? *before - *after : 0;
        if (drop <= kLeakBound)
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_LE(drop, kLeakBound) << "MemAvailable dropped by " << (drop >> 20)
                                << " MiB over " << kCycles << " cycles";
}

// Writes one byte in every buffer, so that each is really backed.
void touch(const Mapping &m, const smbd_mem_params &mem)
{
    for (size_t i = 0; i < mem.out_buffer_count; i++)
        m.data()[i * mem.out_buffer_size] = 0xee;
}

TEST(PoolRelease, UnmapThenCloseFreesThePool)
{
    expect_no_leak([] {
        Device dev = open_device();
        smbd_mem_params mem{};
        ASSERT_EQ(dev.get_mem_params(mem), 0);
        Mapping m(dev.fd(), mem.out_mmap_size,
                  static_cast<int64_t>(mem.out_mmap_offset), MAP_SHARED);
        ASSERT_TRUE(m.ok()) << strerror(m.error());
        touch(m, mem);
        ASSERT_EQ(m.unmap(), 0);
        dev.close();
    });
}

TEST(PoolRelease, CloseThenUnmapFreesThePool)
{
    expect_no_leak([] {
        Device dev = open_device();
        smbd_mem_params mem{};
        ASSERT_EQ(dev.get_mem_params(mem), 0);
        Mapping m(dev.fd(), mem.out_mmap_size,
                  static_cast<int64_t>(mem.out_mmap_offset), MAP_SHARED);
        ASSERT_TRUE(m.ok()) << strerror(m.error());
        touch(m, mem);
        dev.close();
        ASSERT_EQ(m.unmap(), 0);
    });
}

TEST(PoolRelease, CloseWithoutMappingFreesThePool)
{
    expect_no_leak([] {
        Device dev = open_device();
        smbd_mem_params mem{};
        ASSERT_EQ(dev.get_mem_params(mem), 0);
        dev.close();
    });
}

} // namespace
} // namespace guest
