// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
// One worker process of the ioctl fuzzer: its shared files, its address
// space and its threads.
//
// Everything the kernel is handed a pointer to lies in one region the
// process reserves at start (PROT_NONE): the pool windows of its shared
// files, pages that come and go, a hole that is never mapped, and each
// thread's scratch with a guard page after it. Ranges of the region are
// only ever replaced with MAP_FIXED, never left unmapped, so no other
// mapping can move into a range the kernel may still write to.
#ifndef SMBD_TESTS_IOCTL_FUZZ_WORKER_H
#define SMBD_TESTS_IOCTL_FUZZ_WORKER_H

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <pthread.h>
#include <shared_mutex>
#include <span>
#include <string>
#include <vector>

#include "device.h"
#include "fuzz.h"

namespace fuzz {

inline constexpr size_t kScratch = 1 << 20;   // per thread
inline constexpr size_t kCmdArea = 16 << 10;  // the command struct, first
inline constexpr size_t kEdgeArea = 16 << 10; // objects meeting the guard, last
inline constexpr unsigned kFlipPages = 4;
inline constexpr unsigned kHolePages = 4;
inline constexpr size_t kMaxConns = 16; // remembered per file
inline constexpr int kPrivateFds = 900; // threads' own files from here

// A file every thread of the process uses. Closing clears fd, then bumps
// gen, then closes: a call on a number read before knows it may have raced
// with the close.
struct Slot {
    std::mutex m; // open, close, the window and conns
    std::atomic<int> fd{-1};
    std::atomic<uint64_t> gen{0};
    std::atomic<int> users{0};   // threads inside a call on it
    bool pool = false;           // may allocate a pool (memory budget)
    uint8_t *window = nullptr;   // where its pool is mapped
    std::vector<uint8_t> pooled; // per page: 0 not the pool, 1 R, 2 RW
    std::vector<uint64_t> conns; // owned by the current file, fair game
};

// The file one call goes to.
struct Handle {
    Slot *slot = nullptr; // null: a thread's private file
    int fd = -1;
    uint64_t gen = 0;
    bool pool = false;

    bool raced() const { return slot && slot->gen.load() != gen; }
};

// A call on a shared file: counted, so a close can tell it raced with one.
class InUse {
  public:
    explicit InUse(const Handle &h) : slot_(h.slot)
    {
        if (slot_)
            slot_->users++;
    }
    ~InUse()
    {
        if (slot_)
            slot_->users--;
    }
    InUse(const InUse &) = delete;
    InUse &operator=(const InUse &) = delete;

  private:
    Slot *slot_;
};

// How a pointer handed to the kernel was made.
enum class Ptr {
    Private, // the thread's scratch, room for everything described
    Edge,    // runs into the guard page after the scratch
    Shared,  // a pool window or a page that comes and goes
    Bad,     // NULL, kernel, non-canonical, low or never mapped
};

class Process {
  public:
    Process(const Setup &setup, unsigned index);
    ~Process();
    Process(const Process &) = delete;
    Process &operator=(const Process &) = delete;
    int run();

    const Setup &setup;
    const smbd_info &info;
    Stats &stats;
    const unsigned index;
    const size_t page;
    const size_t window_len; // the pool mapping, in whole pages
    std::vector<std::unique_ptr<Slot>> slots;
    uint8_t *flip = nullptr; // pages mapped and unmapped at random
    std::mutex flip_m;
    bool flip_mapped[kFlipPages] = {};
    uint8_t *hole = nullptr; // never mapped
    // threads blocked in a call since (ms), for the watchdog's signal
    std::unique_ptr<std::atomic<int64_t>[]> blocked;
    std::atomic<unsigned> printed{0}; // violations printed
    // held for reading while a private file must not be inherited
    std::shared_mutex fork_m;

    uint8_t *scratch(unsigned thread) const;
    // The window holds nothing again (the caller holds s.m).
    void reset_window(Slot &s);

  private:
    void watchdog(const std::vector<pthread_t> &threads);

    uint8_t *region_ = nullptr;
    size_t region_len_ = 0;
    std::atomic<bool> stop_{false};
};

// A command struct on its way to the kernel.
struct Request {
    unsigned op;
    size_t ksize; // sizeof the struct
    alignas(8) uint8_t body[256];
    bool valid = true;          // nothing mutated: `semantic` holds
    bool force_invalid = false; // must fail before allocating a pool
    bool private_only = false;  // never read from a shared window
    Errnos semantic;            // what a valid request may get
    int inner = -1;             // errno a mutated field must give, or -1
    std::string what;           // the mutations, for messages
    uint8_t *events = nullptr;  // GET_EVENTS: the records, if private
    uint8_t *data = nullptr;    // and the data area, if private and whole

    template <typename T> T &as() { return *reinterpret_cast<T *>(body); }
    void mutated(const std::string &m)
    {
        valid = false;
        what += m;
        what += ' ';
    }
};

class Thread {
  public:
    Thread(Process &proc, unsigned index);
    void run();

  private:
    void step();
    Handle borrow_slot(Slot &s);
    // Opens a file for @s if it has none (the caller holds s.m).
    void reopen_locked(Slot &s);
    std::vector<uint64_t> conns_of(const Handle &h);
    // Whether @id of the file in @s is now one random calls may pick.
    bool remember_conn(Slot *s, uint64_t id);
    void forget_conn(Slot *s, uint64_t id);

