// GET_EVENTS validation and poll on a file with nothing queued; ordering,
// readiness on real events, overflow and EFAULT for a bad events or data
// pointer (nothing is written without an event) need a peer.
#include <linux/smbd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <fcntl.h>
#include <poll.h>
#include <vector>

#include "guest.h"

namespace guest {
namespace {

class GetEvents : public ::testing::Test {
  protected:
    void SetUp() override
    {
        ASSERT_TRUE(dev_.ok()) << strerror(dev_.error());
        req_.size = sizeof(req_);
        req_.max_events = 1;
        req_.event_size = sizeof(smbd_event);
        req_.events_ptr = reinterpret_cast<uintptr_t>(events_.data());
        req_.data_ptr = reinterpret_cast<uintptr_t>(data_.data());
        req_.data_len = static_cast<uint32_t>(data_.size());
    }
    int call() { return dev_.raw(SMBD_IOC_GET_EVENTS, &req_); }

    smbd_info info_ = device_info();
    Device dev_ = open_device();
    // room for the largest batch with the largest event size tried
    std::vector<uint64_t> events_ =
        std::vector<uint64_t>((size_t{info_.out_max_batch} + 1) * 256 / 8);
    std::vector<uint8_t> data_ = std::vector<uint8_t>(1 << 16);
    smbd_get_events req_{};
};

TEST_F(GetEvents, NothingQueuedOnNonBlockingFileIsAgain)
{
    EXPECT_EQ(call(), EAGAIN);
    EXPECT_EQ(req_.out_count, 0u);
}

TEST_F(GetEvents, FullBatchIsAccepted)
{
    req_.max_events = info_.out_max_batch;
    EXPECT_EQ(call(), EAGAIN);
}

TEST_F(GetEvents, ZeroEventsIsInvalid)
{
    req_.max_events = 0;
    EXPECT_EQ(call(), EINVAL);
}

TEST_F(GetEvents, MoreThanMaxBatchIsInvalid)
{
    req_.max_events = info_.out_max_batch + 1;
    EXPECT_EQ(call(), EINVAL);
}

TEST_F(GetEvents, EventSizeBelowVersionOneIsInvalid)
{
    for (uint32_t size : {0u, 8u, 120u, 127u}) {
        SCOPED_TRACE(size);
        req_.event_size = size;
        EXPECT_EQ(call(), EINVAL);
    }
}

TEST_F(GetEvents, EventSizeAbove4096IsInvalid)
{
    req_.event_size = 4096;
    ASSERT_EQ(call(), EAGAIN);
    req_.event_size = 4097;
    EXPECT_EQ(call(), EINVAL);
}

// A newer userspace's larger event is accepted (the kernel zeroes the rest).
TEST_F(GetEvents, LargerEventSizeIsAccepted)
{
    req_.event_size = 256;
    EXPECT_EQ(call(), EAGAIN);
}

TEST_F(GetEvents, NonBlockingSetLaterIsHonoured)
{
    Device dev;
    ASSERT_TRUE(dev.ok());
    int fl = fcntl(dev.fd(), F_GETFL);
    ASSERT_EQ(fcntl(dev.fd(), F_SETFL, fl | O_NONBLOCK), 0);
    EXPECT_EQ(dev.raw(SMBD_IOC_GET_EVENTS, &req_), EAGAIN);
}

TEST(Poll, NoEventNoPollIn)
{
    Device dev = open_device();
    int revents = dev.poll_in(0);
    ASSERT_GE(revents, 0);
    EXPECT_FALSE(revents & POLLIN);
}

TEST(Poll, ListenerWithoutConnectionsHasNoPollIn)
{
    Device dev = open_device();
    ASSERT_EQ(dev.set_params(smbd::device::default_params()), 0);
    ASSERT_EQ(dev.listen(), 0);
    int revents = dev.poll_in(50);
    ASSERT_GE(revents, 0);
    EXPECT_FALSE(revents & POLLIN);
}

} // namespace
} // namespace guest
