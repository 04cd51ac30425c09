#include "keys.h"

#include <algorithm>
#include <cstring>

#include "smb2.h"

namespace smbd::smb2sec {

namespace {

// A label or context constant (a string literal) with its terminating
// NUL, which its array type counts.
template <size_t N> ByteView z(const char (&s)[N])
{
    return {reinterpret_cast<const uint8_t *>(s), N};
}

} // namespace

Bytes16 kdf(ByteView key, ByteView label, ByteView context)
{
    static constexpr uint8_t kCounter[] = {0, 0, 0, 1};
    static constexpr uint8_t kSeparator[] = {0};
    static constexpr uint8_t kBits[] = {0, 0, 0, 128};
    auto h = hmac_sha256(key, {kCounter, label, kSeparator, context, kBits});
    Bytes16 out;
    std::copy_n(h.begin(), out.size(), out.begin());
    return out;
}

SessionKeys derive_keys(uint16_t dialect, const Bytes16 &session_key,
                        const Bytes64 &preauth_hash)
{
    SessionKeys k;
    if (dialect < SMB2_DIALECT_300) {
        k.signing = session_key;
        k.application = session_key;
        return k;
    }
    if (dialect == SMB2_DIALECT_311) {
        k.signing = kdf(session_key, z("SMBSigningKey"), preauth_hash);
        k.application = kdf(session_key, z("SMBAppKey"), preauth_hash);
        k.encryption = kdf(session_key, z("SMBC2SCipherKey"), preauth_hash);
        k.decryption = kdf(session_key, z("SMBS2CCipherKey"), preauth_hash);
        return k;
    }
    k.signing = kdf(session_key, z("SMB2AESCMAC"), z("SmbSign"));
    k.application = kdf(session_key, z("SMB2APP"), z("SmbRpc"));
    k.encryption = kdf(session_key, z("SMB2AESCCM"), z("ServerIn "));
    k.decryption = kdf(session_key, z("SMB2AESCCM"), z("ServerOut"));
    return k;
}

} // namespace smbd::smb2sec
