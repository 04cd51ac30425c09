// Process and privilege helpers of the guest harness; see guest.h.
#include "guest.h"

#include <sys/wait.h>
#include <unistd.h>

namespace guest {

smbd_info device_info()
{
    smbd_info info{};
    Device dev = open_device();
    EXPECT_TRUE(dev.ok()) << strerror(dev.error());
    EXPECT_EQ(dev.info(info), 0);
    return info;
}

int in_child(const std::function<int()> &fn)
{
    pid_t pid = fork();
    if (pid < 0)
        return kChildFailed;
    if (pid == 0)
        _exit(fn()); // never back into gtest in the child
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
        return kChildFailed;
    return WEXITSTATUS(status);
}

} // namespace guest
