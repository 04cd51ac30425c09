// SMB2/3 signing, SMB 3.x key derivation and the 3.1.1 preauth integrity
// hash against published vectors, and AES-CMAC against RFC 4493.
#include <gtest/gtest.h>

#include "keys.h"
#include "signing.h"
#include "smb2.h"
#include "smb2sec_vectors.h"

using namespace smbd::smb2sec;
using smb2sec_test::hex;
namespace blog = smb2sec_test::blog311;

namespace {

std::vector<uint8_t> vec(ByteView v) { return {v.begin(), v.end()}; }

Bytes16 key16(std::string_view h)
{
    auto v = hex(h);
    Bytes16 k{};
    std::copy(v.begin(), v.end(), k.begin());
    return k;
}

TEST(Smb2Sec, AesCmacRfc4493Examples)
{
    // RFC 4493 section 4, examples 1-4
    Bytes16 key = key16("2b7e151628aed2a6abf7158809cf4f3c");
    auto m = hex("6bc1bee22e409f96e93d7e117393172a"
                 "ae2d8a571e03ac9c9eb76fac45af8e51"
                 "30c81c46a35ce411e5fbc1191a0a52ef"
                 "f69f2445df4f9b17ad2b417be66c3710");
    ByteView all(m);
    EXPECT_EQ(vec(aes128_cmac(key, {all.first(0)})),
              hex("bb1d6929e95937287fa37d129b756746"));
    EXPECT_EQ(vec(aes128_cmac(key, {all.first(16)})),
              hex("070a16b46b4d4144f79bdd9dd04a287c"));
    EXPECT_EQ(vec(aes128_cmac(key, {all.first(40)})),
              hex("dfa66747de9ae63030ca32611497c827"));
    EXPECT_EQ(vec(aes128_cmac(key, {all})),
              hex("51f0bebf7e3b9d92fc49741779363cfe"));
    // in pieces, as signing feeds it
    EXPECT_EQ(vec(aes128_cmac(
                  key, {all.first(7), all.subspan(7, 30), all.subspan(37)})),
              hex("51f0bebf7e3b9d92fc49741779363cfe"));
}

TEST(Smb2Sec, PreauthHashIsTheBlogChain)
{
    // Each value of the blog's chain, the connection's then the session's.
    const std::string_view msgs[] = {
        blog::kNegotiateRequest, blog::kNegotiateResponse,
        blog::kSessionSetupRequest1, blog::kSessionSetupResponse1,
        blog::kSessionSetupRequest2};
    PreauthHash h;
    for (size_t i = 0; i < std::size(msgs); i++) {
        h.add(hex(msgs[i]));
        EXPECT_EQ(vec(h.value()), hex(blog::kHashAfter[i])) << "message " << i;
    }
}

Bytes64 blog_hash()
{
    auto v = hex(blog::kHashAfter[4]);
    Bytes64 h{};
    std::copy(v.begin(), v.end(), h.begin());
    return h;
}

TEST(Smb2Sec, Keys311AreTheBlogKeys)
{
    // "Key derivation example for SMB 3.1.1 multichannel", first channel
    SessionKeys k = derive_keys(0x0311, key16(blog::kSessionKey), blog_hash());
    EXPECT_EQ(vec(k.signing), hex(blog::kSigningKey));
    EXPECT_EQ(vec(k.encryption), hex(blog::kEncryptionKey));
    EXPECT_EQ(vec(k.decryption), hex(blog::kDecryptionKey));
    EXPECT_EQ(vec(k.application), hex(blog::kApplicationKey));
}

TEST(Smb2Sec, Keys30AreTheBlogKeys)
{
    // "Key derivation example for SMB 3.0 multichannel": the first channel,
    // then the second channel's signing key; 3.0.2 derives as 3.0.
    for (uint16_t dialect : {0x0300, 0x0302}) {
        SessionKeys k =
            derive_keys(dialect, key16("7CD451825D0450D235424E44BA6E78CC"), {});
        EXPECT_EQ(vec(k.signing), hex("0B7E9C5CAC36C0F6EA9AB275298CEDCE"));
        EXPECT_EQ(vec(k.encryption), hex("FAD27796665B313EBB578F388632B4F7"));
        EXPECT_EQ(vec(k.decryption), hex("B0F0427F7CEB416D1D9DCC0CD4F99447"));
        EXPECT_EQ(vec(k.application), hex("BB23A4575AA26C721AF525AF15A87B4F"));
        SessionKeys second =
            derive_keys(dialect, key16("4E01A2B313BCF660CC250BEF021AEDE6"), {});
        EXPECT_EQ(vec(second.signing), hex("BA1A17DBBFEC349BCA105563D598952F"));
    }
}

TEST(Smb2Sec, Keys2xAreTheSessionKey)
{
    Bytes16 sk = key16(blog::kSessionKey);
    SessionKeys k = derive_keys(0x0210, sk, {});
    EXPECT_EQ(k.signing, sk);
    EXPECT_EQ(k.encryption, Bytes16{});
}

TEST(Smb2Sec, FinalSessionSetupResponseVerifies)
{
    // The blog's final SESSION_SETUP response, signed with AES-CMAC (no
    // signing capability negotiated) under the derived signing key.
    auto pdu = hex(blog::kSessionSetupResponse2);
    Bytes16 key = key16(blog::kSigningKey);
    EXPECT_TRUE(verify_pdu(SigningAlgorithm::aes_cmac, key, pdu));

    // signing it again writes the same signature
    auto resigned = pdu;
    std::fill(resigned.begin() + 48, resigned.begin() + 64, 0);
    ASSERT_TRUE(sign_pdu(SigningAlgorithm::aes_cmac, key, resigned));
    EXPECT_EQ(resigned, pdu);
}

TEST(Smb2Sec, TamperedResponseFails)
{
    auto pdu = hex(blog::kSessionSetupResponse2);
    Bytes16 key = key16(blog::kSigningKey);
    for (size_t at : {size_t(0), size_t(40), size_t(50), pdu.size() - 1}) {
        auto bad = pdu;
        bad[at] ^= 0x01;
        auto s = verify_pdu(SigningAlgorithm::aes_cmac, key, bad);
        ASSERT_FALSE(s) << "byte " << at;
        EXPECT_EQ(s.error().code, Errc::pdu_signature) << "byte " << at;
    }
    Bytes16 other = key;
    other[0] ^= 1;
    EXPECT_FALSE(verify_pdu(SigningAlgorithm::aes_cmac, other, pdu));
}

TEST(Smb2Sec, UnsignedOrShortMessagesFail)
{
    auto pdu = hex(blog::kSessionSetupResponse2);
    pdu[16] &= uint8_t(~SMB2_FLAGS_SIGNED);
    auto s =
        verify_pdu(SigningAlgorithm::aes_cmac, key16(blog::kSigningKey), pdu);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code, Errc::pdu_signature);

