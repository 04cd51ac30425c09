// libsmbd's own logic on the host: lending pool buffers in runs, decoding
// event records against their data, and the messages of failures.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "errors.h"
#include "events.h"
#include "policy.h"
#include "pool.h"

using namespace smbd::lib;

TEST(LibsmbdPool, LendsContiguousRunsFirstFit)
{
    Pool p(4, 1u << 20);
    EXPECT_EQ(p.needed(1), 1u);
    EXPECT_EQ(p.needed(1u << 20), 1u);
    EXPECT_EQ(p.needed((1u << 20) + 1), 2u);
    auto two = p.take(2);
    ASSERT_TRUE(two);
    EXPECT_EQ(*two, 0u);
    auto one = p.take(1);
    ASSERT_TRUE(one);
    EXPECT_EQ(*one, 2u);
    EXPECT_EQ(p.free(), 1u);
    EXPECT_FALSE(p.take(2));
    p.give(*two, 2);
    EXPECT_EQ(p.free(), 3u);
    // buffers 0-1 and 3 are free, but not three in a row
    EXPECT_FALSE(p.take(3));
    auto again = p.take(2);
    ASSERT_TRUE(again);
    EXPECT_EQ(*again, 0u);
}

TEST(LibsmbdPool, HugeSizesDoNotWrapToSmallOnes)
{
    Pool p(64, 1u << 20);
    EXPECT_EQ(p.needed(SIZE_MAX), UINT32_MAX);
    EXPECT_EQ(p.needed(SIZE_MAX - (1u << 20) + 2), UINT32_MAX);
    EXPECT_EQ(p.needed((size_t{1} << 52) + 1), UINT32_MAX);
    EXPECT_FALSE(p.take(p.needed(SIZE_MAX)));
}

TEST(LibsmbdPool, NeverLendsNothingOrMoreThanItHas)
{
    Pool p(2, 4096);
    EXPECT_FALSE(p.take(0));
    EXPECT_FALSE(p.take(3));
    // giving back twice does not make buffers appear
    auto all = p.take(2);
    ASSERT_TRUE(all);
    p.give(*all, 2);
    p.give(*all, 2);
    EXPECT_EQ(p.free(), 2u);
    EXPECT_FALSE(Pool().take(1));
}

TEST(LibsmbdPool, SlicesCutARangeAtBufferBoundaries)
{
    Pool p(8, 1u << 20);
    // 10 bytes before the end of buffer 3 to 5 bytes into buffer 5
    // appended after what is there
    std::vector<smbd_slice> s(1);
    p.slices(2, (2u << 20) - 10, (1u << 20) + 15, s);
    ASSERT_EQ(s.size(), 4u);
    EXPECT_EQ(s[0].length, 0u);
    s.erase(s.begin());
    ASSERT_EQ(s.size(), 3u);
    EXPECT_EQ(s[0].buffer, 3u);
    EXPECT_EQ(s[0].offset, (1u << 20) - 10);
    EXPECT_EQ(s[0].length, 10u);
    EXPECT_EQ(s[1].buffer, 4u);
    EXPECT_EQ(s[1].offset, 0u);
    EXPECT_EQ(s[1].length, 1u << 20);
    EXPECT_EQ(s[2].buffer, 5u);
    EXPECT_EQ(s[2].length, 5u);
    for (const auto &x : s)
        EXPECT_EQ(x.__reserved, 0u);
    std::vector<smbd_slice> none;
    p.slices(0, 0, 0, none);
    EXPECT_TRUE(none.empty());
}

namespace {

// the kernel's out_max_pdu_size
constexpr uint32_t kMaxPdu = 16u << 20;

smbd_event raw_event(uint32_t type, uint64_t offset, uint32_t len)
{
    smbd_event e{};
    e.type = type;
    e.conn_id = 7;
    e.data_offset = offset;
    e.data_len = len;
    return e;
}

} // namespace

