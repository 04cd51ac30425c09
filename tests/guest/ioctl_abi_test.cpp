// The rules every /dev/smbd command shares (size, flags, reserved fields,
// ioctl numbers) and GET_INFO, run in the guest against the real module.
#include <linux/smbd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <sys/ioctl.h>

#include "commands.h"
#include "guest.h"

namespace guest {
namespace {

TEST(GetInfo, ReportsAbiAndLimits)
{
    smbd_info info = device_info();
    EXPECT_EQ(info.size, sizeof(info));
    EXPECT_EQ(info.out_abi_version, SMBD_ABI_VERSION);
    EXPECT_EQ(info.out_port, 5445u);
    EXPECT_EQ(info.out_ib_port, 445u);
    EXPECT_EQ(info.out_port_flags, SMBD_PORT_IB_ON_IWARP);
    EXPECT_EQ(info.out_pool_buffers, 64u);
    EXPECT_EQ(info.out_buffer_size, 1u << 20);
    EXPECT_EQ(info.out_mmap_size, 64ull << 20);
    EXPECT_GT(info.out_max_events, 0u);
    EXPECT_GT(info.out_max_batch, 0u);
    EXPECT_GT(info.out_max_iovs, 0u);
    EXPECT_GE(info.out_max_pdu_size, 1u << 20);
    EXPECT_GT(info.out_max_sessions, 0u);
    EXPECT_EQ(info.out_send_queue_bytes, 4u << 20);
}

TEST(GetInfo, ReportsEveryFeature)
{
    const uint64_t want = SMBD_FEATURE_SET_PARAMS | SMBD_FEATURE_LISTEN |
                          SMBD_FEATURE_SESSIONS | SMBD_FEATURE_EVENTS |
                          SMBD_FEATURE_SEND_PDU | SMBD_FEATURE_SEND_INVALIDATE |
                          SMBD_FEATURE_POOL | SMBD_FEATURE_RDMA_RW |
                          SMBD_FEATURE_DISCONNECT | SMBD_FEATURE_RW_REPLY |
                          SMBD_FEATURE_SEND_ROOM | SMBD_FEATURE_CONN_STATS |
                          SMBD_FEATURE_POOL_SIZE;
    EXPECT_EQ(device_info().out_features, want);
}

TEST(GetInfo, BadPointerIsFault)
{
    Device dev = open_device();
    EXPECT_EQ(dev.raw(SMBD_IOC_GET_INFO, nullptr), EFAULT);
}

// A newer userspace with a longer struct works while the tail is zero, and
// the kernel writes nothing past its own struct.
TEST(GetInfo, LongerStructIsFilledOnlyAsFarAsTheKernelKnows)
{
    Device dev = open_device();
    Request req(smbd_info{}, 64);
    ASSERT_EQ(dev.raw(SMBD_IOC_GET_INFO, req.data()), 0);
    smbd_info info;
    std::memcpy(&info, req.bytes(), sizeof(info));
    EXPECT_EQ(info.out_abi_version, SMBD_ABI_VERSION);
    for (size_t i = sizeof(smbd_info); i < sizeof(smbd_info) + 64; i++)
        EXPECT_EQ(req.bytes()[i], 0) << "kernel wrote past its struct at " << i;
}

class EveryCommand : public ::testing::TestWithParam<Command> {
  protected:
    int call(Request &req) { return dev_.raw(GetParam().cmd, req.data()); }
    Device dev_ = open_device();
};

TEST_P(EveryCommand, ValidRequestGetsItsResult)
{
    Request req = GetParam().request(0);
    EXPECT_EQ(call(req), GetParam().baseline);
}

// The size of the struct's first version: what old callers pass.
uint32_t first_version_size(const Command &c)
{
    if (c.first_size)
        return c.first_size;
    Request full = c.request(0);
    uint32_t size;
    std::memcpy(&size, full.bytes(), 4);
    return size;
}

TEST_P(EveryCommand, FirstVersionGetsItsResult)
{
    Request req = GetParam().request(0);
    req.set_size(first_version_size(GetParam()));
    EXPECT_EQ(call(req), GetParam().baseline);
}

TEST_P(EveryCommand, SizeBelowTheFirstVersionIsInvalid)
{
    const uint32_t size = first_version_size(GetParam());
    for (uint32_t short_size : {0u, 4u, 8u, size - 8, size - 1}) {
        if (short_size >= size)
            continue;
        SCOPED_TRACE(short_size);
        Request req = GetParam().request(0);
        req.set_size(short_size);
        EXPECT_EQ(call(req), EINVAL);
    }
}

TEST_P(EveryCommand, UnknownFlagsAreInvalid)
{
    for (uint32_t flags : {1u << 0, 1u << 7, 1u << 31}) {
        SCOPED_TRACE(flags);
        Request req = GetParam().request(0);
        req.set_u32(offsetof(smbd_info, flags), flags);
        EXPECT_EQ(call(req), EINVAL);
    }
}

TEST_P(EveryCommand, NonZeroReservedIsInvalid)
{
    for (size_t offset : GetParam().reserved) {
        SCOPED_TRACE(offset);
        Request req = GetParam().request(0);
        req.set_u32(offset, 1);
        EXPECT_EQ(call(req), EINVAL);
    }
}

TEST_P(EveryCommand, LongerStructWithZeroTailIsAccepted)
{
    Request req = GetParam().request(64);
    EXPECT_EQ(call(req), GetParam().baseline);
}

TEST_P(EveryCommand, LongerStructWithNonZeroTailIsTooBig)
{
    Request req = GetParam().request(64);
    uint32_t size;
    std::memcpy(&size, req.bytes(), 4);
    req.bytes()[size - 1] = 1;
    EXPECT_EQ(call(req), E2BIG);
}

TEST_P(EveryCommand, BadPointerIsFault)
{
    EXPECT_EQ(dev_.raw(GetParam().cmd, reinterpret_cast<void *>(kBadPointer)),
              EFAULT);
}

// The number carries neither size nor direction: sizes live in the structs.
TEST_P(EveryCommand, OtherIoctlEncodingsAreNotTty)
{
    const unsigned nr = _IOC_NR(GetParam().cmd);
    const unsigned long encodings[] = {
        _IOR(SMBD_IOCTL_TYPE, nr, smbd_info),
        _IOW(SMBD_IOCTL_TYPE, nr, smbd_info),
        _IOWR(SMBD_IOCTL_TYPE, nr, smbd_info),
        _IOWR(SMBD_IOCTL_TYPE, nr, __u64),
        _IO('x', nr),
        _IO(SMBD_IOCTL_TYPE + 1, nr),
    };
    for (unsigned long cmd : encodings) {
        SCOPED_TRACE(cmd);
        Request req = GetParam().request(0);
        EXPECT_EQ(dev_.raw(cmd, req.data()), ENOTTY);
    }
}

INSTANTIATE_TEST_SUITE_P(Ioctl, EveryCommand,
                         ::testing::ValuesIn(offered_commands()),
                         [](const auto &info) { return info.param.name; });

TEST(Ioctl, UnknownCommandsAreNotTty)
{
    Device dev = open_device();
    Request req(smbd_info{}, 256);
    const unsigned nrs[] = {0, SMBD_CMD_BASE - 1, SMBD_CMD_CONN_STATS + 1,
                            0xff};
    for (unsigned nr : nrs) {
        SCOPED_TRACE(nr);
        EXPECT_EQ(dev.raw(_IO(SMBD_IOCTL_TYPE, nr), req.data()), ENOTTY);
    }
}

} // namespace
} // namespace guest
