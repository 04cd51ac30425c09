// RDMA_RW batch and operation validation: everything the kernel checks
// before it looks for the connection, so a file without connections sees
// EINVAL for a malformed operation and ENOENT for a well-formed one. Moving
// data needs a peer: the RDMA scenarios do that.
#include <linux/smbd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "buffer_desc.h"
#include "guest.h"

namespace guest {
namespace {

constexpr uint64_t kUnknownConn = 1ull << 20;

class RdmaRw : public ::testing::Test {
  protected:
    void SetUp() override
    {
        ASSERT_TRUE(dev_.ok()) << strerror(dev_.error());
        slices_.push_back({0, 0, 4096, 0});
        add_desc(0x10000, 0x1234, 4096);
        op().conn_id = kUnknownConn;
        op().user_data = 7;
        op().direction = SMBD_RW_WRITE_TO_PEER;
        req_.size = sizeof(req_);
        req_.count = 1;
        req_.op_size = sizeof(smbd_rw_op);
        req_.ops_ptr = reinterpret_cast<uintptr_t>(ops_.data());
    }
    smbd_rw_op &op(size_t i = 0)
    {
        return reinterpret_cast<smbd_rw_op *>(ops_.data())[i];
    }
    void add_desc(uint64_t offset, uint32_t token, uint32_t length)
    {
        smbd_buffer_desc d{offset, token, length};
        descs_.resize(descs_.size() + SMBD_BUFFER_DESC_SIZE);
        smbd_buffer_desc_put(
            descs_.data(), uint32_t(descs_.size() / SMBD_BUFFER_DESC_SIZE - 1),
            &d);
    }
    int call()
    {
        op().slices_ptr = reinterpret_cast<uintptr_t>(slices_.data());
        op().slice_count = uint32_t(slices_.size());
        op().descs_ptr = reinterpret_cast<uintptr_t>(descs_.data());
        op().desc_count = uint32_t(descs_.size() / SMBD_BUFFER_DESC_SIZE);
        return dev_.raw(SMBD_IOC_RDMA_RW, &req_);
    }

