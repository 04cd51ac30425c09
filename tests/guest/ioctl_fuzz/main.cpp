// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
// smbdirect-ioctl-fuzz (see fuzz.h): the parent forks the worker processes,
// watches them progress, and once all are gone checks that a fresh file
// gets GET_INFO and the master's roles. It prints one line per command with
// its errno histogram, then the summary line make check-debug parses.
#include <linux/smbd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <new>
#include <string>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "device.h"
#include "fuzz.h"
#include "memory.h"

using namespace fuzz;

namespace {

// No worker finishing an operation for this long is a hang.
constexpr int kStallSeconds = 180;

void usage(FILE *out)
{
    std::fprintf(
        out, "usage: smbdirect-ioctl-fuzz [options]\n"
             "  --seed N        seed of every random choice (default: from the "
             "clock)\n"
             "  --processes P   worker processes (default 4)\n"
             "  --threads T     threads per process (default 3)\n"
             "  --ops N         operations per thread (default 2000)\n"
             "  --quiet         only the seed, failures and the summary line\n"
             "exit status: 0 when every check passed, 1 when not, 2 on usage "
             "errors\n");
}

bool parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t &out)
{
    char *end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(s, &end, 0);
    if (errno || end == s || *end || s[0] == '-' || v < min || v > max)
        return false;
    out = v;
    return true;
}

bool parse(int argc, char **argv, Options &opt)
{
    bool seeded = false;
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
        uint64_t n = 0;
        if (a == "--quiet") {
            opt.quiet = true;
            continue;
        }
        if (a == "--help" || a == "-h") {
            usage(stdout);
            std::exit(0);
        }
        if (!v)
            return false;
        i++;
        if (a == "--seed" && parse_u64(v, 0, UINT64_MAX, n)) {
            opt.seed = n;
            seeded = true;
        }
        else if (a == "--processes" && parse_u64(v, 1, 64, n)) {
            opt.processes = static_cast<unsigned>(n);
        }
        else if (a == "--threads" && parse_u64(v, 1, 64, n)) {
            opt.threads = static_cast<unsigned>(n);
        }
        else if (a == "--ops" && parse_u64(v, 1, UINT64_MAX, n)) {
            opt.ops = n;
        }
        else {
            return false;
        }
    }
    if (!seeded)
        opt.seed =
            static_cast<uint64_t>(
                std::chrono::system_clock::now().time_since_epoch().count()) ^
            static_cast<uint64_t>(getpid()) << 32;
    return true;
}

std::string name_of(int err)
{
    const char *n = strerrorname_np(err);
    return n ? n : std::to_string(err);
}

// A fresh file once every worker is gone: GET_INFO works, and the master's
// roles are free again. "" or what failed.
std::string fresh_master()
{
    const int fd =
        open("/dev/" SMBD_DEVICE_NAME, O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return "open: " + name_of(errno);
    std::string why;
    smbd_info info = {};
    info.size = sizeof(info);
    const smbd::device::Params params = smbd::device::default_params();
    smbd_set_params sp = params.to_uapi();
    smbd_listen l = {sizeof(l), 0};
    if (ioctl(fd, SMBD_IOC_GET_INFO, &info))
        why = "GET_INFO: " + name_of(errno);
    else if (info.out_abi_version != SMBD_ABI_VERSION)
        why = "GET_INFO: ABI version " + std::to_string(info.out_abi_version);
    else if (ioctl(fd, SMBD_IOC_SET_PARAMS, &sp))
        why = "SET_PARAMS: " + name_of(errno);
    else if (ioctl(fd, SMBD_IOC_LISTEN, &l))
        why = "LISTEN: " + name_of(errno);
    close(fd);
    return why;
}

uint64_t progress(Shared &sh, const Options &opt)
{
    uint64_t n = 0;
    for (unsigned p = 0; p < opt.processes; p++)
        for (unsigned t = 0; t < opt.threads; t++)
            n += sh.status(p, t).ops.load();
    return n;
}

// Waits for the workers; false when they stopped making progress.
bool wait_workers(Shared &sh, const Options &opt, std::vector<pid_t> &pids,
                  std::vector<int> &status)
{
    size_t alive = pids.size();
    uint64_t last = 0;
    auto changed = std::chrono::steady_clock::now();
    while (alive) {
        int st = 0;
        const pid_t pid = waitpid(-1, &st, WNOHANG);
        if (pid > 0) {
            for (size_t p = 0; p < pids.size(); p++)
                if (pids[p] == pid) {
                    status[p] = st;
                    pids[p] = -1;
                }
            alive--;
            continue;
        }
        usleep(100000);
        const uint64_t now = progress(sh, opt);
        if (now != last) {
            last = now;
            changed = std::chrono::steady_clock::now();
            continue;
        }
        if (std::chrono::steady_clock::now() - changed <
            std::chrono::seconds(kStallSeconds))
            continue;
        std::fprintf(stderr, "ioctl-fuzz: FAIL: no progress for %d s\n",
                     kStallSeconds);
        for (unsigned p = 0; p < opt.processes; p++)
            for (unsigned t = 0; t < opt.threads; t++) {
                const ThreadStatus &ts = sh.status(p, t);
                if (ts.ops.load() == opt.ops)
                    continue;
                const unsigned op = ts.op.load();
                std::fprintf(stderr,
                             "ioctl-fuzz:   process %u thread %u: %llu ops "
                             "done, in %s\n",
                             p, t,
                             static_cast<unsigned long long>(ts.ops.load()),
                             op < OP_COUNT ? op_name(op) : "fork");
            }
        for (pid_t p : pids)
            if (p > 0)
                kill(p, SIGKILL);
        return false;
    }
    return true;
}

// One line per command with its errno histogram, then the summary line;
// the exit code.
int report(const Options &opt, const Stats &stats, bool pass)
{
    uint64_t ioctls = 0, ok = 0;
    for (unsigned op = 0; op < OP_COUNT; op++) {
        uint64_t calls = 0;
        std::string hist;
        for (int e = 0; e < kErrnoSlots; e++) {
            const uint64_t n = stats.results[op][e].load();
            calls += n;
            if (e && n)
                hist += " " + name_of(e) + "=" + std::to_string(n);
        }
        if (is_ioctl(op)) {
            ioctls += calls;
            ok += stats.results[op][0].load();
        }
        if (!opt.quiet && calls)
            std::printf(
                "cmd %-18s calls=%llu ok=%llu%s\n", op_name(op),
                static_cast<unsigned long long>(calls),
                static_cast<unsigned long long>(stats.results[op][0].load()),
                hist.c_str());
    }
    std::printf("IOCTLFUZZ seed=%llu processes=%u threads=%u ioctls=%llu "
                "ok=%llu failed=%llu accepted=%llu forks=%llu mmaps=%llu "
                "closes=%llu result=%s\n",
                static_cast<unsigned long long>(opt.seed), opt.processes,
                opt.threads, static_cast<unsigned long long>(ioctls),
                static_cast<unsigned long long>(ok),
                static_cast<unsigned long long>(ioctls - ok),
                static_cast<unsigned long long>(stats.accepted.load()),
                static_cast<unsigned long long>(stats.forks.load()),
                static_cast<unsigned long long>(stats.mmaps.load()),
                static_cast<unsigned long long>(stats.closes.load()),
                pass ? "pass" : "fail");
    return pass ? 0 : 1;
}

} // namespace

