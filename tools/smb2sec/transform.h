// SMB 3.x encryption (MS-SMB2 2.2.41, 3.1.4.3, 3.2.5.1.1.1): a message
// sealed into an SMB2 TRANSFORM_HEADER and the rest, and opened again.
// AES-128-CCM before 3.1.1, AES-128-CCM or AES-128-GCM as 3.1.1
// negotiated; the AES-256 ciphers take keys this library does not derive
// (keys.h).
#ifndef SMBD_SMB2SEC_TRANSFORM_H
#define SMBD_SMB2SEC_TRANSFORM_H

#include <cstdint>
#include <optional>
#include <vector>

#include "crypto.h"
#include "errc.h"

namespace smbd::smb2sec {

inline constexpr size_t SMB2_TRANSFORM_SIZE = 52;

enum class Cipher { aes128_ccm, aes128_gcm };

// The cipher of a connection of @dialect; @cipher_id the id of a 3.1.1
// SMB2_ENCRYPTION_CAPABILITIES response. nullopt: none this library
// does (2.x, no cipher in common, AES-256).
std::optional<Cipher> connection_cipher(uint16_t dialect,
                                        std::optional<uint16_t> cipher_id);

// Whether @pdu starts with the transform's ProtocolId (0xFD 'S' 'M' 'B').
bool is_transform(ByteView pdu);

// @message sealed for @session_id: the header with @nonce (its first 11
// bytes for CCM, 12 for GCM, the rest zero), then the ciphertext.
std::vector<uint8_t> seal_message(Cipher cipher, const Bytes16 &key,
                                  const Bytes16 &nonce, uint64_t session_id,
                                  ByteView message);
// The SessionId a transform names; Errc::truncated below its header.
Result<uint64_t> transform_session(ByteView pdu);
// The message inside @pdu, decrypted with @key: Errc::truncated below the
// header, Errc::field_range when OriginalMessageSize is not the rest of
// the message or the flags are not "encrypted", Errc::pdu_signature when
// the tag does not verify.
Result<std::vector<uint8_t>> open_message(Cipher cipher, const Bytes16 &key,
                                          ByteView pdu);

} // namespace smbd::smb2sec

#endif // SMBD_SMB2SEC_TRANSFORM_H
