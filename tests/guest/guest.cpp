// Process and privilege helpers of the guest harness; see guest.h.
#include "guest.h"

#include <linux/capability.h>
#include <sys/syscall.h>
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

bool drop_net_admin()
{
    __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
    if (syscall(SYS_capget, &hdr, data) != 0)
        return false;
    const uint32_t bit = CAP_TO_MASK(CAP_NET_ADMIN);
    auto &word = data[CAP_TO_INDEX(CAP_NET_ADMIN)];
    word.effective &= ~bit;
    word.permitted &= ~bit;
    word.inheritable &= ~bit;
    return syscall(SYS_capset, &hdr, data) == 0;
}

bool become_nobody()
{
    const uid_t nobody = 65534;
    return setresgid(nobody, nobody, nobody) == 0 &&
           setresuid(nobody, nobody, nobody) == 0;
}

} // namespace guest
