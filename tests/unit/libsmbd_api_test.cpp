// libsmbd's C API on the host, where there is no /dev/smbd: what it says
// about its arguments and about a device that is missing or is not one.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>

#include <libsmbd.h>

TEST(LibsmbdApi, VersionMatchesTheHeader)
{
    std::string v = std::to_string(LIBSMBD_VERSION_MAJOR) + "." +
                    std::to_string(LIBSMBD_VERSION_MINOR) + "." +
                    std::to_string(LIBSMBD_VERSION_PATCH);
    EXPECT_EQ(v, smbd_dev_version());
}

TEST(LibsmbdApi, OpenRefusesBadArguments)
{
    smbd_dev *dev = reinterpret_cast<smbd_dev *>(1);
    char why[128] = "";
    EXPECT_EQ(smbd_dev_open(nullptr, &dev, why, sizeof(why)), EINVAL);
    EXPECT_EQ(dev, nullptr);
    EXPECT_NE(std::string(why).find("SMBD_DEV_OPEN_ARGS_INIT"),
              std::string::npos);
    smbd_dev_open_args args = SMBD_DEV_OPEN_ARGS_INIT;
    args.size = 4; // older than any version of the struct
    EXPECT_EQ(smbd_dev_open(&args, &dev, nullptr, 0), EINVAL);
    args = SMBD_DEV_OPEN_ARGS_INIT;
    EXPECT_EQ(smbd_dev_open(&args, nullptr, why, sizeof(why)), EINVAL);
}

// Checked before the device is opened: it does not matter whether it is
// there.
TEST(LibsmbdApi, ProgramsForANewerOrNoAbiAreRefused)
{
    smbd_dev_open_args args = SMBD_DEV_OPEN_ARGS_INIT;
    args.path = "/nonexistent/smbd";
    smbd_dev *dev = nullptr;
    char why[256] = "";
    args.abi_version = SMBD_ABI_VERSION + 1;
    EXPECT_EQ(smbd_dev_open(&args, &dev, why, sizeof(why)), EPROTONOSUPPORT);
    EXPECT_NE(std::string(why).find("library ABI"), std::string::npos) << why;
    args.abi_version = 0;
    EXPECT_EQ(smbd_dev_open(&args, &dev, why, sizeof(why)), EINVAL);
    EXPECT_NE(std::string(why).find("SMBD_ABI_VERSION"), std::string::npos)
        << why;
    EXPECT_EQ(dev, nullptr);
}

TEST(LibsmbdApi, MissingDeviceSaysToLoadTheModule)
{
    smbd_dev_open_args args = SMBD_DEV_OPEN_ARGS_INIT;
    args.path = "/nonexistent/smbd";
    smbd_dev *dev = nullptr;
    char why[256] = "";
    EXPECT_EQ(smbd_dev_open(&args, &dev, why, sizeof(why)), ENOENT);
    EXPECT_EQ(dev, nullptr);
    std::string m = why;
    EXPECT_NE(m.find("/nonexistent/smbd"), std::string::npos) << m;
    EXPECT_NE(m.find("load the module"), std::string::npos) << m;
    // a short buffer gets a cut, terminated message
    char tiny[8];
    EXPECT_EQ(smbd_dev_open(&args, &dev, tiny, sizeof(tiny)), ENOENT);
    EXPECT_EQ(std::string(tiny), m.substr(0, 7));
}

TEST(LibsmbdApi, ANodeThatIsNotTheDeviceFailsItsFirstQuery)
{
    smbd_dev_open_args args = SMBD_DEV_OPEN_ARGS_INIT;
    args.path = "/dev/null";
    smbd_dev *dev = nullptr;
    char why[256] = "";
    EXPECT_EQ(smbd_dev_open(&args, &dev, why, sizeof(why)), ENOTTY);
    EXPECT_EQ(dev, nullptr);
    EXPECT_NE(std::string(why).find("query the SMB Direct device"),
              std::string::npos)
        << why;
}