    std::vector<uint8_t> short_pdu(63);
    auto t = verify_pdu(SigningAlgorithm::aes_cmac, Bytes16{}, short_pdu);
    ASSERT_FALSE(t);
    EXPECT_EQ(t.error().code, Errc::truncated);
    auto u = sign_pdu(SigningAlgorithm::aes_cmac, Bytes16{}, short_pdu);
    ASSERT_FALSE(u);
    EXPECT_EQ(u.error().code, Errc::truncated);
}

// No published vectors exist for HMAC-SHA256 and AES-GMAC over an SMB2
// message: these were computed here by independent implementations,
// Python's hmac/hashlib and OpenSSL 3.0's "openssl mac GMAC"
// (-cipher AES-128-GCM, hexiv: MessageId || role/cancel word), over the
// blog's messages with their Signature fields zeroed and SMB2_FLAGS_SIGNED
// set, under the blog's signing key.
TEST(Smb2Sec, HmacSha256Signature)
{
    auto pdu = hex(blog::kSessionSetupResponse2);
    std::fill(pdu.begin() + 48, pdu.begin() + 64, 0);
    ASSERT_TRUE(
        sign_pdu(SigningAlgorithm::hmac_sha256, key16(blog::kSigningKey), pdu));
    EXPECT_EQ(std::vector<uint8_t>(pdu.begin() + 48, pdu.begin() + 64),
              hex("373D8B4AE191DC8C15BE375C5BDAEFCB"));
    EXPECT_TRUE(verify_pdu(SigningAlgorithm::hmac_sha256,
                           key16(blog::kSigningKey), pdu));
}

struct GmacCase {
    const char *name;
    std::string_view pdu;
    const char *want;
};

