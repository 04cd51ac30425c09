#include "crypto.h"

#include <nettle/ccm.h>
#include <nettle/cmac.h>
#include <nettle/gcm.h>
#include <nettle/hmac.h>
#include <nettle/md4.h>
#include <nettle/md5.h>
#include <nettle/sha2.h>

namespace smbd::smb2sec {

Bytes16 md4(ByteView data)
{
    md4_ctx ctx;
    md4_init(&ctx);
    md4_update(&ctx, data.size(), data.data());
    Bytes16 out;
    md4_digest(&ctx, out.size(), out.data());
    return out;
}

Bytes16 md5(std::initializer_list<ByteView> parts)
{
    md5_ctx ctx;
    md5_init(&ctx);
    for (ByteView p : parts)
        md5_update(&ctx, p.size(), p.data());
    Bytes16 out;
    md5_digest(&ctx, out.size(), out.data());
    return out;
}

Bytes16 hmac_md5(ByteView key, std::initializer_list<ByteView> parts)
{
    hmac_md5_ctx ctx;
    hmac_md5_set_key(&ctx, key.size(), key.data());
    for (ByteView p : parts)
        hmac_md5_update(&ctx, p.size(), p.data());
    Bytes16 out;
    hmac_md5_digest(&ctx, out.size(), out.data());
    return out;
}

std::array<uint8_t, 32> hmac_sha256(ByteView key,
                                    std::initializer_list<ByteView> parts)
{
    hmac_sha256_ctx ctx;
    hmac_sha256_set_key(&ctx, key.size(), key.data());
    for (ByteView p : parts)
        hmac_sha256_update(&ctx, p.size(), p.data());
    std::array<uint8_t, 32> out;
    hmac_sha256_digest(&ctx, out.size(), out.data());
    return out;
}

Bytes64 sha512(std::initializer_list<ByteView> parts)
{
    sha512_ctx ctx;
    sha512_init(&ctx);
    for (ByteView p : parts)
        sha512_update(&ctx, p.size(), p.data());
    Bytes64 out;
    sha512_digest(&ctx, out.size(), out.data());
    return out;
}

Bytes16 aes128_cmac(const Bytes16 &key, std::initializer_list<ByteView> parts)
{
    cmac_aes128_ctx ctx;
    cmac_aes128_set_key(&ctx, key.data());
    for (ByteView p : parts)
        cmac_aes128_update(&ctx, p.size(), p.data());
    Bytes16 out;
    cmac_aes128_digest(&ctx, out.size(), out.data());
    return out;
}

Bytes16 aes128_gmac(const Bytes16 &key, const std::array<uint8_t, 12> &nonce,
                    std::initializer_list<ByteView> parts)
{
    gcm_aes128_ctx ctx;
    gcm_aes128_set_key(&ctx, key.data());
    gcm_aes128_set_iv(&ctx, nonce.size(), nonce.data());
    for (ByteView p : parts)
        gcm_aes128_update(&ctx, p.size(), p.data());
    Bytes16 out;
    gcm_aes128_digest(&ctx, out.size(), out.data());
    return out;
}

Bytes16 aes128_gcm_seal(const Bytes16 &key, ByteView nonce, ByteView aad,
                        std::span<uint8_t> data)
{
    gcm_aes128_ctx ctx;
    gcm_aes128_set_key(&ctx, key.data());
    gcm_aes128_set_iv(&ctx, nonce.size(), nonce.data());
    gcm_aes128_update(&ctx, aad.size(), aad.data());
    gcm_aes128_encrypt(&ctx, data.size(), data.data(), data.data());
    Bytes16 tag;
    gcm_aes128_digest(&ctx, tag.size(), tag.data());
    return tag;
}

bool aes128_gcm_open(const Bytes16 &key, ByteView nonce, ByteView aad,
                     std::span<uint8_t> data, const Bytes16 &tag)
{
    gcm_aes128_ctx ctx;
    gcm_aes128_set_key(&ctx, key.data());
    gcm_aes128_set_iv(&ctx, nonce.size(), nonce.data());
    gcm_aes128_update(&ctx, aad.size(), aad.data());
    gcm_aes128_decrypt(&ctx, data.size(), data.data(), data.data());
    Bytes16 got;
    gcm_aes128_digest(&ctx, got.size(), got.data());
    return same(got, tag);
}

Bytes16 aes128_ccm_seal(const Bytes16 &key, ByteView nonce, ByteView aad,
                        std::span<uint8_t> data)
{
    ccm_aes128_ctx ctx;
    Bytes16 tag;
    ccm_aes128_set_key(&ctx, key.data());
    ccm_aes128_set_nonce(&ctx, nonce.size(), nonce.data(), aad.size(),
                         data.size(), tag.size());
    ccm_aes128_update(&ctx, aad.size(), aad.data());
    ccm_aes128_encrypt(&ctx, data.size(), data.data(), data.data());
    ccm_aes128_digest(&ctx, tag.size(), tag.data());
    return tag;
}

bool aes128_ccm_open(const Bytes16 &key, ByteView nonce, ByteView aad,
                     std::span<uint8_t> data, const Bytes16 &tag)
{
    ccm_aes128_ctx ctx;
    Bytes16 got;
    ccm_aes128_set_key(&ctx, key.data());
    ccm_aes128_set_nonce(&ctx, nonce.size(), nonce.data(), aad.size(),
                         data.size(), got.size());
    ccm_aes128_update(&ctx, aad.size(), aad.data());
    ccm_aes128_decrypt(&ctx, data.size(), data.data(), data.data());
    ccm_aes128_digest(&ctx, got.size(), got.data());
    return same(got, tag);
}

bool same(ByteView a, ByteView b)
{
    if (a.size() != b.size())
        return false;
    uint8_t diff = 0;
    for (size_t i = 0; i < a.size(); i++)
        diff |= a[i] ^ b[i];
    return diff == 0;
}

Rc4::Rc4(ByteView key) { arcfour_set_key(&ctx_, key.size(), key.data()); }

void Rc4::crypt(std::span<uint8_t> data)
{
    arcfour_crypt(&ctx_, data.size(), data.data(), data.data());
}

} // namespace smbd::smb2sec
