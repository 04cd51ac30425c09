// The driver's counters in sysfs: one decimal number per file.
#include <gtest/gtest.h>

#include "guest.h"

namespace guest {
namespace {

TEST(Counters, EveryCounterIsANumber)
{
    const std::vector<std::string> names = smbd::device::counter_names();
    ASSERT_FALSE(names.empty());
    for (const std::string &name : names) {
        SCOPED_TRACE(name);
        EXPECT_TRUE(smbd::device::read_counter(name).has_value());
    }
}

// The header's reasons and the driver's counters come from one list.
TEST(Counters, EveryDisconnectReasonIsCounted)
{
#define SMBD_REASON_COUNTED(name, value, text)                                 \
    EXPECT_TRUE(smbd::device::read_counter("disconnect_" #text).has_value())   \
        << #name;                                                              \
    EXPECT_STREQ(smbd::device::reason_name(value), #text);
    SMBD_REASONS(SMBD_REASON_COUNTED)
#undef SMBD_REASON_COUNTED
}

// Nothing in this harness connects over RDMA.
TEST(Counters, NoConnectionIsActiveWithoutAPeer)
{
    EXPECT_EQ(smbd::device::read_counter("conn_active"), 0u);
}

} // namespace
} // namespace guest