    // commands.cpp: issue one ioctl, check its result, learn from it
    void command(unsigned op, const Handle &h);
    void random_ioctl(const Handle &h);
    uint8_t *issue(Request &req, const Handle &h, int &err, uint32_t &usize);
    // Learns from a call's outputs; true for a connection just accepted
    // that random calls may pick.
    bool after(const Request &req, const Handle &h, int err,
               const uint8_t *arg);
    void after_get_events(const Request &req, const Handle &h, int err,
                          const smbd_get_events &ge);
    void answer(const Handle &h, uint64_t conn, std::span<const uint8_t> pdu);
    bool serve_rw(const Handle &h, uint64_t conn, std::span<const uint8_t> pdu);

    // requests.cpp: what the structs carry
    void build(unsigned op, const Handle &h, Request &req);
    void build_set_params(Request &req);
    void build_accept(Request &req);
    void build_session(Request &req);
    void build_mem_params(const Handle &h, Request &req);
    uint64_t session_id();
    void build_get_events(Request &req);
    void build_send_pdu(const Handle &h, Request &req);
    void build_rdma_rw(const Handle &h, Request &req);
    static constexpr size_t kPduBytes = 64 << 10;
    const uint8_t *pdu_bytes();
    smbd_send_entry send_entry(uint64_t conn, const uint8_t *pdu, Request &req);
    void add_reply(smbd_rw_op &op, const uint8_t *pdu, Request &req);
    uint64_t conn_id(const Handle &h);
    std::vector<uint8_t> slices(Request &req);
    std::vector<uint8_t> descriptors(Request &req);

    // the rest of what a caller does with the file
    void do_mmap(Slot &s);
    void do_munmap(Slot &s);
    void touch(Slot &s);
    void do_poll(const Handle &h);
    void do_read(const Handle &h);
    void do_fcntl(const Handle &h);
    void close_slot(Slot &s);
    int open_private();
    void open_close_cycle();
    void roles_and_sessions();
    int simple(unsigned op, const Handle &h, void *arg, Errnos allowed,
               const char *what);
    void fork_child(Slot &s); // child.cpp
    void flip_page();

    // memory the kernel is pointed at; see Ptr
    uint8_t *alloc(size_t n);
    // room for @need bytes; @odd: of a kind other than private
    uint64_t pointer(size_t need, Ptr &kind, bool odd);
    // @data at a pointer of any kind; not private: the request is mutated
    uint64_t put(const void *data, size_t n, Request &req, const char *name,
                 Ptr *kind_out = nullptr);
    // room for @n bytes the kernel writes
    uint64_t space(size_t n, Request &req, const char *name,
                   Ptr *kind_out = nullptr);
    uint64_t bad_pointer();
    uint64_t shared_pointer(size_t need);

    // Counts the result; a violation when @err is not in @allowed. With
    // @on_fd the call used h.fd: EBADF once it is closed.
    bool check(unsigned op, int err, Errnos allowed, const Handle &h,
               const std::string &what, bool on_fd = true);
    void violation(const std::string &msg);

    // Whether the current request breaks rules, and a rule it breaks.
    bool chance(unsigned percent) { return hostile && rng.percent(percent); }

    Process &proc;
    const unsigned index;
    Rng rng;
    bool hostile = false;
    uint64_t focus = 0; // a connection just accepted
    uint64_t op_no = 0;
    uint8_t *const scratch;
    size_t bump = kCmdArea;
    ThreadStatus &status;
    smbd::device::Params params; // keeps sec_blob alive
    smbd_set_params valid_params;
};

// What a forked child checks and runs; built before the fork, so the child
// needs no allocation (the other threads may hold the allocator's locks).
struct ChildPlan {
    int fd;
    size_t page;
    uint8_t *pool_pages[8]; // the parent's pool pages: absent here
    unsigned npool;
    uint8_t *control; // mapped here too
    struct Call {     // on the inherited file: EBADFD
        unsigned op;
        unsigned long nr;
        void *arg;
    } calls[5];
    unsigned ncalls;
    // on a file of the child's own
    void *set_params; // valid: EPERM without CAP_NET_ADMIN
    void *listen;
    void *accept;           // as nobody: EPERM, ENOENT without listener
    void *register_session; // as nobody: EPERM
    void *conn_stats;       // another file's: ENOENT without CAP_NET_ADMIN
    bool map_pool;          // map the inherited file: EBADFD
    size_t mmap_size;
    Stats *stats;
    unsigned process, thread;
    uint64_t op_no;
};
[[noreturn]] void child_main(const ChildPlan &plan);

// Unaligned access to what the kernel reads and writes.
template <typename T> void store(uint8_t *at, T v)
{
    std::memcpy(at, &v, sizeof(v));
}

template <typename T> T load(const uint8_t *at)
{
    T v;
    std::memcpy(&v, at, sizeof(v));
    return v;
}

// The ioctl number of command @op.
unsigned long smbd_command_nr(unsigned op);
int64_t now_ms();
std::string errno_name(int err);
const char *ptr_name(Ptr kind);

} // namespace fuzz

#endif // SMBD_TESTS_IOCTL_FUZZ_WORKER_H
