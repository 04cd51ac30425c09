// Privilege helpers; see caps.h.
#include "caps.h"

#include <cstdint>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace guest {

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
