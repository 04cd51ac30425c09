#include "transform.h"

#include <algorithm>
#include <string>

#include "le.h"
#include "smb2.h"

namespace smbd::smb2sec {

namespace {

// The header (2.2.41): ProtocolId, Signature (the tag), Nonce,
// OriginalMessageSize, Reserved, Flags, SessionId. What the tag covers
// starts at the Nonce.
constexpr size_t TF_SIGNATURE = 4;
constexpr size_t TF_NONCE = 20;
constexpr size_t TF_ORIGINAL_SIZE = 36;
constexpr size_t TF_FLAGS = 42;
constexpr size_t TF_SESSION_ID = 44;
constexpr uint16_t TF_FLAG_ENCRYPTED = 0x0001;
constexpr uint8_t kProtocolId[4] = {0xFD, 'S', 'M', 'B'};

size_t nonce_size(Cipher c) { return c == Cipher::aes128_ccm ? 11 : 12; }

} // namespace

std::optional<Cipher> connection_cipher(uint16_t dialect,
                                        std::optional<uint16_t> cipher_id)
{
    if (dialect == SMB2_DIALECT_300 || dialect == SMB2_DIALECT_302)
        return Cipher::aes128_ccm;
    if (dialect != SMB2_DIALECT_311 || !cipher_id)
        return std::nullopt;
    if (*cipher_id == SMB2_ENCRYPTION_AES128_CCM)
        return Cipher::aes128_ccm;
    if (*cipher_id == SMB2_ENCRYPTION_AES128_GCM)
        return Cipher::aes128_gcm;
    return std::nullopt;
}

bool is_transform(ByteView pdu)
{
    return pdu.size() >= sizeof(kProtocolId) &&
           std::equal(std::begin(kProtocolId), std::end(kProtocolId),
                      pdu.begin());
}

std::vector<uint8_t> seal_message(Cipher cipher, const Bytes16 &key,
                                  const Bytes16 &nonce, uint64_t session_id,
                                  ByteView message)
{
    std::vector<uint8_t> out(SMB2_TRANSFORM_SIZE + message.size(), 0);
    std::span<uint8_t> b(out);
    std::copy(std::begin(kProtocolId), std::end(kProtocolId), out.begin());
    std::copy_n(nonce.begin(), nonce_size(cipher), out.begin() + TF_NONCE);
    le::set32(b, TF_ORIGINAL_SIZE, uint32_t(message.size()));
    le::set16(b, TF_FLAGS, TF_FLAG_ENCRYPTED);
    le::set64(b, TF_SESSION_ID, session_id);
    std::copy(message.begin(), message.end(),
              out.begin() + SMB2_TRANSFORM_SIZE);
    ByteView n = b.subspan(TF_NONCE, nonce_size(cipher));
    ByteView aad = b.subspan(TF_NONCE, SMB2_TRANSFORM_SIZE - TF_NONCE);
    std::span<uint8_t> data = b.subspan(SMB2_TRANSFORM_SIZE);
    Bytes16 tag = cipher == Cipher::aes128_ccm
                      ? aes128_ccm_seal(key, n, aad, data)
                      : aes128_gcm_seal(key, n, aad, data);
    std::copy(tag.begin(), tag.end(), out.begin() + TF_SIGNATURE);
    return out;
}

Result<uint64_t> transform_session(ByteView pdu)
{
    if (pdu.size() < SMB2_TRANSFORM_SIZE)
        return make_error(Errc::truncated,
                          "a transform of " + std::to_string(pdu.size()) +
                              " bytes, shorter than its header");
    return le::get64(pdu, TF_SESSION_ID);
}

Result<std::vector<uint8_t>> open_message(Cipher cipher, const Bytes16 &key,
                                          ByteView pdu)
{
    if (auto s = transform_session(pdu); !s)
        return s.error();
    uint32_t size = le::get32(pdu, TF_ORIGINAL_SIZE);
    if (size != pdu.size() - SMB2_TRANSFORM_SIZE)
        return make_error(Errc::field_range,
                          "OriginalMessageSize " + std::to_string(size) +
                              " in a transform carrying " +
                              std::to_string(pdu.size() - SMB2_TRANSFORM_SIZE) +
                              " bytes");
    uint16_t flags = le::get16(pdu, TF_FLAGS);
    if (flags != TF_FLAG_ENCRYPTED)
        return make_error(Errc::field_range, "transform Flags " +
                                                 std::to_string(flags) +
                                                 ", not encrypted");
    Bytes16 tag;
    std::copy_n(pdu.begin() + TF_SIGNATURE, tag.size(), tag.begin());
    std::vector<uint8_t> message(pdu.begin() + SMB2_TRANSFORM_SIZE, pdu.end());
    ByteView n = pdu.subspan(TF_NONCE, nonce_size(cipher));
    ByteView aad = pdu.subspan(TF_NONCE, SMB2_TRANSFORM_SIZE - TF_NONCE);
    bool ok = cipher == Cipher::aes128_ccm
                  ? aes128_ccm_open(key, n, aad, message, tag)
                  : aes128_gcm_open(key, n, aad, message, tag);
    if (!ok)
        return make_error(Errc::pdu_signature,
                          "a transform whose tag does not verify");
    return message;
}

} // namespace smbd::smb2sec
