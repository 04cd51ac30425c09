// SET_PARAMS as the device wrapper builds it from its C++ parameters.
#include <gtest/gtest.h>

#include <cstdint>

#include "device.h"

namespace {

using smbd::device::default_params;

TEST(DeviceParams, DefaultsAreWhatTheLinuxClientMeets)
{
    auto params = default_params();
    smbd_set_params p = params.to_uapi();
    EXPECT_EQ(p.size, sizeof(p));
    EXPECT_EQ(p.flags, 0u);
    EXPECT_EQ(p.receive_credit_max, 255u);
    EXPECT_EQ(p.send_credit_target, 255u);
    EXPECT_EQ(p.max_send_size, 1364u);
    EXPECT_EQ(p.max_receive_size, 1364u);
    EXPECT_EQ(p.max_fragmented_size, 1u << 20);
    EXPECT_EQ(p.max_read_write_size, 8u << 20);
    EXPECT_EQ(p.keepalive_interval_ms, 120000u);
    EXPECT_EQ(p.keepalive_timeout_ms, 5000u);
    EXPECT_EQ(p.min_dialect, 0x0300u);
    EXPECT_EQ(p.max_dialect, 0x0311u);
    EXPECT_EQ(p.security_mode, 0x1u);
    EXPECT_EQ(p.capabilities, 0x4fu);
    EXPECT_EQ(p.cipher_count, 4u);
    EXPECT_EQ(p.ciphers[0], 2); // AES128_GCM first
    EXPECT_EQ(p.ciphers[4], 0);
    EXPECT_EQ(p.signing_algorithm_count, 3u);
    EXPECT_EQ(p.signing_algorithms[0], 2); // AES128_GMAC first
    EXPECT_EQ(p.sec_blob_len, params.sec_blob.size());
    EXPECT_EQ(p.sec_blob_ptr,
              reinterpret_cast<uintptr_t>(params.sec_blob.data()));
    EXPECT_EQ(p.__reserved, 0u);
}

// Tests give more ids than the ABI holds to see the kernel refuse the count.
TEST(DeviceParams, TooManyIdsAreCountedButNotCopied)
{
    auto params = default_params();
    params.ciphers = {1, 2, 3, 4, 1, 2, 3, 4, 1};
    smbd_set_params p = params.to_uapi();
    EXPECT_EQ(p.cipher_count, 9u);
    EXPECT_EQ(p.ciphers[7], 4);
    EXPECT_EQ(p.signing_algorithms[0], 2); // the next field is untouched
}

} // namespace
