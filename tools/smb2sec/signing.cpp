#include "signing.h"

#include <algorithm>
#include <string>

#include "le.h"
#include "smb2.h"

namespace smbd::smb2sec {

namespace {

// The signature over @pdu with its Signature field taken as zero.
Bytes16 compute(SigningAlgorithm alg, const Bytes16 &key, ByteView pdu)
{
    static constexpr Bytes16 kZero{};
    ByteView head = pdu.first(SMB2_HDR_SIGNATURE);
    ByteView body = pdu.subspan(SMB2_HDR_SIZE);
    switch (alg) {
    case SigningAlgorithm::hmac_sha256: {
        auto h = hmac_sha256(key, {head, kZero, body});
        Bytes16 sig;
        std::copy_n(h.begin(), sig.size(), sig.begin());
        return sig;
    }
    case SigningAlgorithm::aes_cmac:
        return aes128_cmac(key, {head, kZero, body});
    case SigningAlgorithm::aes_gmac: {
        // Nonce: MessageId, then a 32-bit word with bit 0 set by the server
        // and bit 1 on a CANCEL request (MS-SMB2 3.1.4.1).
        uint32_t flags = le::get32(pdu, SMB2_HDR_FLAGS);
        bool response = flags & SMB2_FLAGS_SERVER_TO_REDIR;
        bool cancel =
            !response && le::get16(pdu, SMB2_HDR_COMMAND) == SMB2_CANCEL;
        std::array<uint8_t, 12> nonce{};
        std::copy_n(pdu.begin() + SMB2_HDR_MESSAGE_ID, 8, nonce.begin());
        nonce[8] = uint8_t((response ? 1 : 0) | (cancel ? 2 : 0));
        return aes128_gmac(key, nonce, {head, kZero, body});
    }
    }
    return {};
}

Status check_size(ByteView pdu)
{
    if (pdu.size() < SMB2_HDR_SIZE)
        return make_error(Errc::truncated,
                          "SMB2 message of " + std::to_string(pdu.size()) +
                              " bytes, shorter than its header");
    return {};
}

// AES-GMAC's nonce is the MessageId with the role and CANCEL bits. Many
// messages share MessageId 0 (an async CANCEL) and 0xFFFFFFFFFFFFFFFF
// (unsolicited messages), so signing one of them would reuse a nonce;
// Samba refuses both (smb2_signing_calc_signature).
Status check_gmac_nonce(SigningAlgorithm alg, ByteView pdu)
{
    if (alg != SigningAlgorithm::aes_gmac)
        return {};
    uint64_t id = le::get64(pdu, SMB2_HDR_MESSAGE_ID);
    if (id == 0 || id == UINT64_MAX)
        return make_error(Errc::invalid_argument,
                          "no AES-GMAC signature for MessageId " +
                              std::to_string(id) +
                              ", whose nonce other messages share");
    return {};
}

} // namespace

SigningAlgorithm signing_algorithm(uint16_t dialect,
                                   std::optional<uint16_t> signing_id)
{
    if (dialect < SMB2_DIALECT_300)
        return SigningAlgorithm::hmac_sha256;
    if (dialect == SMB2_DIALECT_311 && signing_id) {
        if (*signing_id == SMB2_SIGNING_AES128_GMAC)
            return SigningAlgorithm::aes_gmac;
        if (*signing_id == SMB2_SIGNING_HMAC_SHA256)
            return SigningAlgorithm::hmac_sha256;
    }
    return SigningAlgorithm::aes_cmac;
}

Status sign_pdu(SigningAlgorithm alg, const Bytes16 &key,
                std::span<uint8_t> pdu)
{
    if (auto s = check_size(pdu); !s)
        return s;
    if (auto s = check_gmac_nonce(alg, pdu); !s)
        return s;
    le::set32(pdu, SMB2_HDR_FLAGS,
              le::get32(pdu, SMB2_HDR_FLAGS) | SMB2_FLAGS_SIGNED);
    Bytes16 sig = compute(alg, key, pdu);
    std::copy(sig.begin(), sig.end(), pdu.begin() + SMB2_HDR_SIGNATURE);
    return {};
}

Status verify_pdu(SigningAlgorithm alg, const Bytes16 &key, ByteView pdu)
{
    if (auto s = check_size(pdu); !s)
        return s;
    if (!(le::get32(pdu, SMB2_HDR_FLAGS) & SMB2_FLAGS_SIGNED))
        return make_error(Errc::pdu_signature, "SMB2 message not signed");
    if (auto s = check_gmac_nonce(alg, pdu); !s)
        return s;
    if (!same(compute(alg, key, pdu), pdu.subspan(SMB2_HDR_SIGNATURE, 16)))
        return make_error(Errc::pdu_signature,
                          "SMB2 signature does not verify");
    return {};
}

} // namespace smbd::smb2sec
