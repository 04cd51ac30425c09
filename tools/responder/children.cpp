// The responder's forked children: one per new session, as smbd forks
// them, and their reaping; see responder.h.
#include "responder.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace smbd::responder {

// Like smbd's master: a child per new session, which claims the
// connection by its token.
void Responder::fork_child(const smbd_dev_event &ev)
{
    // flush the log so the child does not print the master's buffer again
    if (opts_.log)
        std::fflush(opts_.log);
    // SIGTERM and SIGINT stop() through stop_fd_, which the child shares
    // with the master until serve_child() makes its own: blocked across
    // fork(), one sent to the child meanwhile waits for that and cannot
    // stop the master
    sigset_t stop_signals, mask;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop_signals, &mask);
    pid_t pid = fork();
    if (pid == 0) {
        uint8_t token[SMBD_TOKEN_SIZE];
        // the event storage goes with the master's handle
        std::copy_n(ev.token, SMBD_TOKEN_SIZE, token);
        serve_child(token, mask); // does not return
    }
    int fork_errno = errno;
    pthread_sigmask(SIG_SETMASK, &mask, nullptr);
    if (pid < 0) {
        log("fork failed: %s", strerror(fork_errno));
        return;
    }
    children_.insert(pid);
    summary_.children++;
    log("conn %llu: forked child %d to claim it",
        static_cast<unsigned long long>(ev.conn_id), pid);
}

// The child, like a forked smbd, drops the master's file and serves the
// connection from its own.
void Responder::serve_child(const uint8_t *token, const sigset_t &mask)
{
    child_ = true;
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    // the parent's transfers and memory are not this process's
    reset_io();
    events_.reset();
    dev_.reset();
    close(stop_fd_);
    stop_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    int eventfd_errno = errno;
    // stop() now reaches this process alone: a SIGTERM that came since
    // the fork is delivered here
    pthread_sigmask(SIG_SETMASK, &mask, nullptr);
    children_.clear();
    pending_.clear();
    held_.clear();
    live_.clear();
    summary_ = Summary{};
    int rc = 1;
    uint64_t id = 0;
    int err = open_device();
    if (!err && (err = smbd_dev_accept(dev_.get(), token, &id)))
        log("%s", smbd_dev_errmsg(dev_.get()));
    if (stop_fd_ < 0) {
        log("eventfd: %s", strerror(eventfd_errno));
    }
    else if (!err) {
        live_.insert(id);
        log("conn %llu: ACCEPTed on this process's own file",
            static_cast<unsigned long long>(id));
        err = serve();
        rc = err ? 1 : 0;
    }
    print_summary();
    _exit(rc);
}

void Responder::reap_children(bool wait)
{
    if (wait)
        for (int pid : children_)
            kill(pid, SIGTERM);
    for (auto it = children_.begin(); it != children_.end();) {
        int status = 0;
        pid_t r;
        // SIGTERM and SIGINT stop() without SA_RESTART (main.cpp): a wait
        // they interrupt is waited again
        do
            r = waitpid(*it, &status, wait ? 0 : WNOHANG);
        while (r < 0 && errno == EINTR);
        if (r == 0) {
            ++it;
            continue;
        }
        if (r < 0) {
            // not ours to wait for (ECHILD): nothing will ever tell how it
            // ended, so it is dropped, but not counted as a connection
            // that ended
            log("child %d: waitpid: %s", *it, strerror(errno));
            it = children_.erase(it);
            continue;
        }
        log("child %d ended (%s %d)", *it,
            WIFEXITED(status) ? "exit" : "signal",
            WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        summary_.ended++;
        it = children_.erase(it);
    }
}

} // namespace smbd::responder
