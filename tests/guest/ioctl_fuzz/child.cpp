// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
// fork() with the files and the pool mapped: the child finds the pool's
// pages absent (VM_DONTCOPY) without touching them, is refused every
// command and the pool on the inherited file (EBADFD: a file serves its
// opener), and on a file of its own is refused the master's roles without
// CAP_NET_ADMIN and ACCEPT and REGISTER_SESSION as another user. It runs
// on raw system calls only: the parent's other threads may hold locks (the
// allocator's, stdio's) that stay held in the child.
#include "worker.h"

#include "caps.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <string>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

namespace fuzz {

namespace {

void on_alarm(int) {}

// /proc/<pid>/stack on one line: where a hung child waits.
std::string kernel_stack(pid_t pid)
{
    std::ifstream f("/proc/" + std::to_string(pid) + "/stack");
    std::string line, all;
    while (std::getline(f, line))
        all += " " + line.substr(line.find(' ') + 1);
    return all.empty() ? " (no stack)" : all;
}

// A message built without allocating, written in one write().
class Line {
  public:
    Line &s(const char *str)
    {
        while (*str && n_ < sizeof(b_) - 1)
            b_[n_++] = *str++;
        return *this;
    }
    Line &u(uint64_t v)
    {
        char d[24];
        int k = 0;
        do
            d[k++] = static_cast<char>('0' + v % 10);
        while ((v /= 10) && k < 24);
        while (k && n_ < sizeof(b_) - 1)
            b_[n_++] = d[--k];
        return *this;
    }
    Line &e(int err)
    {
        const char *name = err ? strerrorname_np(err) : "success";
        return name ? s(name) : u(static_cast<uint64_t>(err));
    }
    void emit()
    {
        b_[n_++] = '\n';
        ssize_t r = write(2, b_, n_);
        (void)r;
    }

  private:
    char b_[256];
    size_t n_ = 0;
};

struct Child {
    const ChildPlan &plan;
    bool ok = true;

    void fail(const char *what, int err)
    {
        ok = false;
        plan.stats->violations.fetch_add(1);
        Line()
            .s("ioctl-fuzz: FAIL process ")
            .u(plan.process)
            .s(" thread ")
            .u(plan.thread)
            .s(" op ")
            .u(plan.op_no)
            .s(": fork child: ")
            .s(what)
            .s(": ")
            .e(err)
            .emit();
    }

    void count(unsigned op, int err)
    {
        plan.stats->results[op][err < kErrnoSlots ? err : kErrnoSlots - 1]
            .fetch_add(1);
    }

    int call(int fd, unsigned op, unsigned long nr, void *arg)
    {
        const int err = syscall(SYS_ioctl, fd, nr, arg) < 0 ? errno : 0;
        count(op, err);
        return err;
    }
};

} // namespace

void child_main(const ChildPlan &plan)
{
    Child c{plan};
    // a GET_EVENTS on a blocking file ends with EINTR
    struct sigaction sa = {};
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, nullptr);
    const itimerval tick = {{0, 50000}, {0, 50000}};
    setitimer(ITIMER_REAL, &tick, nullptr);

    unsigned char vec[1];
    for (unsigned i = 0; i < plan.npool; i++)
        if (syscall(SYS_mincore, plan.pool_pages[i], plan.page, vec) == 0 ||
            errno != ENOMEM)
            c.fail("a pool page is mapped after fork", errno);
    // the reserved range around it was copied: mincore() works there
    if (syscall(SYS_mincore, plan.control, plan.page, vec))
        c.fail("mincore on a reserved page", errno);

    for (unsigned i = 0; i < plan.ncalls; i++) {
        const auto &k = plan.calls[i];
        const int err = c.call(plan.fd, k.op, k.nr, k.arg);
        if (err != EBADFD)
            c.fail(op_name(k.op), err);
    }

    if (plan.map_pool) {
        const long r = syscall(SYS_mmap, nullptr, plan.mmap_size, PROT_READ,
                               MAP_SHARED, plan.fd, 0);
        const int err = r == -1 ? errno : 0;
        c.count(OP_MMAP, err);
        if (err != EBADFD)
            c.fail("mmap of the inherited file", err);
        if (!err)
            syscall(SYS_munmap, r, plan.mmap_size);
    }

    // the privilege checks, on a file of the child's own
    const int own =
        static_cast<int>(syscall(SYS_openat, AT_FDCWD, "/dev/" SMBD_DEVICE_NAME,
                                 O_RDWR | O_CLOEXEC | O_NONBLOCK));
    if (own < 0) {
        c.fail("opening a file of its own", errno);
        _exit(1);
    }
    if (!guest::drop_net_admin()) {
        c.fail("dropping CAP_NET_ADMIN", errno);
    }
    else {
        int err =
            c.call(own, OP_SET_PARAMS, SMBD_IOC_SET_PARAMS, plan.set_params);
        if (err != EPERM)
            c.fail("SET_PARAMS without CAP_NET_ADMIN", err);
        err = c.call(own, OP_LISTEN, SMBD_IOC_LISTEN, plan.listen);
        if (err != EPERM)
            c.fail("LISTEN without CAP_NET_ADMIN", err);
        err = c.call(own, OP_CONN_STATS, SMBD_IOC_CONN_STATS, plan.conn_stats);
        if (err != ENOENT)
            c.fail("CONN_STATS of another file's connection without "
                   "CAP_NET_ADMIN",
                   err);
    }
    if (!guest::become_nobody()) {
        c.fail("becoming nobody", errno);
    }
    else {
        int err = c.call(own, OP_ACCEPT, SMBD_IOC_ACCEPT, plan.accept);
        if (err != EPERM && err != ENOENT)
            c.fail("ACCEPT as another user", err);
        err = c.call(own, OP_REGISTER_SESSION, SMBD_IOC_REGISTER_SESSION,
                     plan.register_session);
        if (err != EPERM)
            c.fail("REGISTER_SESSION as another user", err);
    }
    _exit(c.ok ? 0 : 1);
}

