// SMB2/3 message signing (MS-SMB2 3.1.4.1, 3.1.5.1): HMAC-SHA256 for 2.x,
// AES-128-CMAC for 3.x, AES-128-GMAC when 3.1.1 negotiated it. One message
// at a time: its 64-byte header and body, with the padding of a compound
// chain.
#ifndef SMBD_SMB2SEC_SIGNING_H
#define SMBD_SMB2SEC_SIGNING_H

#include <cstdint>
#include <optional>
#include <span>

#include "crypto.h"
#include "errc.h"

namespace smbd::smb2sec {

// not in the protocol core, which never sees one
inline constexpr uint16_t SMB2_CANCEL = 0x000C;

enum class SigningAlgorithm { hmac_sha256, aes_cmac, aes_gmac };

// The algorithm of a connection of @dialect; @signing_id is the id of a
// 3.1.1 SMB2_SIGNING_CAPABILITIES response, nullopt when there was none
// (AES-CMAC then). @signing_id must be one the client offered, which the
// client's check_negotiate_choice() (smb2_wire.h) makes sure of before
// the session starts: an id MS-SMB2 does not define gives AES-CMAC here,
// which would not be the server's algorithm.
SigningAlgorithm signing_algorithm(uint16_t dialect,
                                   std::optional<uint16_t> signing_id);

// Sets SMB2_FLAGS_SIGNED and writes the signature into @pdu. AES-GMAC
// refuses MessageId 0 and 0xFFFFFFFFFFFFFFFF (Errc::invalid_argument):
// their nonce is not the message's own.
Status sign_pdu(SigningAlgorithm alg, const Bytes16 &key,
                std::span<uint8_t> pdu);
// The message must be flagged signed and its signature must verify;
// AES-GMAC refuses the same MessageIds as sign_pdu.
Status verify_pdu(SigningAlgorithm alg, const Bytes16 &key, ByteView pdu);

} // namespace smbd::smb2sec

#endif // SMBD_SMB2SEC_SIGNING_H
