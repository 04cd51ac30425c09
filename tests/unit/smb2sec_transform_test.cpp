// SMB 3.x encryption: AES-128-GCM against the GCM specification's test
// cases, both ciphers sealed and opened again, the transform header at
// MS-SMB2 2.2.41's offsets, and every way a transform can be refused.
// Interoperability (Samba opens what this seals) is make e2e's.
#include <gtest/gtest.h>

#include "le.h"
#include "smb2.h"
#include "smb2sec_vectors.h"
#include "transform.h"

using namespace smbd::smb2sec;
using smb2sec_test::hex;

namespace {

std::vector<uint8_t> vec(ByteView v) { return {v.begin(), v.end()}; }

const Bytes16 kKey{0x40, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47,
                   0x48, 0x49, 0x4a, 0x4b, 0x4c, 0x4d, 0x4e, 0x4f};
const Bytes16 kNonce{0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17,
                     0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f};
constexpr uint64_t kSession = 0x0000100000000045ull;

std::vector<uint8_t> message()
{
    std::vector<uint8_t> m(64 + 100);
    for (size_t i = 0; i < m.size(); i++)
        m[i] = uint8_t(i * 7);
    return m;
}

TEST(Smb2SecAead, Aes128GcmSpecTestCases)
{
    // McGrew and Viega, "The Galois/Counter Mode of Operation", test
    // cases 1 (nothing to encrypt) and 2: zero key and IV
    const Bytes16 zero{};
    const std::vector<uint8_t> iv(12, 0);
    std::vector<uint8_t> none;
    EXPECT_EQ(vec(aes128_gcm_seal(zero, iv, {}, none)),
              hex("58e2fccefa7e3061367f1d57a4e7455a"));
    std::vector<uint8_t> p(16, 0);
    Bytes16 tag = aes128_gcm_seal(zero, iv, {}, p);
    EXPECT_EQ(p, hex("0388dace60b6a392f328c2b971b2fe78"));
    EXPECT_EQ(vec(tag), hex("ab6e47d42cec13bdf53a67b21257bddf"));
    ASSERT_TRUE(aes128_gcm_open(zero, iv, {}, p, tag));
    EXPECT_EQ(p, std::vector<uint8_t>(16, 0));
}

TEST(Smb2SecAead, OpenRefusesAnyChange)
{
    const std::vector<uint8_t> aad = hex("0102030405");
    for (bool ccm : {true, false}) {
        SCOPED_TRACE(ccm ? "CCM" : "GCM");
        ByteView n = ByteView(kNonce).first(ccm ? 11 : 12);
        auto seal = ccm ? aes128_ccm_seal : aes128_gcm_seal;
        auto open = ccm ? aes128_ccm_open : aes128_gcm_open;
        std::vector<uint8_t> data = message(), orig = data;
        Bytes16 tag = seal(kKey, n, aad, data);
        EXPECT_NE(data, orig);
        auto copy = data;
        ASSERT_TRUE(open(kKey, n, aad, copy, tag));
        EXPECT_EQ(copy, orig);
        copy = data;
        copy[5] ^= 1;
        EXPECT_FALSE(open(kKey, n, aad, copy, tag));
        copy = data;
        EXPECT_FALSE(open(kKey, n, hex("0102030406"), copy, tag));
        Bytes16 bad = tag;
        bad[15] ^= 0x80;
        copy = data;
        EXPECT_FALSE(open(kKey, n, aad, copy, bad));
    }
}

TEST(Smb2SecTransform, CipherOfTheConnection)
{
    EXPECT_EQ(connection_cipher(SMB2_DIALECT_300, std::nullopt),
              Cipher::aes128_ccm);
    EXPECT_EQ(connection_cipher(SMB2_DIALECT_302, std::nullopt),
              Cipher::aes128_ccm);
    EXPECT_EQ(connection_cipher(SMB2_DIALECT_311, SMB2_ENCRYPTION_AES128_GCM),
              Cipher::aes128_gcm);
    EXPECT_EQ(connection_cipher(SMB2_DIALECT_311, SMB2_ENCRYPTION_AES128_CCM),
              Cipher::aes128_ccm);
    EXPECT_EQ(connection_cipher(SMB2_DIALECT_311, SMB2_ENCRYPTION_AES256_GCM),
              std::nullopt);
    EXPECT_EQ(connection_cipher(SMB2_DIALECT_311, std::nullopt), std::nullopt);
    EXPECT_EQ(connection_cipher(SMB2_DIALECT_210, std::nullopt), std::nullopt);
}

TEST(Smb2SecTransform, HeaderAtItsOffsets)
{
    for (Cipher c : {Cipher::aes128_ccm, Cipher::aes128_gcm}) {
        size_t n = c == Cipher::aes128_ccm ? 11 : 12;
        auto m = message();
        auto t = seal_message(c, kKey, kNonce, kSession, m);
        ASSERT_EQ(t.size(), 52 + m.size());
        EXPECT_EQ(vec(ByteView(t).first(4)), hex("fd534d42")); // ProtocolId
        // Nonce: the cipher's part, zeros after it
        EXPECT_EQ(vec(ByteView(t).subspan(20, n)),
                  vec(ByteView(kNonce).first(n)));
        EXPECT_EQ(vec(ByteView(t).subspan(20 + n, 16 - n)),
                  std::vector<uint8_t>(16 - n, 0));
        EXPECT_EQ(le::get32(t, 36), m.size()); // OriginalMessageSize
        EXPECT_EQ(le::get16(t, 40), 0);        // Reserved
        EXPECT_EQ(le::get16(t, 42), 1);        // Flags: encrypted
        EXPECT_EQ(le::get64(t, 44), kSession);
        EXPECT_TRUE(is_transform(t));
        EXPECT_FALSE(is_transform(m));
        EXPECT_EQ(*transform_session(t), kSession);
        auto back = open_message(c, kKey, t);
        ASSERT_TRUE(back.ok()) << back.error().message;
        EXPECT_EQ(*back, m);
        // the other cipher cannot open it
        Cipher other =
            c == Cipher::aes128_ccm ? Cipher::aes128_gcm : Cipher::aes128_ccm;
        EXPECT_FALSE(open_message(other, kKey, t).ok());
    }
}

void ExpectRefused(const std::vector<uint8_t> &t, Errc code,
                   std::string_view text)
{
    auto r = open_message(Cipher::aes128_gcm, kKey, t);
    ASSERT_FALSE(r.ok()) << "opened";
    EXPECT_EQ(r.error().code, make_error_code(code)) << r.error().message;
    EXPECT_NE(r.error().message.find(text), std::string::npos)
        << r.error().message;
}

TEST(Smb2SecTransform, HostileRefused)
{
    const auto good =
        seal_message(Cipher::aes128_gcm, kKey, kNonce, kSession, message());
    ExpectRefused(std::vector<uint8_t>(good.begin(), good.begin() + 51),
                  Errc::truncated, "51 bytes");
    auto t = good;
    le::set32(t, 36, uint32_t(message().size() + 1));
    ExpectRefused(t, Errc::field_range, "OriginalMessageSize 165");
    t = good;
    t.pop_back();
    ExpectRefused(t, Errc::field_range, "carrying 163 bytes");
    t = good;
    le::set16(t, 42, 0);
    ExpectRefused(t, Errc::field_range, "Flags 0");
    // what the tag covers: the header from the Nonce, and the message
    for (size_t at : {size_t(20), size_t(44), size_t(60)}) {
        t = good;
        t[at] ^= 1;
        ExpectRefused(t, Errc::pdu_signature, "does not verify");
    }
    t = good;
    t[4] ^= 1; // the tag itself
    ExpectRefused(t, Errc::pdu_signature, "does not verify");
}

} // namespace