void Thread::fork_child(Slot &s)
{
    std::unique_lock g(s.m); // the window stays as the plan says
    if (s.fd.load() < 0)
        reopen_locked(s);
    ChildPlan plan = {};
    plan.fd = s.fd.load();
    if (plan.fd < 0)
        return;
    plan.page = proc.page;
    plan.control = proc.hole;
    std::vector<size_t> pooled;
    for (size_t i = 0; i < s.pooled.size(); i++)
        if (s.pooled[i])
            pooled.push_back(i);
    for (; plan.npool < 8 && !pooled.empty(); plan.npool++)
        plan.pool_pages[plan.npool] =
            s.window + pooled[rng.below(pooled.size())] * proc.page;

    auto add = [&](unsigned op, unsigned long nr, void *arg) {
        plan.calls[plan.ncalls++] = {op, nr, arg};
    };
    auto *info = reinterpret_cast<smbd_info *>(alloc(sizeof(smbd_info)));
    *info = {};
    info->size = sizeof(*info);
    add(OP_GET_INFO, SMBD_IOC_GET_INFO, info);
    auto *ge =
        reinterpret_cast<smbd_get_events *>(alloc(sizeof(smbd_get_events)));
    *ge = {};
    ge->size = sizeof(*ge);
    ge->max_events = 4;
    ge->event_size = sizeof(smbd_event);
    ge->events_ptr = reinterpret_cast<uint64_t>(alloc(4 * sizeof(smbd_event)));
    ge->data_len = 64 << 10;
    ge->data_ptr = reinterpret_cast<uint64_t>(alloc(ge->data_len));
    add(OP_GET_EVENTS, SMBD_IOC_GET_EVENTS, ge);
    auto *reg = reinterpret_cast<smbd_session *>(alloc(sizeof(smbd_session)));
    *reg = {sizeof(smbd_session), 0, 0};
    while (!reg->session_id)
        reg->session_id = session_id();
    add(OP_REGISTER_SESSION, SMBD_IOC_REGISTER_SESSION, reg);
    plan.register_session = reg;
    auto *d =
        reinterpret_cast<smbd_disconnect *>(alloc(sizeof(smbd_disconnect)));
    *d = {sizeof(smbd_disconnect), 0, 0};
    if (!s.conns.empty())
        d->conn_id = s.conns[rng.below(s.conns.size())];
    add(OP_DISCONNECT, SMBD_IOC_DISCONNECT, d);
    auto *cs =
        reinterpret_cast<smbd_conn_stats *>(alloc(sizeof(smbd_conn_stats)));
    *cs = {};
    cs->size = sizeof(*cs);
    cs->conn_id = d->conn_id;
    add(OP_CONN_STATS, SMBD_IOC_CONN_STATS, cs);
    plan.conn_stats = cs;

    auto *sp =
        reinterpret_cast<smbd_set_params *>(alloc(sizeof(smbd_set_params)));
    *sp = valid_params;
    plan.set_params = sp;
    auto *l = reinterpret_cast<smbd_listen *>(alloc(sizeof(smbd_listen)));
    *l = {sizeof(smbd_listen), 0};
    plan.listen = l;
    auto *a = reinterpret_cast<smbd_accept *>(alloc(sizeof(smbd_accept)));
    *a = {};
    a->size = sizeof(*a);
    if (!proc.setup.shared->tokens.get(rng, a->token))
        for (auto &b : a->token)
            b = static_cast<uint8_t>(rng.next());
    plan.accept = a;

    if (s.pool && rng.percent(50)) {
        plan.map_pool = true;
        plan.mmap_size = proc.info.out_mmap_size;
    }
    plan.stats = &proc.stats;
    plan.process = proc.index;
    plan.thread = index;
    plan.op_no = op_no;

    std::unique_lock no_cycle(proc.fork_m);
    const pid_t pid = fork();
    if (pid == 0)
        child_main(plan);
    const int err = errno;
    no_cycle.unlock();
    g.unlock();
    if (pid < 0) {
        violation("fork: " + errno_name(err));
        return;
    }
    proc.stats.forks++;
    int st = 0;
    // below the fuzzer's stall limit: on the debug kernel under load,
    // children outlived 60 s; the stack tells where one waits
    for (const int64_t deadline = now_ms() + 150000;;) {
        if (waitpid(pid, &st, WNOHANG) == pid)
            break;
        if (now_ms() > deadline) {
            const std::string where = kernel_stack(pid);
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            violation("the fork child hung, in the kernel at:" + where);
            return;
        }
        usleep(1000);
    }
    if (WIFSIGNALED(st))
        violation("the fork child died by signal " +
                  std::to_string(WTERMSIG(st)) + " (" +
                  sigabbrev_np(WTERMSIG(st)) + ")");
}

} // namespace fuzz
