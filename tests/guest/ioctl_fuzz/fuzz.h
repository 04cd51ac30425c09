// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
// smbdirect-ioctl-fuzz: processes of threads issue random and mutated
// /dev/smbd commands against the loaded module. Every failure must carry an
// errno the UAPI header documents, no process may die by a signal, and once
// all of them are gone a fresh file must get the master's roles. What the
// parent and the worker processes share.
#ifndef SMBD_TESTS_IOCTL_FUZZ_H
#define SMBD_TESTS_IOCTL_FUZZ_H

#include <linux/smbd.h>

#include <atomic>
#include <bitset>
#include <cstddef>
#include <cstdint>
#include <initializer_list>

namespace fuzz {

// xoshiro256** seeded through splitmix64: one stream per (seed, process,
// thread), the same on every machine.
class Rng {
  public:
    explicit Rng(uint64_t seed);
    uint64_t next();
    uint64_t below(uint64_t n) { return n ? next() % n : 0; }
    // in [lo, hi]
    uint64_t range(uint64_t lo, uint64_t hi)
    {
        return hi - lo == UINT64_MAX ? next() : lo + below(hi - lo + 1);
    }
    bool percent(unsigned p) { return below(100) < p; }
    template <typename T, size_t N> T pick(const T (&a)[N])
    {
        return a[below(N)];
    }

  private:
    uint64_t s_[4];
};

uint64_t derive_seed(uint64_t seed, uint64_t process, uint64_t thread);

// What is counted: the commands in SMBD_CMD_* order, then the rest.
enum Op : unsigned {
    OP_GET_INFO,
    OP_SET_PARAMS,
    OP_LISTEN,
    OP_ACCEPT,
    OP_REGISTER_SESSION,
    OP_UNREGISTER_SESSION,
    OP_GET_MEM_PARAMS,
    OP_GET_EVENTS,
    OP_SEND_PDU,
    OP_RDMA_RW,
    OP_DISCONNECT,
    OP_CONN_STATS,
    OP_IOCTL_RANDOM, // numbers the module does not offer
    OP_MMAP,
    OP_MUNMAP,
    OP_POLL,
    OP_READ,
    OP_OPEN,
    OP_CLOSE,
    OP_FCNTL,
    OP_COUNT
};
inline constexpr unsigned kCommands = OP_CONN_STATS + 1;
const char *op_name(unsigned op);
inline bool is_ioctl(unsigned op) { return op <= OP_IOCTL_RANDOM; }

// Sets of results: bit 0 is success, bit e the errno e.
inline constexpr int kErrnoSlots = 134; // EHWPOISON is the last
using Errnos = std::bitset<kErrnoSlots>;
Errnos errnos(std::initializer_list<int> list);
// What the header documents for every command.
Errnos documented();

struct Stats {
    // [op][0]: successes; [op][e]: failures with errno e
    std::atomic<uint64_t> results[OP_COUNT][kErrnoSlots];
    std::atomic<uint64_t> accepted; // ACCEPTs that got a connection
    std::atomic<uint64_t> forks;
    std::atomic<uint64_t> mmaps;  // pool mappings made
    std::atomic<uint64_t> closes; // shared fds closed while in use
    std::atomic<uint64_t> violations;
};

// NEW_CONNECTION tokens any process saw lately, for every process's
// ACCEPTs. Reads race with writes: a torn token is one more mutation.
struct Tokens {
    static constexpr unsigned kTokens = 64;
    std::atomic<uint64_t> next;
    std::atomic<uint64_t> words[kTokens][2];

    void put(const uint8_t *token);
    bool get(Rng &rng, uint8_t *token);
};

// Where each thread is, for the parent's stall report.
struct ThreadStatus {
    std::atomic<uint64_t> ops; // finished
    std::atomic<unsigned> op;  // the current one
};

struct Options {
    uint64_t seed = 0;
    unsigned processes = 4;
    unsigned threads = 3;
    uint64_t ops = 2000;
    bool quiet = false;
};

// In one MAP_SHARED mapping made before the workers fork; the thread
// statuses follow it.
struct Shared {
    Stats stats;
    Tokens tokens;
    unsigned threads;

    ThreadStatus &status(unsigned process, unsigned thread)
    {
        return reinterpret_cast<ThreadStatus *>(this +
                                                1)[process * threads + thread];
    }
};

// Files every thread of a worker process shares.
inline constexpr unsigned kSlots = 3;

// What every worker knows before it starts.
struct Setup {
    Options opt;
    smbd_info info;      // GET_INFO of the parent's first file
    unsigned pool_slots; // shared files per process that may own a pool
    Shared *shared;
};

// Runs worker process @process to the end; its exit code.
int run_process(const Setup &setup, unsigned process);

} // namespace fuzz

#endif // SMBD_TESTS_IOCTL_FUZZ_H