TEST(LibsmbdEvents, PduPointsIntoTheData)
{
    std::vector<uint8_t> data(64, 0xab);
    smbd_dev_event ev;
    ASSERT_TRUE(decode_event(raw_event(SMBD_EVENT_PDU_RECEIVED, 8, 40), data,
                             kMaxPdu, ev));
    EXPECT_EQ(ev.type, uint32_t{SMBD_EVENT_PDU_RECEIVED});
    EXPECT_EQ(ev.conn_id, 7u);
    EXPECT_EQ(ev.data, data.data() + 8);
    EXPECT_EQ(ev.data_len, 40u);
}

TEST(LibsmbdEvents, DataOutsideTheAreaIsRefused)
{
    std::vector<uint8_t> data(64);
    smbd_dev_event ev;
    EXPECT_FALSE(decode_event(raw_event(SMBD_EVENT_PDU_RECEIVED, 60, 5), data,
                              kMaxPdu, ev));
    EXPECT_FALSE(decode_event(raw_event(SMBD_EVENT_PDU_RECEIVED, 65, 0), data,
                              kMaxPdu, ev));
    EXPECT_FALSE(decode_event(raw_event(SMBD_EVENT_PDU_RECEIVED, UINT64_MAX, 2),
                              data, kMaxPdu, ev));
    EXPECT_TRUE(decode_event(raw_event(SMBD_EVENT_PDU_RECEIVED, 64, 0), data,
                             kMaxPdu, ev));
    EXPECT_EQ(ev.data, nullptr);
}

TEST(LibsmbdEvents, NewChannelSplitsItsThreeMessages)
{
    std::vector<uint8_t> data(100);
    smbd_event e = raw_event(SMBD_EVENT_NEW_CHANNEL, 0, 90);
    e.u.new_channel.session_id = 0x1234;
    e.u.new_channel.dialect = 0x311;
    e.u.new_channel.negotiate_req_len = 30;
    e.u.new_channel.negotiate_resp_len = 20;
    e.u.new_channel.session_setup_len = 40;
    e.u.new_channel.max_pdu_size = 131072;
    smbd_dev_event ev;
    ASSERT_TRUE(decode_event(e, data, kMaxPdu, ev));
    EXPECT_EQ(ev.max_pdu_size, 131072u);
    EXPECT_EQ(ev.session_id, 0x1234u);
    EXPECT_EQ(ev.dialect, 0x311u);
    EXPECT_EQ(ev.negotiate_req, data.data());
    EXPECT_EQ(ev.negotiate_resp, data.data() + 30);
    EXPECT_EQ(ev.session_setup, data.data() + 50);
    EXPECT_EQ(ev.session_setup_len, 40u);
    // a kernel that does not say: the device's bound; nor more than it
    e.u.new_channel.max_pdu_size = 0;
    ASSERT_TRUE(decode_event(e, data, kMaxPdu, ev));
    EXPECT_EQ(ev.max_pdu_size, kMaxPdu);
    e.u.new_channel.max_pdu_size = UINT32_MAX;
    ASSERT_TRUE(decode_event(e, data, kMaxPdu, ev));
    EXPECT_EQ(ev.max_pdu_size, kMaxPdu);
    // lengths that do not add up to the event's data
    e.u.new_channel.session_setup_len = 41;
    EXPECT_FALSE(decode_event(e, data, kMaxPdu, ev));
    e.u.new_channel.session_setup_len = UINT32_MAX;
    EXPECT_FALSE(decode_event(e, data, kMaxPdu, ev));
}

