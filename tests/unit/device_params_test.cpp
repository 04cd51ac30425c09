// SET_PARAMS as the device wrapper builds it from its C++ parameters.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "device.h"
#include "policy.h"

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

// Every 32-bit field reaches the kernel's struct and goes through the C
// API's one unchanged: the conversions come from one list of fields.
TEST(DeviceParams, EveryFieldReachesTheKernelAndTheCApi)
{
    auto params = default_params();
    uint32_t v = 1000;
#define SMBD_FIELD_SET(name) params.name = v++;
    SMBD_POLICY_U32_FIELDS(SMBD_FIELD_SET)
#undef SMBD_FIELD_SET
    const smbd_set_params p = params.to_uapi();
    const smbd::device::Params back =
        smbd::lib::params_of(smbd::lib::policy_of(params), default_params());
    v = 1000;
#define SMBD_FIELD_CHECK(name)                                                 \
    EXPECT_EQ(p.name, v) << #name;                                             \
    EXPECT_EQ(back.name, v) << #name;                                          \
    v++;
    SMBD_POLICY_U32_FIELDS(SMBD_FIELD_CHECK)
#undef SMBD_FIELD_CHECK
}

// The defaults name no ServerGuid: each policy without one gets its own.
TEST(DeviceParams, NoServerGuidGetsARandomOne)
{
    auto params = default_params();
    EXPECT_EQ(params.server_guid, decltype(params.server_guid){});
    const smbd_set_params a = params.to_uapi();
    const smbd_set_params b = params.to_uapi();
    EXPECT_NE(std::memcmp(a.server_guid, b.server_guid, sizeof(a.server_guid)),
              0);
    params.server_guid.fill(0x5a);
    const smbd_set_params c = params.to_uapi();
    for (uint8_t byte : c.server_guid)
        EXPECT_EQ(byte, 0x5a);
}

} // namespace