TEST(LibsmbdApi, NullHandlesAreRefusedNotDereferenced)
{
    EXPECT_EQ(smbd_dev_listen(nullptr), EINVAL);
    EXPECT_EQ(smbd_dev_disconnect(nullptr, 1), EINVAL);
    smbd_dev_conn_stats st{};
    EXPECT_EQ(smbd_dev_get_conn_stats(nullptr, 1, &st, sizeof(st)), EINVAL);
    EXPECT_EQ(smbd_dev_register_session(nullptr, 1), EINVAL);
    EXPECT_EQ(smbd_dev_set_pool_buffers(nullptr, 1), EINVAL);
    size_t n = 7;
    EXPECT_EQ(smbd_dev_fetch(nullptr, nullptr, &n), EINVAL);
    EXPECT_EQ(n, 0u);
    EXPECT_EQ(smbd_dev_send(nullptr, nullptr, 0, &n), EINVAL);
    EXPECT_EQ(smbd_dev_rdma_start(nullptr, nullptr, 0, &n), EINVAL);
    EXPECT_EQ(smbd_dev_rdma_start_replies(nullptr, nullptr, nullptr, 0, &n),
              EINVAL);
    EXPECT_EQ(smbd_dev_fd(nullptr), -1);
    EXPECT_STREQ(smbd_dev_errmsg(nullptr), "no device handle");
    EXPECT_EQ(smbd_dev_buf_data(nullptr), nullptr);
    EXPECT_EQ(smbd_dev_buf_len(nullptr), 0u);
    EXPECT_EQ(smbd_dev_events_at(nullptr, 0), nullptr);
    smbd_dev_buf_free(nullptr);
    smbd_dev_events_free(nullptr);
    smbd_dev_close(nullptr);
}

TEST(LibsmbdApi, NamesForLogs)
{
    EXPECT_STREQ(smbd_dev_event_name(SMBD_EVENT_RDMA_DONE), "RDMA_DONE");
    EXPECT_STREQ(smbd_dev_event_name(0), "unknown");
    EXPECT_STREQ(smbd_dev_reason_name(SMBD_REASON_KEEPALIVE_TIMEOUT),
                 "keepalive_timeout");
    EXPECT_STREQ(smbd_dev_reason_name(1000), "unknown");
}

TEST(LibsmbdApi, PolicyDefaultsAreWhatClientsMeet)
{
    smbd_dev_policy p;
    smbd_dev_policy_init(&p, sizeof(p));
    EXPECT_EQ(p.size, sizeof(p));
    EXPECT_EQ(p.receive_credit_max, 255u);
    EXPECT_EQ(p.max_send_size, 1364u);
    EXPECT_EQ(p.max_read_write_size, 8u << 20);
    EXPECT_EQ(p.min_dialect, 0x0300u);
    EXPECT_EQ(p.max_dialect, 0x0311u);
    ASSERT_EQ(p.cipher_count, 4u);
    EXPECT_EQ(p.ciphers[0], 2); // AES-128-GCM first
    ASSERT_EQ(p.signing_algorithm_count, 3u);
    EXPECT_EQ(p.sec_blob_len, 0u);
    EXPECT_EQ(p.negotiate_timeout_ms, 5000u);
    EXPECT_EQ(p.setup_timeout_ms, 30000u);
    EXPECT_EQ(p.credit_timeout_ms, 30000u);
}

// A caller built against an older, shorter struct gets only what it knows.
TEST(LibsmbdApi, PolicyInitFillsOnlyTheCallersSize)
{
    smbd_dev_policy p;
    std::memset(&p, 0xee, sizeof(p));
    const size_t known = offsetof(smbd_dev_policy, ciphers);
    smbd_dev_policy_init(&p, known);
    EXPECT_EQ(p.size, known);
    EXPECT_EQ(p.policy_flags, 0u);
    const auto *tail = reinterpret_cast<const unsigned char *>(&p) + known;
    for (size_t i = 0; i < sizeof(p) - known; i++)
        ASSERT_EQ(tail[i], 0xee) << "byte " << known + i << " written";
}
