// Test PDUs: the pattern derived from MessageId and the echo check; the
// test file's pattern derived from the offset.
#include <gtest/gtest.h>

#include <algorithm>

#include "pattern.h"
#include "smb2_wire.h"
#include "wire_bytes.h"

using namespace smbd::client;

namespace {

TEST(ClientPattern, DeterministicPerSeed)
{
    std::vector<uint8_t> a(1000), b(1000), c(1000);
    fill_pattern(5, a);
    fill_pattern(5, b);
    fill_pattern(6, c);
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
    EXPECT_FALSE(pattern_mismatch(5, a).has_value());
}

// A range of the test file reads the same whatever range it was written in.
TEST(ClientFilePattern, EachByteDependsOnItsOffsetOnly)
{
    std::vector<uint8_t> whole(4096);
    fill_file_pattern(9, 1000, whole);
    for (uint64_t start : {0, 1, 7, 8, 13, 4000}) {
        for (size_t len : {1, 5, 8, 9, 63}) {
            std::vector<uint8_t> part(len);
            fill_file_pattern(9, 1000 + start, part);
            EXPECT_TRUE(
                std::equal(part.begin(), part.end(), whole.begin() + start))
                << start << "+" << len;
        }
    }
    EXPECT_FALSE(file_pattern_mismatch(9, 1000, whole).has_value());
    std::vector<uint8_t> other(4096);
    fill_file_pattern(10, 1000, other);
    EXPECT_NE(whole, other);
}

TEST(ClientFilePattern, MismatchAtTheChangedByte)
{
    std::vector<uint8_t> data(10000);
    fill_file_pattern(3, 77, data);
    data[5003] ^= 0x80;
    EXPECT_EQ(file_pattern_mismatch(3, 77, data), 5003u);
    // the same bytes are wrong at another offset from the first byte on
    EXPECT_EQ(file_pattern_mismatch(3, 78, data), 0u);
}

TEST(ClientPattern, MismatchAtTheChangedByte)
{
    std::vector<uint8_t> a(333);
    fill_pattern(42, a);
    a[200] ^= 0x01;
    EXPECT_EQ(pattern_mismatch(42, a), 200u);
    EXPECT_EQ(pattern_mismatch(43, a), 0u);
}

// What the test responder sends back: the PDU with SERVER_TO_REDIR added.
std::vector<uint8_t> echoed(const EchoSpec &s)
{
    auto b = build_echo_pdu(s);
    smbd_put_le32(&b[16], smbd_get_le32(&b[16]) | SMB2_FLAGS_SERVER_TO_REDIR);
    return b;
}

TEST(ClientEcho, PduIsAnIoctlRequest)
{
    EchoSpec s{9, 0x1234, 70000};
    auto b = build_echo_pdu(s);
    ASSERT_EQ(b.size(), 70000u);
    smb2_hdr h;
    ASSERT_PROTO_ERR(smb2_hdr_parse(b.data(), b.size(), &h), SMBD_E_OK);
    EXPECT_EQ(h.command, SMB2_IOCTL);
    EXPECT_EQ(h.message_id, 9u);
    EXPECT_EQ(h.session_id, 0x1234u);
    EXPECT_EQ(h.credit_charge, 2) << "70000 bytes charge two 64 KiB credits";
    EXPECT_FALSE(pattern_mismatch(9, std::span<const uint8_t>(b).subspan(64)));
}

TEST(ClientEcho, GoodEchoAccepted)
{
    EchoSpec s{3, 77, 4096};
    EXPECT_TRUE(verify_echo(s, echoed(s)).ok());
    EchoSpec header_only{4, 77, 64};
    EXPECT_TRUE(verify_echo(header_only, echoed(header_only)).ok());
}

TEST(ClientEcho, EachDifferenceRefused)
{
    EchoSpec s{3, 77, 4096};
    struct Case {
        const char *name;
        size_t offset;
    };
    const Case cases[] = {{"protocol id", 0}, {"command", 12},
                          {"message id", 24}, {"session id", 40},
                          {"signature", 63},  {"first payload byte", 64},
                          {"last byte", 4095}};
    for (const auto &c : cases) {
        auto b = echoed(s);
        b[c.offset] ^= 0x80;
        auto st = verify_echo(s, b);
        ASSERT_FALSE(st.ok()) << c.name;
        EXPECT_EQ(st.error().code, make_error_code(Errc::mismatch));
        EXPECT_NE(st.error().message.find("byte " + std::to_string(c.offset)),
                  std::string::npos)
            << st.error().message;
    }
}

TEST(ClientEcho, FlagMustBeSet)
{
    EchoSpec s{3, 77, 128};
    auto st = verify_echo(s, build_echo_pdu(s));
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.error().message.find("byte 16"), std::string::npos);
}

TEST(ClientEcho, LengthMustMatch)
{
    EchoSpec s{3, 77, 128};
    auto b = echoed(s);
    b.pop_back();
    EXPECT_FALSE(verify_echo(s, b).ok());
}

TEST(ClientEcho, AnotherPdusEchoRefused)
{
    EchoSpec s{3, 77, 256};
    EchoSpec other{4, 77, 256};
    EXPECT_FALSE(verify_echo(s, echoed(other)).ok());
}

} // namespace