int main(int argc, char **argv)
{
    Options opt;
    if (!parse(argc, argv, opt)) {
        usage(stderr);
        return 2;
    }
    std::printf("ioctl-fuzz: seed %llu\n",
                static_cast<unsigned long long>(opt.seed));

    bool pass = true;
    smbd_info info = {};
    info.size = sizeof(info);
    const int fd = open("/dev/" SMBD_DEVICE_NAME, O_RDWR | O_CLOEXEC);
    static const Stats none{};
    if (fd < 0 || ioctl(fd, SMBD_IOC_GET_INFO, &info)) {
        std::fprintf(stderr, "ioctl-fuzz: FAIL: /dev/%s: %s\n",
                     SMBD_DEVICE_NAME, std::strerror(errno));
        return report(opt, none, false);
    }
    close(fd);

    // Each shared file with a pool holds out_mmap_size: at most 2/5 of
    // the free memory goes to pools, the rest of the files never get one.
    const uint64_t per_process = guest::mem_available().value_or(0) * 2 / 5 /
                                 (info.out_mmap_size * opt.processes);
    const unsigned pool_slots =
        static_cast<unsigned>(std::min<uint64_t>(kSlots, per_process));
    if (!opt.quiet)
        std::printf("ioctl-fuzz: %u processes x %u threads x %llu ops; %u of "
                    "%u shared files per process may own a pool of %llu MiB\n",
                    opt.processes, opt.threads,
                    static_cast<unsigned long long>(opt.ops), pool_slots,
                    kSlots,
                    static_cast<unsigned long long>(info.out_mmap_size >> 20));

    const size_t shared_len =
        sizeof(Shared) + opt.processes * opt.threads * sizeof(ThreadStatus);
    void *mem = mmap(nullptr, shared_len, PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) {
        std::perror("ioctl-fuzz: FAIL: shared memory");
        return report(opt, none, false);
    }
    auto *sh = new (mem) Shared();
    sh->threads = opt.threads;
    new (sh + 1) ThreadStatus[opt.processes * opt.threads]();
    const Setup setup = {opt, info, pool_slots, sh};

    std::fflush(stdout);
    std::vector<pid_t> pids;
    for (unsigned p = 0; p < opt.processes; p++) {
        const pid_t pid = fork();
        if (pid == 0)
            _exit(run_process(setup, p));
        if (pid < 0) {
            std::perror("ioctl-fuzz: FAIL: fork");
            pass = false;
            break;
        }
        pids.push_back(pid);
    }
    std::vector<int> status(pids.size(), 0);
    const bool all_gone = wait_workers(*sh, opt, pids, status);
    if (!all_gone)
        pass = false;
    for (size_t p = 0; p < status.size(); p++) {
        const int st = status[p];
        if (WIFSIGNALED(st)) {
            std::fprintf(stderr,
                         "ioctl-fuzz: FAIL: process %zu died by signal "
                         "%d (SIG%s)\n",
                         p, WTERMSIG(st), sigabbrev_np(WTERMSIG(st)));
            pass = false;
        }
        else if (WIFEXITED(st) && WEXITSTATUS(st)) {
            std::fprintf(stderr,
                         "ioctl-fuzz: FAIL: process %zu exited with "
                         "%d\n",
                         p, WEXITSTATUS(st));
            pass = false;
        }
    }
    const Stats &stats = sh->stats;
    if (const uint64_t v = stats.violations.load()) {
        std::fprintf(stderr,
                     "ioctl-fuzz: FAIL: %llu results broke the rules "
                     "(the first of each process above)\n",
                     static_cast<unsigned long long>(v));
        pass = false;
    }
    // once every file is closed the roles are free
    if (all_gone) {
        const std::string why = fresh_master();
        if (!why.empty()) {
            std::fprintf(stderr,
                         "ioctl-fuzz: FAIL: a fresh file after the "
                         "run: %s\n",
                         why.c_str());
            pass = false;
        }
    }

    return report(opt, stats, pass);
}
