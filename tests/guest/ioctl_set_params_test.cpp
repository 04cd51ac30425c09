// SET_PARAMS: every range rule of the header, the capability, and the one
// file that holds the parameters.
#include <linux/smbd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "guest.h"

namespace guest {
namespace {

using smbd::device::default_params;

struct Rule {
    std::string name;
    std::function<void(smbd_set_params &, const smbd_info &)> change;
    int want;
};

// Blobs for the length rules; they outlive every ioctl.
const std::vector<uint8_t> max_blob(SMBD_MAX_SEC_BLOB, 0x60);
const std::vector<uint8_t> long_blob(SMBD_MAX_SEC_BLOB + 1, 0x60);

// Each field at and past the ends of its documented range.
std::vector<Rule> range_rules()
{
    std::vector<Rule> rules;
    auto field = [&](std::string name, __u32 smbd_set_params::*f,
                     std::vector<std::pair<uint64_t, int>> cases) {
        for (auto [v, want] : cases)
            rules.push_back({name + "_" + std::to_string(v),
                             [f, v](smbd_set_params &p, const smbd_info &) {
                                 p.*f = static_cast<uint32_t>(v);
                             },
                             want});
    };
    // limits that depend on out_max_pdu_size
    auto pdu_bound = [&](std::string name, __u32 smbd_set_params::*f) {
        rules.push_back({name + "_max_pdu_size",
                         [f](smbd_set_params &p, const smbd_info &i) {
                             p.*f = i.out_max_pdu_size;
                         },
                         0});
        rules.push_back({name + "_above_max_pdu_size",
                         [f](smbd_set_params &p, const smbd_info &i) {
                             p.*f = i.out_max_pdu_size + 1;
                         },
                         EINVAL});
    };
    using P = smbd_set_params;
    field("receive_credit_max", &P::receive_credit_max,
          {{0, EINVAL}, {1, 0}, {65535, 0}, {65536, EINVAL}});
    field("send_credit_target", &P::send_credit_target,
          {{0, EINVAL}, {1, 0}, {65535, 0}, {65536, EINVAL}});
    field("max_send_size", &P::max_send_size,
          {{0, EINVAL}, {127, EINVAL}, {128, 0}, {65536, 0}, {65537, EINVAL}});
    field("max_receive_size", &P::max_receive_size,
          {{0, EINVAL}, {127, EINVAL}, {128, 0}, {65536, 0}, {65537, EINVAL}});
    field("max_fragmented_size", &P::max_fragmented_size,
          {{0, EINVAL}, {131071, EINVAL}, {131072, 0}});
    pdu_bound("max_fragmented_size", &P::max_fragmented_size);
    field("max_read_write_size", &P::max_read_write_size,
          {{0, EINVAL}, {1, 0}});
    pdu_bound("max_read_write_size", &P::max_read_write_size);
    for (auto [name, f] :
         {std::pair{"keepalive_interval_ms", &P::keepalive_interval_ms},
          std::pair{"keepalive_timeout_ms", &P::keepalive_timeout_ms},
          std::pair{"negotiate_timeout_ms", &P::negotiate_timeout_ms},
          std::pair{"accept_timeout_ms", &P::accept_timeout_ms}})
        field(name, f,
              {{0, EINVAL},
               {1, 0},
               {SMBD_MAX_TIMEOUT_MS, 0},
               {SMBD_MAX_TIMEOUT_MS + 1, EINVAL}});
    // 0: the negotiate timeout stands in (callers that predate the field)
    field("setup_timeout_ms", &P::setup_timeout_ms,
          {{0, 0},
           {1, 0},
           {SMBD_MAX_TIMEOUT_MS, 0},
           {SMBD_MAX_TIMEOUT_MS + 1, EINVAL}});
    // 0: the keepalive timeout stands in (callers that predate the field)
    field("credit_timeout_ms", &P::credit_timeout_ms,
          {{0, 0},
           {1, 0},
           {SMBD_MAX_TIMEOUT_MS, 0},
           {SMBD_MAX_TIMEOUT_MS + 1, EINVAL}});
    // SIGNING_ENABLED always, SIGNING_REQUIRED optionally, nothing else
    field("security_mode", &P::security_mode,
          {{0, EINVAL},
           {1, 0},
           {2, EINVAL},
           {3, 0},
           {4, EINVAL},
           {5, EINVAL},
           {0x80000001, EINVAL}});
    for (auto [name, f] :
         {std::pair{"max_transact_size", &P::max_transact_size},
          std::pair{"max_read_size", &P::max_read_size},
          std::pair{"max_write_size", &P::max_write_size}})
        field(name, f, {{0, EINVAL}, {65535, EINVAL}, {65536, 0}});
    field("policy_flags", &P::policy_flags,
          {{SMBD_POLICY_POSIX_EXTENSIONS, 0},
           {1u << 1, EINVAL},
           {1u << 31, EINVAL}});

    auto dialects = [&](uint32_t min, uint32_t max, int want) {
        char name[64];
        std::snprintf(name, sizeof(name), "dialects_%04x_%04x", min, max);
        rules.push_back({name,
                         [min, max](smbd_set_params &p, const smbd_info &) {
                             p.min_dialect = min;
                             p.max_dialect = max;
                         },
                         want});
    };
    dialects(0x0300, 0x0300, 0);
    dialects(0x0302, 0x0302, 0);
    dialects(0x0311, 0x0311, 0);
    dialects(0x0300, 0x0302, 0);
    dialects(0x0202, 0x0311, EINVAL);
    dialects(0x0210, 0x0311, EINVAL);
    dialects(0x0301, 0x0311, EINVAL);
    dialects(0x0300, 0x0312, EINVAL);
    dialects(0x0300, 0x0310, EINVAL);
    dialects(0x0311, 0x0300, EINVAL);
    dialects(0x0302, 0x0300, EINVAL);
    dialects(0, 0, EINVAL);

    auto arrays = [&](std::string name, std::vector<uint16_t> ciphers,
                      uint32_t cipher_count, std::vector<uint16_t> signing,
                      uint32_t signing_count, int want) {
        rules.push_back(
            {name,
             [=](smbd_set_params &p, const smbd_info &) {
                 std::fill(std::begin(p.ciphers), std::end(p.ciphers), 0);
                 std::fill(std::begin(p.signing_algorithms),
                           std::end(p.signing_algorithms), 0);
                 std::copy(ciphers.begin(), ciphers.end(), p.ciphers);
                 std::copy(signing.begin(), signing.end(),
                           p.signing_algorithms);
                 p.cipher_count = cipher_count;
                 p.signing_algorithm_count = signing_count;
             },
             want});
    };
    const std::vector<uint16_t> sig = {2, 1, 0};
    arrays("no_ciphers", {}, 0, sig, 3, 0);
    arrays("every_cipher_once", {4, 3, 2, 1}, 4, sig, 3, 0);
    arrays("cipher_count_above_8", {1, 2, 3, 4}, 9, sig, 3, EINVAL);
    arrays("cipher_id_0", {2, 0}, 2, sig, 3, EINVAL);
    arrays("cipher_id_5", {2, 5}, 2, sig, 3, EINVAL);
    arrays("duplicate_cipher", {2, 1, 2}, 3, sig, 3, EINVAL);
    arrays("cipher_after_count", {2, 1, 4}, 2, sig, 3, EINVAL);
    arrays("cipher_in_last_unused_entry", {2, 0, 0, 0, 0, 0, 0, 1}, 1, sig, 3,
           EINVAL);
    arrays("every_signing_algorithm_once", {2}, 1, {0, 1, 2}, 3, 0);
    arrays("signing_count_above_8", {2}, 1, sig, 9, EINVAL);
    arrays("signing_id_3", {2}, 1, {2, 3}, 2, EINVAL);
    arrays("duplicate_signing", {2}, 1, {1, 1}, 2, EINVAL);
    arrays("duplicate_hmac_sha256", {2}, 1, {0, 0}, 2, EINVAL);
    arrays("signing_after_count", {2}, 1, {2, 1}, 1, EINVAL);

    auto blob = [&](std::string name, const std::vector<uint8_t> *b,
                    uint64_t ptr, uint32_t len, int want) {
        rules.push_back({name,
                         [=](smbd_set_params &p, const smbd_info &) {
                             p.sec_blob_ptr =
                                 b ? reinterpret_cast<uintptr_t>(b->data())
                                   : ptr;
                             p.sec_blob_len = len;
                         },
                         want});
    };
    blob("blob_of_max_length", &max_blob, 0, SMBD_MAX_SEC_BLOB, 0);
    blob("blob_too_long", &long_blob, 0, SMBD_MAX_SEC_BLOB + 1, EINVAL);
    blob("blob_at_kernel_address", nullptr, kBadPointer, 16, EFAULT);
    blob("blob_at_null", nullptr, 0, 16, EFAULT);
    return rules;
}

void PrintTo(const Rule &rule, std::ostream *os) { *os << rule.name; }

class SetParamsRange : public ::testing::TestWithParam<Rule> {};

TEST_P(SetParamsRange, FieldOutsideItsRangeIsInvalid)
{
    const smbd_info info = device_info();
    const auto params = default_params();
    smbd_set_params p = params.to_uapi();
    GetParam().change(p, info);
    Device dev = open_device();
    EXPECT_EQ(dev.raw(SMBD_IOC_SET_PARAMS, &p), GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(Rules, SetParamsRange,
                         ::testing::ValuesIn(range_rules()),
                         [](const auto &info) { return info.param.name; });

TEST(SetParams, DefaultsAreAccepted)
{
    Device dev = open_device();
    EXPECT_EQ(dev.set_params(default_params()), 0);
}

TEST(SetParams, NeedsNetAdmin)
{
    int err = in_child([] {
        if (!drop_net_admin())
            return kChildFailed;
        Device dev = open_device();
        return dev.ok() ? dev.set_params(default_params()) : kChildFailed;
    });
    EXPECT_EQ(err, EPERM);
}

TEST(SetParams, SecondFileIsBusyWhileTheFirstHoldsThem)
{
    Device first = open_device(), second = open_device();
    ASSERT_EQ(first.set_params(default_params()), 0);
    EXPECT_EQ(second.set_params(default_params()), EBUSY);
}

TEST(SetParams, SameFileMaySetThemAgain)
{
    Device dev = open_device();
    ASSERT_EQ(dev.set_params(default_params()), 0);
    auto changed = default_params();
    changed.max_send_size = 8192;
    EXPECT_EQ(dev.set_params(changed), 0);
}

TEST(SetParams, ClosingTheHolderFreesThemForAnotherFile)
{
    Device second = open_device();
    {
        Device first = open_device();
        ASSERT_EQ(first.set_params(default_params()), 0);
    }
    EXPECT_EQ(second.set_params(default_params()), 0);
}

// A rejected call leaves the role free.
TEST(SetParams, InvalidCallDoesNotTakeTheRole)
{
    Device first = open_device(), second = open_device();
    auto bad = default_params();
    bad.max_send_size = 0;
    ASSERT_EQ(first.set_params(bad), EINVAL);
    EXPECT_EQ(second.set_params(default_params()), 0);
}

} // namespace
} // namespace guest
