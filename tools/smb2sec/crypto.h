// The primitives NTLMSSP, SMB2/3 signing and encryption need, each a thin
// call into nettle (as Samba uses GnuTLS, whose crypto is nettle): no
// hand-written cryptography here.
#ifndef SMBD_SMB2SEC_CRYPTO_H
#define SMBD_SMB2SEC_CRYPTO_H

#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>

#include <nettle/arcfour.h>

namespace smbd::smb2sec {

using Bytes16 = std::array<uint8_t, 16>;
using Bytes64 = std::array<uint8_t, 64>;
using ByteView = std::span<const uint8_t>;

Bytes16 md4(ByteView data);
Bytes16 md5(std::initializer_list<ByteView> parts);
// HMAC over the concatenation of @parts.
Bytes16 hmac_md5(ByteView key, std::initializer_list<ByteView> parts);
std::array<uint8_t, 32> hmac_sha256(ByteView key,
                                    std::initializer_list<ByteView> parts);
Bytes64 sha512(std::initializer_list<ByteView> parts);
// RFC 4493
Bytes16 aes128_cmac(const Bytes16 &key, std::initializer_list<ByteView> parts);
// RFC 4543: GCM with everything as additional data and nothing encrypted.
// nettle wants every part but the last a multiple of 16 bytes.
Bytes16 aes128_gmac(const Bytes16 &key, const std::array<uint8_t, 12> &nonce,
                    std::initializer_list<ByteView> parts);

// Authenticated encryption with a 16-byte tag (MS-SMB2 3.1.4.3): @data
// encrypted in place, @aad authenticated with it; AES-128-GCM takes a
// 12-byte nonce (SP 800-38D), AES-128-CCM an 11-byte one (RFC 4309).
// open() decrypts in place and is false, @data garbage, when @tag does
// not verify.
Bytes16 aes128_gcm_seal(const Bytes16 &key, ByteView nonce, ByteView aad,
                        std::span<uint8_t> data);
bool aes128_gcm_open(const Bytes16 &key, ByteView nonce, ByteView aad,
                     std::span<uint8_t> data, const Bytes16 &tag);
Bytes16 aes128_ccm_seal(const Bytes16 &key, ByteView nonce, ByteView aad,
                        std::span<uint8_t> data);
bool aes128_ccm_open(const Bytes16 &key, ByteView nonce, ByteView aad,
                     std::span<uint8_t> data, const Bytes16 &tag);

// Equal length and bytes, in time independent of where they differ.
bool same(ByteView a, ByteView b);

// An RC4 key stream; NTLMSSP's sealing handle keeps one across messages.
class Rc4 {
  public:
    explicit Rc4(ByteView key);
    void crypt(std::span<uint8_t> data);

  private:
    arcfour_ctx ctx_;
};

} // namespace smbd::smb2sec

#endif // SMBD_SMB2SEC_CRYPTO_H
