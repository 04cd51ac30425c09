// SEND_PDU batch and entry validation, and DISCONNECT, on connection ids
// the file does not own (sending on real connections needs a peer).
#include <linux/smbd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "guest.h"

namespace guest {
namespace {

constexpr uint64_t kUnknownConn = 1ull << 40;

class SendPdu : public ::testing::Test {
  protected:
    void SetUp() override
    {
        ASSERT_TRUE(dev_.ok()) << strerror(dev_.error());
        iov_ = {reinterpret_cast<uintptr_t>(pdu_.data()), pdu_.size()};
        entry().conn_id = kUnknownConn;
        entry().iov_ptr = reinterpret_cast<uintptr_t>(&iov_);
        entry().iov_count = 1;
        req_.size = sizeof(req_);
        req_.count = 1;
        req_.entry_size = sizeof(smbd_send_entry);
        req_.entries_ptr = reinterpret_cast<uintptr_t>(entries_.data());
    }
    smbd_send_entry &entry(size_t i = 0)
    {
        return reinterpret_cast<smbd_send_entry *>(entries_.data())[i];
    }
    int call() { return dev_.raw(SMBD_IOC_SEND_PDU, &req_); }

    smbd_info info_ = device_info();
    Device dev_ = open_device();
    std::vector<uint8_t> pdu_ = std::vector<uint8_t>(64, 0);
    smbd_iovec iov_{};
    // room for one entry of 64 bytes or a batch of out_max_batch + 1
    std::vector<uint64_t> entries_ =
        std::vector<uint64_t>((size_t{info_.out_max_batch} + 2) * 8);
    smbd_send_pdu req_{};
};

TEST_F(SendPdu, UnknownConnectionIsNoEntry)
{
    EXPECT_EQ(call(), ENOENT);
    EXPECT_EQ(req_.out_done, 0u);
}

TEST_F(SendPdu, ZeroCountIsInvalid)
{
    req_.count = 0;
    EXPECT_EQ(call(), EINVAL);
}

TEST_F(SendPdu, MoreThanMaxBatchIsInvalid)
{
    for (uint32_t i = 1; i <= info_.out_max_batch; i++)
        entry(i) = entry(0);
    req_.count = info_.out_max_batch + 1;
    EXPECT_EQ(call(), EINVAL);
}

TEST_F(SendPdu, EntrySizeBelowVersionOneIsInvalid)
{
    for (uint32_t size : {0u, 8u, 32u, 39u}) {
        SCOPED_TRACE(size);
        req_.entry_size = size;
        EXPECT_EQ(call(), EINVAL);
    }
}

// Entries grow like the structs: a zero tail is accepted, anything else
// is a field this kernel does not know.
TEST_F(SendPdu, LargerEntryWithZeroTailIsAccepted)
{
    req_.entry_size = 48;
    EXPECT_EQ(call(), ENOENT);
}

TEST_F(SendPdu, LargerEntryWithNonZeroTailIsTooBig)
{
    req_.entry_size = 48;
    entries_[5] = 1;
    EXPECT_EQ(call(), E2BIG);
}

TEST_F(SendPdu, UnknownEntryFlagsAreInvalid)
{
    for (uint32_t flags : {1u << 2, 1u << 31}) {
        SCOPED_TRACE(flags);
        entry().flags = flags;
        EXPECT_EQ(call(), EINVAL);
    }
}

TEST_F(SendPdu, NonZeroEntryReservedIsInvalid)
{
    entry().__reserved = 1;
    EXPECT_EQ(call(), EINVAL);
}

TEST_F(SendPdu, InvalidateTokenWithoutInvalidateFlagIsInvalid)
{
    entry().invalidate_token = 0x1234;
    EXPECT_EQ(call(), EINVAL);
}

TEST_F(SendPdu, InvalidateTokenWithInvalidateFlagIsChecked)
{
    entry().invalidate_token = 0x1234;
    entry().flags = SMBD_SEND_INVALIDATE | SMBD_SEND_NOTIFY;
    EXPECT_EQ(call(), ENOENT);
}

TEST_F(SendPdu, ZeroIovecsIsInvalid)
{
    entry().iov_count = 0;
    EXPECT_EQ(call(), EINVAL);
}

TEST_F(SendPdu, MoreThanMaxIovecsIsInvalid)
{
    std::vector<smbd_iovec> iovs(info_.out_max_iovs + 1, iov_);
    entry().iov_ptr = reinterpret_cast<uintptr_t>(iovs.data());
    entry().iov_count = info_.out_max_iovs;
    ASSERT_EQ(call(), ENOENT);
    entry().iov_count = info_.out_max_iovs + 1;
    EXPECT_EQ(call(), EINVAL);
}

TEST_F(SendPdu, ZeroLengthPduIsInvalid)
{
    std::vector<smbd_iovec> iovs = {{iov_.base, 0}, {iov_.base, 0}};
    entry().iov_ptr = reinterpret_cast<uintptr_t>(iovs.data());
    for (uint32_t n : {1u, 2u}) {
        SCOPED_TRACE(n);
        entry().iov_count = n;
        EXPECT_EQ(call(), EINVAL);
    }
}

TEST_F(SendPdu, EntrySizeAbove4096IsInvalid)
{
    std::vector<uint8_t> big(4097);
    std::memcpy(big.data(), &entry(), sizeof(smbd_send_entry));
    req_.entries_ptr = reinterpret_cast<uintptr_t>(big.data());
    req_.entry_size = 4096;
    ASSERT_EQ(call(), ENOENT);
    req_.entry_size = 4097;
    EXPECT_EQ(call(), EINVAL);
}

// Lengths are checked before the connection is looked up.
TEST_F(SendPdu, IovecAboveMaxPduSizeIsTooBig)
{
    iov_.len = uint64_t{info_.out_max_pdu_size} + 1;
    EXPECT_EQ(call(), EMSGSIZE);
}

TEST_F(SendPdu, IovecsAddingUpAboveMaxPduSizeAreTooBig)
{
    std::vector<smbd_iovec> iovs(2,
                                 {iov_.base, info_.out_max_pdu_size / 2 + 1});
    entry().iov_ptr = reinterpret_cast<uintptr_t>(iovs.data());
    entry().iov_count = 2;
    EXPECT_EQ(call(), EMSGSIZE);
}

TEST_F(SendPdu, BadIovecPointerIsFault)
{
    entry().iov_ptr = kBadPointer;
    EXPECT_EQ(call(), EFAULT);
}

TEST_F(SendPdu, BadEntriesPointerIsFault)
{
    req_.entries_ptr = kBadPointer;
    EXPECT_EQ(call(), EFAULT);
}

TEST(Disconnect, UnknownConnectionIsNoEntry)
{
    Device dev = open_device();
    ASSERT_TRUE(dev.ok());
    for (uint64_t id : {uint64_t{0}, uint64_t{1}, kUnknownConn, ~uint64_t{0}}) {
        SCOPED_TRACE(id);
        EXPECT_EQ(dev.disconnect(id), ENOENT);
    }
}

} // namespace
} // namespace guest
