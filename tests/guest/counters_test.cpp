// The driver's counters in sysfs: one decimal number per file.
#include <gtest/gtest.h>

#include "guest.h"

namespace guest {
namespace {

TEST(Counters, EveryCounterExistsAndIsANumber)
{
    for (const std::string &name : smbd::device::counter_names()) {
        SCOPED_TRACE(name);
        EXPECT_TRUE(smbd::device::read_counter(name).has_value());
    }
}

// Nothing in this harness connects over RDMA.
TEST(Counters, NoConnectionIsActiveWithoutAPeer)
{
    EXPECT_EQ(smbd::device::read_counter("conn_active"), 0u);
}

} // namespace
} // namespace guest
