// A file serves the process that opened it (smbd.h): a forked child that
// inherits the descriptor gets EBADFD from every command and from mmap(),
// while the file's roles stay with the file until its last descriptor is
// closed, the child's copy too.
#include <linux/smbd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <poll.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "guest.h"

namespace guest {
namespace {

// Every command, each with a request that works on a fresh file: in the
// child each one is refused before the kernel looks at it.
TEST(Inherited, EveryCommandIsRefusedInTheChild)
{
    Device dev = open_device();
    ASSERT_TRUE(dev.ok()) << strerror(dev.error());
    for (const Command &c : offered_commands()) {
        SCOPED_TRACE(c.name);
        Request req = c.request(0);
        EXPECT_EQ(in_child([&] { return dev.raw(c.cmd, req.data()); }), EBADFD);
    }
    // and nothing the child tried changed the file: its own calls work
    smbd_info info{};
    EXPECT_EQ(dev.info(info), 0);
}

TEST(Inherited, TheChildCannotMapThePool)
{
    Device dev = open_device();
    smbd_mem_params mem{};
    ASSERT_EQ(dev.get_mem_params(mem), 0);
    int err = in_child([&] {
        void *p = ::mmap(nullptr, mem.out_mmap_size, PROT_READ, MAP_SHARED,
                         dev.fd(), static_cast<off_t>(mem.out_mmap_offset));
        return p == MAP_FAILED ? errno : 0;
    });
    EXPECT_EQ(err, EBADFD);
}

// poll() is not refused: an event loop that a fork shares (epoll) sees the
// file as it is.
TEST(Inherited, TheChildMayPollTheFile)
{
    Device dev = open_device();
    int rc = in_child([&] {
        pollfd p{dev.fd(), POLLIN, 0};
        return ::poll(&p, 1, 0) == 0 ? 0 : 1;
    });
    EXPECT_EQ(rc, 0);
}

// The roles belong to the file: the master's listener stays while a child
// keeps its copy of the descriptor, and goes when that copy closes.
TEST(Inherited, AChildsCopyKeepsTheRolesUntilItCloses)
{
    int go[2], done[2];
    ASSERT_EQ(pipe2(go, O_CLOEXEC), 0);
    ASSERT_EQ(pipe2(done, O_CLOEXEC), 0);
    Device master = open_device();
    ASSERT_EQ(master.listen(), 0);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        char b;
        // holds the copy until told, then lets go of it
        if (read(go[0], &b, 1) != 1)
            _exit(1);
        ::close(master.fd());
        _exit(write(done[1], "d", 1) == 1 ? 0 : 1);
    }
    master.close();
    Device other = open_device();
    EXPECT_EQ(other.listen(), EBUSY) << "the child's copy holds the role";
    ASSERT_EQ(write(go[1], "g", 1), 1);
    char b;
    ASSERT_EQ(read(done[0], &b, 1), 1);
    EXPECT_EQ(other.listen(), 0) << "the last descriptor closed";
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    for (int fd : {go[0], go[1], done[0], done[1]})
        ::close(fd);
}

} // namespace
} // namespace guest
