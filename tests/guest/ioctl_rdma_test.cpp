// RDMA_RW batch and operation validation: everything the kernel checks
// before it looks for the connection, so a file without connections sees
// EINVAL for a malformed operation and ENOENT for a well-formed one. Moving
// data needs a peer: the RDMA scenarios do that.
#include <linux/smbd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <functional>
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
    // A one-iovec READ response for op(0)'s connection.
    void with_reply()
    {
        reply_ = {};
        reply_.entry.conn_id = op().conn_id;
        reply_iov_ = {reinterpret_cast<uintptr_t>(pdu_), sizeof(pdu_)};
        reply_.entry.iov_ptr = reinterpret_cast<uintptr_t>(&reply_iov_);
        reply_.entry.iov_count = 1;
        op().reply_ptr = reinterpret_cast<uintptr_t>(&reply_.entry);
        op().reply_size = sizeof(smbd_send_entry);
    }

    smbd_info info_ = device_info();
    Device dev_ = open_device();
    std::vector<smbd_slice> slices_;
    std::vector<uint8_t> descs_;
    // room for out_max_batch + 1 operations of 64 bytes
    std::vector<uint64_t> ops_ =
        std::vector<uint64_t>((size_t{info_.out_max_batch} + 2) * 8);
    smbd_rdma_rw req_{};
    uint8_t pdu_[80] = {};
    smbd_iovec reply_iov_{};
    // the reply entry, then bytes a larger reply_size would claim
    struct {
        smbd_send_entry entry;
        uint64_t tail;
    } reply_{};
    static_assert(sizeof(reply_) == sizeof(smbd_send_entry) + 8);
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

// A reply goes only with an RDMA WRITE, for the op's connection, and is
// checked as a SEND_PDU entry is, all before the connection's lookup.
TEST_F(RdmaRw, WellFormedReplyReachesTheConnectionLookup)
{
    with_reply();
    EXPECT_EQ(call(), ENOENT);
}

TEST_F(RdmaRw, ReplyWithAnRdmaReadIsInvalid)
{
    with_reply();
    op().direction = SMBD_RW_READ_FROM_PEER;
    EXPECT_EQ(call(), EINVAL);
}

TEST_F(RdmaRw, ReplyPointerAndSizeGoTogether)
{
    with_reply();
    op().reply_size = 0;
    EXPECT_EQ(call(), EINVAL);
    op().reply_size = sizeof(smbd_send_entry);
    op().reply_ptr = 0;
    EXPECT_EQ(call(), EINVAL);
}

TEST_F(RdmaRw, ReplySizeBelowVersionOneOrAbovePageIsInvalid)
{
    with_reply();
    for (uint32_t size : {8u, uint32_t{SMBD_SEND_ENTRY_SIZE_V1 - 1}, 4097u}) {
        SCOPED_TRACE(size);
        op().reply_size = size;
        EXPECT_EQ(call(), EINVAL);
    }
}

TEST_F(RdmaRw, LargerReplyWithZeroTailIsAcceptedNonZeroTailIsTooBig)
{
    with_reply();
    op().reply_size = sizeof(smbd_send_entry) + 8;
    EXPECT_EQ(call(), ENOENT);
    reply_.tail = 1;
    EXPECT_EQ(call(), E2BIG);
}

TEST_F(RdmaRw, ReplyForAnotherConnectionIsInvalid)
{
    with_reply();
    reply_.entry.conn_id = kUnknownConn + 1;
    EXPECT_EQ(call(), EINVAL);
}

// RDMA_DONE tells whether the reply went: no SEND_DONE besides
TEST_F(RdmaRw, ReplyAskingForSendDoneIsInvalid)
{
    with_reply();
    reply_.entry.flags = SMBD_SEND_NOTIFY;
    EXPECT_EQ(call(), EINVAL);
    reply_.entry.flags = SMBD_SEND_INVALIDATE;
    reply_.entry.invalidate_token = 5;
    EXPECT_EQ(call(), ENOENT);
}

TEST_F(RdmaRw, ReplyEntryIsCheckedAsSendPduChecksOne)
{
    const uint32_t max_iovs = info_.out_max_iovs;
    const uint64_t max_pdu = info_.out_max_pdu_size;
    struct Case {
        const char *what;
        std::function<void(smbd_send_entry &, smbd_iovec &)> spoil;
        int err;
    };
    const Case cases[] = {
        {"unknown flag", [](auto &e, auto &) { e.flags = 1u << 31; }, EINVAL},
        {"reserved", [](auto &e, auto &) { e.__reserved = 1; }, EINVAL},
        {"token without invalidate",
         [](auto &e, auto &) { e.invalidate_token = 9; }, EINVAL},
        {"no iovecs", [](auto &e, auto &) { e.iov_count = 0; }, EINVAL},
        {"too many iovecs",
         [&](auto &e, auto &) { e.iov_count = max_iovs + 1; }, EINVAL},
        {"empty PDU", [](auto &, auto &v) { v.len = 0; }, EINVAL},
        {"PDU above the largest", [&](auto &, auto &v) { v.len = max_pdu + 1; },
         EMSGSIZE},
        {"bad iovec array", [](auto &e, auto &) { e.iov_ptr = kBadPointer; },
         EFAULT},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(c.what);
        with_reply();
        c.spoil(reply_.entry, reply_iov_);
        EXPECT_EQ(call(), c.err);
    }
    with_reply();
    op().reply_ptr = kBadPointer;
    EXPECT_EQ(call(), EFAULT);
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
    op().__reserved2 = 1;
    EXPECT_EQ(call(), EINVAL);
    op().__reserved2 = 0;
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
// is a field this kernel does not know. The first version is still taken.
TEST_F(RdmaRw, LargerOpWithZeroTailIsAcceptedNonZeroTailIsTooBig)
{
    req_.op_size = SMBD_RW_OP_SIZE_V1;
    EXPECT_EQ(call(), ENOENT);
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

// A pool of fewer buffers (SMBD_FEATURE_POOL_SIZE) bounds the slices by its
// own count (before any pool, the default's: SliceOutsideThePoolIsInvalid).
TEST_F(RdmaRw, ASmallerPoolBoundsTheSlices)
{
    smbd_mem_params mem{};
    ASSERT_EQ(dev_.get_mem_params(mem, 2), 0);
    slices_[0] = {2, 0, 1, 0};
    EXPECT_EQ(call(), EINVAL);
    slices_[0] = {1, info_.out_buffer_size - 1, 1, 0};
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