TEST(LibsmbdEvents, PerTypeFields)
{
    std::vector<uint8_t> data(8);
    smbd_dev_event ev;
    smbd_event e = raw_event(SMBD_EVENT_RDMA_DONE, 0, 0);
    e.user_data = 99;
    e.status = -EIO;
    e.u.rdma_done.bytes = 4096;
    ASSERT_TRUE(decode_event(e, data, kMaxPdu, ev));
    EXPECT_EQ(ev.user_data, 99u);
    EXPECT_EQ(ev.status, -EIO);
    EXPECT_EQ(ev.count, 4096u);

    e = raw_event(SMBD_EVENT_DISCONNECTED, 0, 0);
    e.u.disconnected.reason = SMBD_REASON_PEER;
    ASSERT_TRUE(decode_event(e, data, kMaxPdu, ev));
    EXPECT_EQ(ev.reason, uint32_t{SMBD_REASON_PEER});

    e = raw_event(SMBD_EVENT_NEW_CONNECTION, 0, 0);
    e.u.new_connection.token[0] = 0x5a;
    ASSERT_TRUE(decode_event(e, data, kMaxPdu, ev));
    ASSERT_NE(ev.token, nullptr);
    EXPECT_EQ(ev.token[0], 0x5a);
    ASSERT_NE(ev.remote, nullptr);

    e = raw_event(SMBD_EVENT_OVERFLOW, 0, 0);
    e.u.overflow.lost = 3;
    ASSERT_TRUE(decode_event(e, data, kMaxPdu, ev));
    EXPECT_EQ(ev.count, 3u);
}

TEST(LibsmbdErrors, MessagesNameTheStepAndTheRemedy)
{
    std::string m = explain(Step::open, sys_error(ENOENT), "/dev/smbd");
    EXPECT_NE(m.find("open the SMB Direct device /dev/smbd"), std::string::npos)
        << m;
    EXPECT_NE(m.find(std::strerror(ENOENT)), std::string::npos) << m;
    EXPECT_NE(m.find("load the module"), std::string::npos) << m;
    EXPECT_NE(explain(Step::set_policy, sys_error(EPERM)).find("CAP_NET_ADMIN"),
              std::string::npos);
    EXPECT_NE(explain(Step::open, sys_error(EPROTONOSUPPORT)).find("ABI"),
              std::string::npos);
    EXPECT_NE(explain(Step::rdma, sys_error(EAGAIN)).find("fetch events"),
              std::string::npos);
    // an errno without a known remedy still reads as a sentence
    EXPECT_EQ(explain(Step::send, sys_error(EXDEV)),
              std::string("send a PDU: ") + std::strerror(EXDEV));
}

// A policy from a caller built against 0.1 ends before setup_timeout_ms.
TEST(LibsmbdPolicy, FieldsPastTheCallersSizeTakeTheDefaults)
{
    const smbd::device::Params defaults = smbd::device::default_params();
    smbd_dev_policy p = policy_of(defaults);
    p.negotiate_timeout_ms = 777;
    p.setup_timeout_ms = 1234;
    p.size = offsetof(smbd_dev_policy, setup_timeout_ms);
    smbd::device::Params old = params_of(p, defaults);
    EXPECT_EQ(old.negotiate_timeout_ms, 777u);
    EXPECT_EQ(old.setup_timeout_ms, defaults.setup_timeout_ms);
    p.size = sizeof(p);
    EXPECT_EQ(params_of(p, defaults).setup_timeout_ms, 1234u);
}

// A policy from a caller built against 0.2 ends before credit_timeout_ms.
TEST(LibsmbdPolicy, CreditTimeoutPastTheCallersSizeTakesTheDefault)
{
    const smbd::device::Params defaults = smbd::device::default_params();
    smbd_dev_policy p = policy_of(defaults);
    p.setup_timeout_ms = 1234;
    p.credit_timeout_ms = 4321;
    p.size = offsetof(smbd_dev_policy, credit_timeout_ms);
    smbd::device::Params old = params_of(p, defaults);
    EXPECT_EQ(old.setup_timeout_ms, 1234u);
    EXPECT_EQ(old.credit_timeout_ms, defaults.credit_timeout_ms);
    p.size = sizeof(p);
    EXPECT_EQ(params_of(p, defaults).credit_timeout_ms, 4321u);
    EXPECT_EQ(params_of(p, defaults).to_uapi().credit_timeout_ms, 4321u);
}
