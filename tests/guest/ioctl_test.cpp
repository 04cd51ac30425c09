// /dev/smbd ioctl validation, run in the guest against the real module.
#include <linux/smbd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

namespace {

class Device : public ::testing::Test {
protected:
    void SetUp() override
    {
        fd_ = open("/dev/smbd", O_RDWR | O_CLOEXEC);
        ASSERT_GE(fd_, 0) << strerror(errno);
    }
    void TearDown() override { close(fd_); }

    // ioctl's errno, or 0 on success.
    int call(unsigned long cmd, void *arg)
    {
        return ioctl(fd_, cmd, arg) == 0 ? 0 : errno;
    }

    static smbd_info info_request()
    {
        smbd_info info{};
        info.size = sizeof(info);
        return info;
    }

    int fd_ = -1;
};

TEST_F(Device, GetInfoReportsAbiAndLimits)
{
    smbd_info info = info_request();
    ASSERT_EQ(call(SMBD_IOC_GET_INFO, &info), 0);
    EXPECT_EQ(info.size, sizeof(info));
    EXPECT_EQ(info.out_abi_version, SMBD_ABI_VERSION);
    EXPECT_EQ(info.out_port, 5445u);
    EXPECT_EQ(info.out_pool_buffers, 64u);
    EXPECT_EQ(info.out_buffer_size, 1u << 20);
    EXPECT_EQ(info.out_mmap_size, 64ull << 20);
    EXPECT_GT(info.out_max_events, 0u);
    EXPECT_GT(info.out_max_batch, 0u);
    EXPECT_GE(info.out_max_pdu_size, 1u << 20);
    // no command beyond GET_INFO works yet, so none is advertised
    EXPECT_EQ(info.out_features, 0u);
}

TEST_F(Device, RejectsUnknownFlags)
{
    smbd_info info = info_request();
    info.flags = 1;
    EXPECT_EQ(call(SMBD_IOC_GET_INFO, &info), EINVAL);
}

TEST_F(Device, RejectsSizeBelowFirstVersion)
{
    smbd_info info = info_request();
    info.size = offsetof(smbd_info, out_mmap_size);
    EXPECT_EQ(call(SMBD_IOC_GET_INFO, &info), EINVAL);
}

// A newer userspace with a longer struct works while the tail is zero.
TEST_F(Device, AcceptsLongerStructWithZeroTail)
{
    alignas(8) unsigned char buf[sizeof(smbd_info) + 64] = {};
    smbd_info info = info_request();
    info.size = sizeof(buf);
    memcpy(buf, &info, sizeof(info));
    ASSERT_EQ(call(SMBD_IOC_GET_INFO, buf), 0);
    memcpy(&info, buf, sizeof(info));
    EXPECT_EQ(info.out_abi_version, SMBD_ABI_VERSION);
    for (size_t i = sizeof(smbd_info); i < sizeof(buf); i++)
        EXPECT_EQ(buf[i], 0) << "kernel wrote past its struct at " << i;
}

TEST_F(Device, RejectsLongerStructWithNonZeroTail)
{
    alignas(8) unsigned char buf[sizeof(smbd_info) + 64] = {};
    smbd_info info = info_request();
    info.size = sizeof(buf);
    memcpy(buf, &info, sizeof(info));
    buf[sizeof(buf) - 1] = 1;
    EXPECT_EQ(call(SMBD_IOC_GET_INFO, buf), E2BIG);
}

TEST_F(Device, RejectsBadPointer)
{
    EXPECT_EQ(call(SMBD_IOC_GET_INFO, nullptr), EFAULT);
}

TEST_F(Device, UnknownCommandsAreNotTty)
{
    smbd_info info = info_request();
    EXPECT_EQ(call(_IO(SMBD_IOCTL_TYPE, SMBD_CMD_BASE - 1), &info), ENOTTY);
    EXPECT_EQ(call(_IO(SMBD_IOCTL_TYPE, SMBD_CMD_DISCONNECT + 1), &info),
              ENOTTY);
    EXPECT_EQ(call(_IO('x', SMBD_CMD_GET_INFO), &info), ENOTTY);
    // the size and direction bits of the number must be zero
    EXPECT_EQ(call(_IOWR(SMBD_IOCTL_TYPE, SMBD_CMD_GET_INFO, smbd_info),
                   &info),
              ENOTTY);
}

// Commands without their feature bit are not offered.
TEST_F(Device, CommandsNotYetOfferedAreNotTty)
{
    // zeroed and large enough for any command's struct
    alignas(8) unsigned char buf[256] = {};
    const __u32 size = sizeof(buf);
    memcpy(buf, &size, sizeof(size));
    const unsigned long cmds[] = {
        SMBD_IOC_SET_PARAMS,       SMBD_IOC_LISTEN,
        SMBD_IOC_ACCEPT,           SMBD_IOC_REGISTER_SESSION,
        SMBD_IOC_UNREGISTER_SESSION, SMBD_IOC_GET_MEM_PARAMS,
        SMBD_IOC_GET_EVENTS,       SMBD_IOC_SEND_PDU,
        SMBD_IOC_RDMA_RW,          SMBD_IOC_DISCONNECT,
    };
    for (unsigned long cmd : cmds) {
        SCOPED_TRACE(_IOC_NR(cmd));
        EXPECT_EQ(call(cmd, buf), ENOTTY);
    }
}

} // namespace
