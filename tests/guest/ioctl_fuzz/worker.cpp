// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
// A worker process: its region, its shared files, its threads and what
// they do with a file besides ioctls (see worker.h).
#include "worker.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <iterator>
#include <poll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <time.h>
#include <unistd.h>

namespace fuzz {

namespace {

// Blocking calls (GET_EVENTS, poll) get this signal after kBlockMs, so they
// end with EINTR instead of waiting for events nobody causes.
constexpr int kBlockMs = 20;
constexpr unsigned kMaxPrinted = 20;

void on_signal(int) {}

// What a thread does next, in permille; the commands split theirs.
enum Action {
    A_COMMAND,
    A_RANDOM_IOCTL,
    A_MMAP,
    A_MUNMAP,
    A_TOUCH,
    A_POLL,
    A_READ,
    A_FCNTL,
    A_CLOSE,
    A_CYCLE,
    A_FORK,
    A_FLIP,
    A_COUNT
};
constexpr unsigned kActionWeights[] = {670, 60, 45, 30, 20, 30,
                                       20,  15, 25, 25, 5,  15};
static_assert(std::size(kActionWeights) == A_COUNT);
constexpr unsigned kCommandWeights[] = {40, 50,  40, 70, 50, 40,
                                        40, 120, 90, 90, 40, 40};
static_assert(std::size(kCommandWeights) == kCommands);

template <size_t N> unsigned weighted(Rng &rng, const unsigned (&w)[N])
{
    unsigned total = 0;
    for (unsigned x : w)
        total += x;
    uint64_t r = rng.below(total);
    for (unsigned i = 0; i < N; i++) {
        if (r < w[i])
            return i;
        r -= w[i];
    }
    return N - 1;
}

void *map_fixed(void *at, size_t len, int prot)
{
    return mmap(at, len, prot,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
}

} // namespace

int64_t now_ms()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return int64_t{ts.tv_sec} * 1000 + ts.tv_nsec / 1000000;
}

std::string errno_name(int err)
{
    if (err == 0)
        return "success";
    const char *name = strerrorname_np(err);
    return name ? name : "errno " + std::to_string(err);
}

Process::Process(const Setup &s, unsigned i)
    : setup(s), info(s.info), stats(s.shared->stats), index(i),
      page(static_cast<size_t>(sysconf(_SC_PAGESIZE))),
      window_len((s.info.out_mmap_size + page - 1) / page * page),
      blocked(new std::atomic<int64_t>[s.opt.threads]())
{
    region_len_ = kSlots * window_len + (kFlipPages + kHolePages) * page +
                  s.opt.threads * (kScratch + page);
    void *p = mmap(nullptr, region_len_, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return;
    region_ = static_cast<uint8_t *>(p);
    for (unsigned k = 0; k < kSlots; k++) {
        auto slot = std::make_unique<Slot>();
        slot->pool = k < s.pool_slots;
        slot->window = region_ + k * window_len;
        slot->pooled.assign(window_len / page, 0);
        slots.push_back(std::move(slot));
    }
    flip = region_ + kSlots * window_len;
    hole = flip + kFlipPages * page;
    for (unsigned t = 0; t < s.opt.threads; t++)
        if (mprotect(scratch(t), kScratch, PROT_READ | PROT_WRITE)) {
            munmap(region_, region_len_);
            region_ = nullptr;
            return;
        }
}

Process::~Process()
{
    if (region_)
        munmap(region_, region_len_);
}

uint8_t *Process::scratch(unsigned thread) const
{
    return hole + kHolePages * page + thread * (kScratch + page);
}

void Process::reset_window(Slot &s)
{
    if (map_fixed(s.window, window_len, PROT_NONE) == MAP_FAILED) {
        // the window would be a hole another mapping could move into
        std::perror("ioctl-fuzz: re-reserving a pool window");
        std::abort();
    }
    std::fill(s.pooled.begin(), s.pooled.end(), 0);
}

void Process::watchdog(const std::vector<pthread_t> &threads)
{
    while (!stop_.load()) {
        usleep(5000);
        const int64_t now = now_ms();
        for (size_t t = 0; t < threads.size(); t++) {
            const int64_t since = blocked[t].load();
            if (since && now - since >= kBlockMs)
                pthread_kill(threads[t], SIGUSR1);
        }
    }
}

int Process::run()
{
    if (!region_) {
        std::perror("ioctl-fuzz: reserving the address region");
        return 2;
    }
    struct sigaction sa = {};
    sa.sa_handler = on_signal; // no SA_RESTART: the call ends with EINTR
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, nullptr);

    std::vector<std::unique_ptr<Thread>> threads;
    for (unsigned t = 0; t < setup.opt.threads; t++)
        threads.push_back(std::make_unique<Thread>(*this, t));
    std::vector<std::thread> running;
    std::vector<pthread_t> handles;
    for (auto &t : threads) {
        running.emplace_back([&t] { t->run(); });
        handles.push_back(running.back().native_handle());
    }
    std::thread dog([&] { watchdog(handles); });
    // the watchdog signals only threads that have not been joined yet
    for (unsigned t = 0; t < setup.opt.threads; t++)
        while (setup.shared->status(index, t).ops.load() < setup.opt.ops)
            usleep(10000);
    stop_.store(true);
    dog.join();
    for (auto &t : running)
        t.join();

    // the files go, and with their mappings their pools
    for (auto &s : slots) {
        std::lock_guard g(s->m);
        reset_window(*s);
        const int fd = s->fd.exchange(-1);
        if (fd >= 0)
            close(fd);
    }
    return 0;
}

int run_process(const Setup &setup, unsigned process)
{
    Process p(setup, process);
    return p.run();
}

Thread::Thread(Process &p, unsigned i)
    : proc(p), index(i), rng(derive_seed(p.setup.opt.seed, p.index, i)),
      scratch(p.scratch(i)), status(p.setup.shared->status(p.index, i)),
      params(smbd::device::default_params())
{
    // a connection nobody serves goes within seconds
    params.negotiate_timeout_ms = 5000;
    params.setup_timeout_ms = 5000;
    params.credit_timeout_ms = 5000;
    params.keepalive_interval_ms = 2000;
    params.keepalive_timeout_ms = 2000;
    valid_params = params.to_uapi();
}

void Thread::run()
{
    for (op_no = 0; op_no < proc.setup.opt.ops; op_no++) {
        step();
        status.ops.fetch_add(1);
    }
}

void Thread::step()
{
    bump = kCmdArea;
    Slot &s = *proc.slots[rng.below(kSlots)];
    switch (weighted(rng, kActionWeights)) {
    case A_COMMAND: {
        const unsigned op = weighted(rng, kCommandWeights);
        status.op = op;
        command(op, borrow_slot(s));
        break;
    }
    case A_RANDOM_IOCTL:
        status.op = OP_IOCTL_RANDOM;
        random_ioctl(borrow_slot(s));
        break;
    case A_MMAP:
        status.op = OP_MMAP;
        do_mmap(s);
        break;
    case A_MUNMAP:
        status.op = OP_MUNMAP;
        do_munmap(s);
        break;
    case A_TOUCH:
        touch(s);
        break;
    case A_POLL:
        status.op = OP_POLL;
        do_poll(borrow_slot(s));
        break;
    case A_READ:
        status.op = OP_READ;
        do_read(borrow_slot(s));
        break;
    case A_FCNTL:
        status.op = OP_FCNTL;
        do_fcntl(borrow_slot(s));
        break;
    case A_CLOSE:
        status.op = OP_CLOSE;
        close_slot(s);
        break;
    case A_CYCLE:
        status.op = OP_OPEN;
        open_close_cycle();
        break;
    case A_FORK:
        status.op = OP_COUNT;
        fork_child(s);
        break;
    case A_FLIP:
        flip_page();
        break;
    }
}

Handle Thread::borrow_slot(Slot &s)
{
    // a closed file is mostly opened again; else the call gets EBADF
    if (s.fd.load() < 0 && rng.percent(80)) {
        std::lock_guard g(s.m);
        reopen_locked(s);
    }
    Handle h;
    h.slot = &s;
    h.gen = s.gen.load();
    h.fd = s.fd.load();
    h.pool = s.pool;
    return h;
}

void Thread::reopen_locked(Slot &s)
{
    if (s.fd.load() >= 0)
        return;
    // the closed file's pool goes with its mapping: one pool per slot
    if (s.pool)
        proc.reset_window(s);
    s.conns.clear();
    const int fd =
        open("/dev/" SMBD_DEVICE_NAME,
             O_RDWR | O_CLOEXEC | (rng.percent(50) ? O_NONBLOCK : 0));
    // ENOMEM: the file's state is allocated at open (main.c)
    check(OP_OPEN, fd < 0 ? errno : 0, errnos({0, ENOMEM}), Handle{}, "shared");
    if (fd >= 0)
        s.fd.store(fd);
}

std::vector<uint64_t> Thread::conns_of(const Handle &h)
{
    if (!h.slot)
        return {};
    std::lock_guard g(h.slot->m);
    return h.slot->conns;
}

bool Thread::remember_conn(Slot *s, uint64_t id)
{
    // the others are left to their peer's flow: answered, echoed, served,
    // never picked at random, so that some get as far as RDMA
    if (!s || rng.percent(50))
        return false;
    std::lock_guard g(s->m);
    if (std::find(s->conns.begin(), s->conns.end(), id) != s->conns.end())
        return true;
    if (s->conns.size() >= kMaxConns)
        s->conns.erase(s->conns.begin());
    s->conns.push_back(id);
    return true;
}

void Thread::forget_conn(Slot *s, uint64_t id)
{
    if (!s)
        return;
    std::lock_guard g(s->m);
    std::erase(s->conns, id);
}

uint8_t *Thread::alloc(size_t n)
{
    const size_t at = (bump + 7) & ~size_t{7};
    if (n > kScratch - kEdgeArea || at + n > kScratch - kEdgeArea)
        return nullptr;
    bump = at + n;
    return scratch + at;
}

uint64_t Thread::bad_pointer()
{
    switch (rng.below(6)) {
    case 0:
        return 0;
    case 1: // the kernel's half
        return 0xffff800000000000ull + rng.below(1ull << 40);
    case 2: // non-canonical
        return (rng.next() | 1ull << 63) & ~(1ull << 62);
    case 3: // below mmap_min_addr
        return rng.below(65536);
    case 4: // reserved, never mapped
        return reinterpret_cast<uint64_t>(proc.hole) +
               rng.below(kHolePages * proc.page);
    default:
        return UINT64_MAX - rng.below(4096);
    }
}

uint64_t Thread::shared_pointer(size_t need)
{
    // the windows' end is left alone: event data may run past what was
    // asked for
    const size_t spare = 2 << 20;
    const size_t room =
        proc.window_len > need + spare ? proc.window_len - need - spare : 0;
    if (room && rng.percent(70)) {
        const Slot &s = *proc.slots[rng.below(kSlots)];
        return reinterpret_cast<uint64_t>(s.window + rng.below(room));
    }
    return reinterpret_cast<uint64_t>(proc.flip) +
           rng.below(kFlipPages * proc.page);
}

uint64_t Thread::pointer(size_t need, Ptr &kind, bool odd)
{
    if (!odd) {
        if (uint8_t *p = alloc(need + 8)) {
            kind = Ptr::Private;
            return reinterpret_cast<uint64_t>(
                p + (rng.percent(10) ? rng.range(1, 7) : 0));
        }
    }
    switch (rng.below(3)) {
    case 0:
        kind = Ptr::Bad;
        return bad_pointer();
    case 1:
        kind = Ptr::Shared;
        return shared_pointer(need);
    default:
        kind = Ptr::Edge;
        return reinterpret_cast<uint64_t>(scratch + kScratch -
                                          rng.below(std::min(need, kEdgeArea)));
    }
}

const char *ptr_name(Ptr kind)
{
    switch (kind) {
    case Ptr::Private:
        return "private";
    case Ptr::Edge:
        return "edge";
    case Ptr::Shared:
        return "shared";
    default:
        return "bad";
    }
}

uint64_t Thread::put(const void *data, size_t n, Request &req, const char *name,
                     Ptr *kind_out)
{
    Ptr kind;
    const uint64_t p = pointer(n, kind, chance(12));
    auto *dst = reinterpret_cast<uint8_t *>(p);
    if (kind == Ptr::Private) {
        if (n)
            std::memcpy(dst, data, n);
    }
    else {
        if (kind == Ptr::Edge && n)
            std::memcpy(dst, data,
                        std::min<size_t>(n, scratch + kScratch - dst));
        req.mutated(std::string(name) + "=" + ptr_name(kind));
    }
    if (kind_out)
        *kind_out = kind;
    return p;
}

uint64_t Thread::space(size_t n, Request &req, const char *name, Ptr *kind_out)
{
    Ptr kind;
    const uint64_t p = pointer(n, kind, chance(12));
    if (kind != Ptr::Private)
        req.mutated(std::string(name) + "=" + ptr_name(kind));
    if (kind_out)
        *kind_out = kind;
    return p;
}

bool Thread::check(unsigned op, int err, Errnos allowed, const Handle &h,
                   const std::string &what, bool on_fd)
{
    // a closed shared file: the number is free (nothing else opens here)
    if (on_fd && h.slot && h.fd < 0)
        allowed = errnos({EBADF});
    // closed while the call was on its way: the number may be gone
    if (h.raced())
        allowed.set(EBADF);
    const int slot = err < kErrnoSlots ? err : kErrnoSlots - 1;
    proc.stats.results[op][slot].fetch_add(1);
    if (err < kErrnoSlots && allowed.test(static_cast<size_t>(err)))
        return true;
    std::string expected;
    for (int e = 0; e < kErrnoSlots; e++)
        if (allowed.test(static_cast<size_t>(e)))
            expected += " " + errno_name(e);
    violation(std::string(op_name(op)) + " got " + errno_name(err) +
              ", allowed:" + expected + "; " + what);
    return false;
}

void Thread::violation(const std::string &msg)
{
    proc.stats.violations.fetch_add(1);
    if (proc.printed.fetch_add(1) < kMaxPrinted)
        std::fprintf(stderr,
                     "ioctl-fuzz: FAIL process %u thread %u op %llu: %s\n",
                     proc.index, index, static_cast<unsigned long long>(op_no),
                     msg.c_str());
}

void Thread::do_mmap(Slot &s)
{
    std::lock_guard g(s.m);
    if (s.fd.load() < 0 && rng.percent(50))
        reopen_locked(s);
    Handle h;
    h.slot = &s;
    h.fd = s.fd.load();
    h.gen = s.gen.load();
    const size_t size = proc.info.out_mmap_size;
    const size_t page = proc.page;

    if (s.pool && h.fd >= 0 && rng.percent(50)) {
        // into the window, exactly as the header says
        const bool rw = rng.percent(80);
        void *p =
            mmap(s.window, size, PROT_READ | (rw ? PROT_WRITE : 0),
                 MAP_SHARED | MAP_FIXED | (rng.percent(20) ? MAP_POPULATE : 0),
                 h.fd, 0);
        const int err = p == MAP_FAILED ? errno : 0;
        // ENOMEM: the pool's pages are allocated at the first mapping
        check(OP_MMAP, err, errnos({0, ENOMEM}), h, "window");
        if (err) {
            proc.reset_window(s);
            return;
        }
        proc.stats.mmaps++;
        std::fill(s.pooled.begin(), s.pooled.begin() + size / page, rw ? 2 : 1);
        return;
    }

    // anywhere, the geometry mutated: only the exact one may work
    const uint64_t lengths[] = {
        size, size - page + 1, size + page, size - page, page,
        0,    2 * size,        1ull << 46};
    const uint64_t offsets[] = {
        0, 0, page, size, 1, rng.below(1 << 20) * page, ~uint64_t{0} << 12};
    const int flags[] = {MAP_SHARED, MAP_SHARED, MAP_PRIVATE,
                         MAP_SHARED | MAP_NORESERVE};
    const int prots[] = {PROT_READ | PROT_WRITE, PROT_READ, PROT_NONE};
    uint64_t len = rng.pick(lengths);
    const uint64_t off = rng.pick(offsets);
    const int flag = rng.pick(flags);
    const int prot = rng.pick(prots);
    auto exact = [&] {
        return (len + page - 1) / page * page == size && off == 0 &&
               (flag & MAP_SHARED);
    };
    if (!s.pool && exact())
        len = size + page; // no pool for this file: the memory budget
    const bool valid = exact();
    char what[96];
    std::snprintf(what, sizeof(what), "len=%#llx off=%#llx flags=%#x prot=%#x",
                  static_cast<unsigned long long>(len),
                  static_cast<unsigned long long>(off), flag, prot);
    void *p = mmap(nullptr, len, prot, flag, h.fd, static_cast<off_t>(off));
    const int err = p == MAP_FAILED ? errno : 0;
    // EINVAL: the driver's geometry checks, an unaligned offset or no
    // length; ENOMEM: a length the address space cannot take, or the
    // pool; EOVERFLOW: an offset past what the page offset can express
    // for a character device (do_mmap's file_mmap_ok). No file: EBADF,
    // but an unaligned offset is refused before the descriptor is looked at.
    Errnos allowed =
        valid ? errnos({0, ENOMEM}) : errnos({EINVAL, ENOMEM, EOVERFLOW});
    if (h.fd < 0)
        allowed = errnos({EBADF, EINVAL});
    check(OP_MMAP, err, allowed, h, what, false);
    if (err)
        return;
    proc.stats.mmaps++;
    auto *base = static_cast<uint8_t *>(p);
    if (prot & PROT_WRITE)
        for (size_t at = 0; at < size; at += proc.info.out_buffer_size)
            base[at] = static_cast<uint8_t>(rng.next());
    if (rng.percent(50)) {
        const size_t first = rng.below(size / page);
        const size_t n = rng.range(1, size / page - first);
        check(OP_MUNMAP, munmap(base + first * page, n * page) ? errno : 0,
              errnos({0}), Handle{}, "part of a mapping");
    }
    check(OP_MUNMAP, munmap(base, size) ? errno : 0, errnos({0}), Handle{},
          "a mapping");
}

void Thread::do_munmap(Slot &s)
{
    std::lock_guard g(s.m);
    const size_t pages = s.pooled.size();
    if (std::none_of(s.pooled.begin(), s.pooled.end(),
                     [](uint8_t p) { return p != 0; }))
        return;
    size_t first = 0, n = pages;
    if (rng.percent(70)) {
        first = rng.below(pages);
        n = rng.range(1, pages - first);
    }
    // replacing the pages unmaps the pool there as munmap() would, and
    // leaves no hole
    void *p = map_fixed(s.window + first * proc.page, n * proc.page, PROT_NONE);
    check(OP_MUNMAP, p == MAP_FAILED ? errno : 0, errnos({0}), Handle{},
          "part of a window");
    std::fill(s.pooled.begin() + static_cast<ptrdiff_t>(first),
              s.pooled.begin() + static_cast<ptrdiff_t>(first + n), 0);
}

void Thread::touch(Slot &s)
{
    // mapped pages stay valid while mapped, even after the file is closed
    std::lock_guard g(s.m);
    const size_t pages = s.pooled.size();
    for (int i = 0; i < 8 && pages > 0; i++) {
        const size_t k = rng.below(pages);
        volatile uint8_t *b = s.window + k * proc.page + rng.below(proc.page);
        if (s.pooled[k] >= 1)
            (void)*b;
        if (s.pooled[k] == 2)
            *b = static_cast<uint8_t>(rng.next());
    }
}

void Thread::do_poll(const Handle &h)
{
    const int timeouts[] = {0, 0, 1, 10, 50};
    pollfd p = {h.fd, POLLIN | POLLPRI | POLLOUT, 0};
    int r;
    {
        InUse use(h);
        proc.blocked[index] = now_ms();
        r = poll(&p, 1, rng.pick(timeouts));
        proc.blocked[index] = 0;
    }
    check(OP_POLL, r < 0 ? errno : 0, errnos({0, EINTR}), h, "poll", false);
    if (r <= 0)
        return;
    // readable when events are queued, nothing else; POLLNVAL once closed
    if ((p.revents & ~(POLLIN | POLLNVAL)) ||
        ((p.revents & POLLNVAL) && !h.raced()))
        violation("poll revents " + std::to_string(p.revents));
}

void Thread::do_read(const Handle &h)
{
    const uint64_t lengths[] = {0, 1, 64, 4096, 1 << 20, UINT64_MAX};
    const uint64_t len = rng.pick(lengths);
    Ptr kind;
    const uint64_t buf =
        pointer(std::min<uint64_t>(len, 4096), kind, rng.percent(30));
    long r;
    {
        InUse use(h);
        r = syscall(SYS_read, h.fd, buf, len);
    }
    // the driver has no read(): VFS refuses it before looking at the buffer
    check(OP_READ, r < 0 ? errno : 0, errnos({EINVAL}), h,
          std::string("buf=") + ptr_name(kind));
}

void Thread::do_fcntl(const Handle &h)
{
    InUse use(h);
    const int fl = fcntl(h.fd, F_GETFL);
    if (fl < 0) {
        check(OP_FCNTL, errno, Errnos{}, h, "F_GETFL");
        return;
    }
    const int r = fcntl(h.fd, F_SETFL, fl ^ O_NONBLOCK);
    check(OP_FCNTL, r < 0 ? errno : 0, errnos({0}), h, "F_SETFL");
}

void Thread::close_slot(Slot &s)
{
    int fd;
    {
        std::lock_guard g(s.m);
        fd = s.fd.load();
        if (fd < 0)
            return;
        // the number first: a borrower that reads the new gen then sees
        // -1, and one that read the old gen finds the bump after its call
        s.fd.store(-1);
        s.gen++;
        s.conns.clear();
        if (s.users.load() > 0)
            proc.stats.closes++;
    }
    // the file goes once the calls still on it are done and, if mapped,
    // once its window is replaced
    check(OP_CLOSE, close(fd) ? errno : 0, errnos({0}), Handle{}, "shared");
    if (rng.percent(50)) {
        std::lock_guard g(s.m);
        reopen_locked(s);
    }
}

int Thread::open_private()
{
    int fd = open("/dev/" SMBD_DEVICE_NAME,
                  O_RDWR | O_CLOEXEC | (rng.percent(50) ? O_NONBLOCK : 0));
    check(OP_OPEN, fd < 0 ? errno : 0, errnos({0, ENOMEM}), Handle{},
          "private");
    if (fd < 0)
        return fd;
    // far above the shared files' numbers: a call racing with a shared
    // file's close never lands here
    const int high = fcntl(fd, F_DUPFD_CLOEXEC, kPrivateFds);
    if (high < 0)
        violation("F_DUPFD: " + errno_name(errno));
    close(fd);
    return high;
}

void Thread::open_close_cycle()
{
    if (rng.percent(50)) {
        roles_and_sessions();
        return;
    }
    Handle h;
    h.fd = open_private();
    if (h.fd < 0)
        return;
    // roles and sessions taken here are given up by the close
    const unsigned ops[] = {
        OP_GET_INFO,       OP_SET_PARAMS,       OP_LISTEN,
        OP_ACCEPT,         OP_REGISTER_SESSION, OP_UNREGISTER_SESSION,
        OP_GET_MEM_PARAMS, OP_GET_EVENTS,       OP_SEND_PDU,
        OP_RDMA_RW,        OP_DISCONNECT,       OP_CONN_STATS};
    for (uint64_t i = rng.range(1, 3); i > 0; i--)
        command(rng.pick(ops), h);
    check(OP_CLOSE, close(h.fd) ? errno : 0, errnos({0}), Handle{}, "private");
}

int Thread::simple(unsigned op, const Handle &h, void *arg, Errnos allowed,
                   const char *what)
{
    const int err =
        syscall(SYS_ioctl, h.fd, smbd_command_nr(op), arg) < 0 ? errno : 0;
    check(op, err, allowed, h, what);
    return err;
}

// What a private file does with roles and sessions follows the header
// exactly: the holder of a role may ask again, its own session registers
// twice and unregisters once, and its close gives the session up.
void Thread::roles_and_sessions()
{
    // no fork child may inherit the file and keep it open past its close
    std::shared_lock no_fork(proc.fork_m);
    Handle a;
    a.fd = open_private();
    if (a.fd < 0)
        return;
    smbd_set_params sp = valid_params;
    smbd_listen l = {sizeof(l), 0};
    if (simple(OP_SET_PARAMS, a, &sp, errnos({0, EBUSY, ENOMEM}),
               "a private file's first SET_PARAMS") == 0)
        simple(OP_SET_PARAMS, a, &sp, errnos({0, ENOMEM}),
               "SET_PARAMS again by the master");
    if (simple(OP_LISTEN, a, &l, errnos({0, EBUSY}),
               "a private file's first LISTEN") == 0)
        simple(OP_LISTEN, a, &l, errnos({0}), "LISTEN again by the listener");

    // an id nobody else uses
    smbd_session s = {sizeof(s), 0,
                      1ull << 63 | uint64_t{proc.index} << 48 |
                          uint64_t{index} << 40 | (op_no & 0xffffffffff)};
    simple(OP_REGISTER_SESSION, a, &s, errnos({0, ENOMEM}), "a new session");
    simple(OP_REGISTER_SESSION, a, &s, errnos({0}), "the file's own session");
    simple(OP_UNREGISTER_SESSION, a, &s, errnos({0}), "the file's session");
    simple(OP_UNREGISTER_SESSION, a, &s, errnos({ENOENT}),
           "a session unregistered");
    simple(OP_REGISTER_SESSION, a, &s, errnos({0, ENOMEM}),
           "a session unregistered");
    check(OP_CLOSE, close(a.fd) ? errno : 0, errnos({0}), Handle{}, "private");

    Handle b;
    b.fd = open_private();
    if (b.fd < 0)
        return;
    simple(OP_REGISTER_SESSION, b, &s, errnos({0, ENOMEM}),
           "a session whose file was closed");
    check(OP_CLOSE, close(b.fd) ? errno : 0, errnos({0}), Handle{}, "private");
}

void Thread::flip_page()
{
    std::lock_guard g(proc.flip_m);
    const unsigned i = static_cast<unsigned>(rng.below(kFlipPages));
    const int prot = proc.flip_mapped[i] ? PROT_NONE : PROT_READ | PROT_WRITE;
    if (map_fixed(proc.flip + i * proc.page, proc.page, prot) == MAP_FAILED) {
        violation("flipping a page: " + errno_name(errno));
        return;
    }
    proc.flip_mapped[i] = !proc.flip_mapped[i];
}

} // namespace fuzz