TEST(Smb2Sec, GmacSignatureNonceHasRoleAndCancelBits)
{
    const GmacCase cases[] = {
        // a response: role bit 1
        {"response", blog::kSessionSetupResponse2,
         "75D05BAC99FF7FCC52A44C354381D559"},
        // a request: role bit 0
        {"request", blog::kSessionSetupRequest2,
         "757BFE53EBC1F315B876577CD1535EEE"},
        // a CANCEL request, MessageId 5: cancel bit 1
        {"cancel",
         "FE534D4240000000000000000C000000080000000000000005000000000000"
         "0000000000000000001900000000100000000000000000000000000000000000"
         "0004000000",
         "4433A9E218117362F5CF6A08B8268B56"},
    };
    for (const GmacCase &c : cases) {
        auto pdu = hex(c.pdu);
        std::fill(pdu.begin() + 48, pdu.begin() + 64, 0);
        ASSERT_TRUE(
            sign_pdu(SigningAlgorithm::aes_gmac, key16(blog::kSigningKey), pdu))
            << c.name;
        EXPECT_EQ(std::vector<uint8_t>(pdu.begin() + 48, pdu.begin() + 64),
                  hex(c.want))
            << c.name;
        EXPECT_TRUE(verify_pdu(SigningAlgorithm::aes_gmac,
                               key16(blog::kSigningKey), pdu))
            << c.name;
    }
}

TEST(Smb2Sec, GmacRefusesTheMessageIdsManyMessagesShare)
{
    // MessageId 0 (an async CANCEL) and 0xFFFFFFFFFFFFFFFF (unsolicited
    // messages) would give many messages the same AES-GMAC nonce; Samba
    // refuses both. The other algorithms have no nonce.
    Bytes16 key = key16(blog::kSigningKey);
    for (uint64_t id : {uint64_t{0}, UINT64_MAX}) {
        auto pdu = hex(blog::kSessionSetupRequest2);
        for (size_t i = 0; i < 8; i++)
            pdu[SMB2_HDR_MESSAGE_ID + i] = uint8_t(id >> (8 * i));
        auto s = sign_pdu(SigningAlgorithm::aes_gmac, key, pdu);
        ASSERT_FALSE(s) << id;
        EXPECT_EQ(s.error().code, Errc::invalid_argument) << id;
        // one signed some other way is not verified as AES-GMAC either
        ASSERT_TRUE(sign_pdu(SigningAlgorithm::aes_cmac, key, pdu)) << id;
        auto v = verify_pdu(SigningAlgorithm::aes_gmac, key, pdu);
        ASSERT_FALSE(v) << id;
        EXPECT_EQ(v.error().code, Errc::invalid_argument) << id;
        EXPECT_TRUE(verify_pdu(SigningAlgorithm::aes_cmac, key, pdu)) << id;
    }
    // MessageId 1 is fine
    auto pdu = hex(blog::kSessionSetupRequest2);
    std::fill(pdu.begin() + SMB2_HDR_MESSAGE_ID,
              pdu.begin() + SMB2_HDR_MESSAGE_ID + 8, 0);
    pdu[SMB2_HDR_MESSAGE_ID] = 1;
    ASSERT_TRUE(sign_pdu(SigningAlgorithm::aes_gmac, key, pdu));
    EXPECT_TRUE(verify_pdu(SigningAlgorithm::aes_gmac, key, pdu));
}

TEST(Smb2Sec, SigningAlgorithmOfTheConnection)
{
    EXPECT_EQ(signing_algorithm(0x0202, std::nullopt),
              SigningAlgorithm::hmac_sha256);
    EXPECT_EQ(signing_algorithm(0x0210, std::nullopt),
              SigningAlgorithm::hmac_sha256);
    EXPECT_EQ(signing_algorithm(0x0300, std::nullopt),
              SigningAlgorithm::aes_cmac);
    EXPECT_EQ(signing_algorithm(0x0302, SMB2_SIGNING_AES128_GMAC),
              SigningAlgorithm::aes_cmac)
        << "signing capabilities are 3.1.1's";
    EXPECT_EQ(signing_algorithm(0x0311, std::nullopt),
              SigningAlgorithm::aes_cmac);
    EXPECT_EQ(signing_algorithm(0x0311, SMB2_SIGNING_AES128_GMAC),
              SigningAlgorithm::aes_gmac);
    EXPECT_EQ(signing_algorithm(0x0311, SMB2_SIGNING_AES128_CMAC),
              SigningAlgorithm::aes_cmac);
    EXPECT_EQ(signing_algorithm(0x0311, SMB2_SIGNING_HMAC_SHA256),
              SigningAlgorithm::hmac_sha256);
}

} // namespace