    smbd_info info_ = device_info();
    Device dev_ = open_device();
    std::vector<smbd_slice> slices_;
    std::vector<uint8_t> descs_;
    // room for out_max_batch + 1 operations of 64 bytes
    std::vector<uint64_t> ops_ =
        std::vector<uint64_t>((size_t{info_.out_max_batch} + 2) * 8);
    smbd_rdma_rw req_{};
};

TEST_F(RdmaRw, WellFormedOnUnknownConnectionIsNoEntry)
{
    EXPECT_EQ(call(), ENOENT);
    EXPECT_EQ(req_.out_done, 0u);
}

TEST_F(RdmaRw, BothDirectionsReachTheConnectionLookup)
{
    for (uint32_t dir : {SMBD_RW_WRITE_TO_PEER, SMBD_RW_READ_FROM_PEER}) {
        SCOPED_TRACE(dir);
        op().direction = dir;
        EXPECT_EQ(call(), ENOENT);
    }
}

TEST_F(RdmaRw, UnknownDirectionIsInvalid)
{
    for (uint32_t dir : {0u, 3u, 0x80000001u}) {
        SCOPED_TRACE(dir);
        op().direction = dir;
        EXPECT_EQ(call(), EINVAL);
    }
}

TEST_F(RdmaRw, FlagsAndReservedMustBeZero)
{
    req_.flags = 1;
    EXPECT_EQ(call(), EINVAL);
    req_.flags = 0;
    req_.__reserved = 1;
    EXPECT_EQ(call(), EINVAL);
    req_.__reserved = 0;
    op().__reserved = 1;
    EXPECT_EQ(call(), EINVAL);
    op().__reserved = 0;
    slices_[0].__reserved = 1;
    EXPECT_EQ(call(), EINVAL);
}

TEST_F(RdmaRw, CountOutsideOneToMaxBatchIsInvalid)
{
    req_.count = 0;
    EXPECT_EQ(call(), EINVAL);
    for (uint32_t i = 1; i <= info_.out_max_batch; i++)
        op(i) = op(0);
    req_.count = info_.out_max_batch + 1;
    EXPECT_EQ(call(), EINVAL);
}

TEST_F(RdmaRw, OpSizeBelowVersionOneOrAbovePageIsInvalid)
{
    for (uint32_t size : {0u, 8u, 47u, 4097u}) {
        SCOPED_TRACE(size);
        req_.op_size = size;
        EXPECT_EQ(call(), EINVAL);
    }
}

// Operations grow like the structs: a zero tail is accepted, anything else
// is a field this kernel does not know.
TEST_F(RdmaRw, LargerOpWithZeroTailIsAcceptedNonZeroTailIsTooBig)
{
    req_.op_size = sizeof(smbd_rw_op) + 16;
    EXPECT_EQ(call(), ENOENT);
    reinterpret_cast<uint8_t *>(ops_.data())[sizeof(smbd_rw_op) + 3] = 1;
    EXPECT_EQ(call(), E2BIG);
}

TEST_F(RdmaRw, BadPointersAreFaults)
{
    req_.ops_ptr = kBadPointer;
    EXPECT_EQ(dev_.raw(SMBD_IOC_RDMA_RW, &req_), EFAULT);
    req_.ops_ptr = reinterpret_cast<uintptr_t>(ops_.data());

    op().slices_ptr = kBadPointer;
    op().slice_count = 1;
    op().descs_ptr = reinterpret_cast<uintptr_t>(descs_.data());
    op().desc_count = 1;
    EXPECT_EQ(dev_.raw(SMBD_IOC_RDMA_RW, &req_), EFAULT);
    op().slices_ptr = reinterpret_cast<uintptr_t>(slices_.data());
    op().descs_ptr = kBadPointer;
    EXPECT_EQ(dev_.raw(SMBD_IOC_RDMA_RW, &req_), EFAULT);
}

TEST_F(RdmaRw, SliceCountOutsideOneToMaxIsInvalid)
{
    slices_.clear();
    EXPECT_EQ(call(), EINVAL);
    for (uint32_t i = 0; i <= info_.out_max_slices; i++)
        slices_.push_back({i % info_.out_pool_buffers,
                           (i / info_.out_pool_buffers) * 16, 16, 0});
    EXPECT_EQ(call(), EINVAL);
    slices_.pop_back();
    EXPECT_EQ(call(), ENOENT);
}

TEST_F(RdmaRw, DescriptorCountOutsideOneToMaxIsInvalid)
{
    descs_.clear();
    EXPECT_EQ(call(), EINVAL);
    for (uint32_t i = 0; i < info_.out_max_descriptors; i++)
        add_desc(0x10000 + i * 4096ull, 1, 64);
    EXPECT_EQ(call(), ENOENT);
    add_desc(0x1000, 1, 64);
    EXPECT_EQ(call(), EINVAL);
}

TEST_F(RdmaRw, SliceOutsideThePoolIsInvalid)
{
    const uint32_t size = info_.out_buffer_size;
    const smbd_slice bad[] = {
        {info_.out_pool_buffers, 0, 1, 0}, // no such buffer
        {0, size, 1, 0},                   // starts at the end
        {0, size - 1, 2, 0},               // runs past the end
        {0, 1, size, 0},                   // longer than a buffer
        {0, 0, 0, 0},                      // empty
        {0, 0xffffffffu, 2, 0},            // offset + length wraps
    };
    for (const auto &s : bad) {
        SCOPED_TRACE(testing::Message()
                     << s.buffer << "/" << s.offset << "/" << s.length);
        slices_[0] = s;
        EXPECT_EQ(call(), EINVAL);
    }
    slices_[0] = {info_.out_pool_buffers - 1, size - 1, 1, 0};
    EXPECT_EQ(call(), ENOENT);
}

TEST_F(RdmaRw, OverlappingSlicesAreInvalidAdjacentOnesAreNot)
{
    slices_ = {{2, 8192, 4096, 0}, {1, 0, 100, 0}, {2, 4096, 4097, 0}};
    EXPECT_EQ(call(), EINVAL);
    slices_[2].length = 4096;
    EXPECT_EQ(call(), ENOENT);
    // the same range twice
    slices_ = {{3, 0, 64, 0}, {3, 0, 64, 0}};
    EXPECT_EQ(call(), EINVAL);
    // one inside another, listed in either order
    slices_ = {{3, 100, 10, 0}, {3, 0, 4096, 0}};
    EXPECT_EQ(call(), EINVAL);
    slices_ = {{3, 0, 4096, 0}, {3, 100, 10, 0}};
    EXPECT_EQ(call(), EINVAL);
}

TEST_F(RdmaRw, MalformedDescriptorsAreInvalid)
{
    descs_.clear();
    add_desc(0x1000, 1, 0); // empty
    EXPECT_EQ(call(), EINVAL);
    descs_.clear();
    add_desc(~0ull - 10, 1, 64); // wraps the address space
    EXPECT_EQ(call(), EINVAL);
}

} // namespace
} // namespace guest
