// NTLMSSP client side (MS-NLMP) as a Windows client runs it for an SMB2
// SESSION_SETUP: NEGOTIATE_MESSAGE, the server's CHALLENGE_MESSAGE parsed
// as hostile input, AUTHENTICATE_MESSAGE with NTLMv2, key exchange and the
// MIC, and the NTLMSSP signatures SPNEGO's mechListMIC needs. Pure
// functions over bytes; randomness and time come from the caller.
#ifndef SMBD_SMB2SEC_NTLMSSP_H
#define SMBD_SMB2SEC_NTLMSSP_H

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "crypto.h"
#include "errc.h"

namespace smbd::smb2sec::ntlm {

// NegotiateFlags (MS-NLMP 2.2.2.5)
inline constexpr uint32_t NEGOTIATE_UNICODE = 0x00000001;
inline constexpr uint32_t NEGOTIATE_OEM = 0x00000002;
inline constexpr uint32_t REQUEST_TARGET = 0x00000004;
inline constexpr uint32_t NEGOTIATE_SIGN = 0x00000010;
inline constexpr uint32_t NEGOTIATE_SEAL = 0x00000020;
inline constexpr uint32_t NEGOTIATE_LM_KEY = 0x00000080;
inline constexpr uint32_t NEGOTIATE_NTLM = 0x00000200;
inline constexpr uint32_t NEGOTIATE_ALWAYS_SIGN = 0x00008000;
inline constexpr uint32_t TARGET_TYPE_SERVER = 0x00020000;
inline constexpr uint32_t NEGOTIATE_EXTENDED_SESSIONSECURITY = 0x00080000;
inline constexpr uint32_t NEGOTIATE_TARGET_INFO = 0x00800000;
inline constexpr uint32_t NEGOTIATE_VERSION = 0x02000000;
inline constexpr uint32_t NEGOTIATE_128 = 0x20000000;
inline constexpr uint32_t NEGOTIATE_KEY_EXCH = 0x40000000;
inline constexpr uint32_t NEGOTIATE_56 = 0x80000000;

// This client's NEGOTIATE flags, 0xe2088215: Unicode, signing with
// extended session security, 128-bit keys and key exchange (the
// AUTHENTICATE adds TARGET_INFO when the server offers it). Windows
// clients send 0xe2088297 (Windows 8.1 in the blog's exchange,
// smb2sec_vectors.h), which adds NEGOTIATE_OEM and NEGOTIATE_LM_KEY: a
// server that grants Unicode uses no OEM strings, and one that grants
// extended session security must drop LM_KEY (MS-NLMP 2.2.2.5), so
// leaving them out changes nothing a server grants.
inline constexpr uint32_t CLIENT_FLAGS =
    NEGOTIATE_UNICODE | REQUEST_TARGET | NEGOTIATE_SIGN | NEGOTIATE_NTLM |
    NEGOTIATE_ALWAYS_SIGN | NEGOTIATE_EXTENDED_SESSIONSECURITY |
    NEGOTIATE_VERSION | NEGOTIATE_128 | NEGOTIATE_KEY_EXCH | NEGOTIATE_56;
static_assert(CLIENT_FLAGS == 0xe2088215);
static_assert((CLIENT_FLAGS | NEGOTIATE_OEM | NEGOTIATE_LM_KEY) == 0xe2088297);

// AV pair ids (MS-NLMP 2.2.2.1)
inline constexpr uint16_t AV_EOL = 0;
inline constexpr uint16_t AV_NB_COMPUTER_NAME = 1;
inline constexpr uint16_t AV_NB_DOMAIN_NAME = 2;
inline constexpr uint16_t AV_FLAGS = 6;
inline constexpr uint16_t AV_TIMESTAMP = 7;
inline constexpr uint16_t AV_TARGET_NAME = 9;
inline constexpr uint16_t AV_CHANNEL_BINDINGS = 10;
inline constexpr uint32_t AV_FLAG_MIC_PRESENT = 0x00000002;

inline constexpr size_t MIC_OFFSET = 72;

// The VERSION structure: major, minor, build (LE), 3 reserved, revision 15.
using Version = std::array<uint8_t, 8>;
inline constexpr Version WINDOWS_10_VERSION = {10, 0, 0x61, 0x4a, 0, 0, 0, 15};

struct AvPair {
    uint16_t id = 0;
    std::vector<uint8_t> value;
    bool operator==(const AvPair &) const = default;
};

struct Challenge {
    uint32_t flags = 0;
    std::array<uint8_t, 8> server_challenge{};
    std::vector<uint8_t> target_name;  // as sent (UTF-16LE)
    std::vector<AvPair> target_info;   // in the server's order, without EOL
    std::optional<uint64_t> timestamp; // MsvAvTimestamp (FILETIME)
};

// Every length and offset is checked against @msg; the error names the
// field and the numbers.
Result<Challenge> parse_challenge(ByteView msg);

struct ClientConfig {
    std::string user;     // UTF-8
    std::string domain;   // UTF-8; "" for a local account
    std::string password; // UTF-8
    std::string workstation;
    uint32_t flags = CLIENT_FLAGS;
    Version version = WINDOWS_10_VERSION;
    // "cifs/<server>": sent as MsvAvTargetName with a zero
    // MsvAvChannelBindings, as Windows does, in place of any the server
    // sent; "" sends neither of its own (the server's are echoed).
    std::string target_spn;
};

// What the caller draws at random (and the clock, used when the server
// sends no MsvAvTimestamp).
struct ClientNonces {
    std::array<uint8_t, 8> client_challenge{};
    Bytes16 random_session_key{};
    uint64_t filetime = 0;
};

std::vector<uint8_t> build_negotiate(const ClientConfig &cfg);

struct Authenticate {
    std::vector<uint8_t> message;
    uint32_t flags = 0;             // as sent
    Bytes16 exported_session_key{}; // the SMB2 session key
    bool mic = false;               // MIC present (the server sent a time)
};

// @negotiate and @challenge are the messages as sent and received (the
// MIC covers them); Errc::invalid_argument when a MIC is due (the server
// sent its time) and @negotiate is empty.
Result<Authenticate> build_authenticate(const ClientConfig &cfg,
                                        ByteView negotiate, ByteView challenge,
                                        const ClientNonces &nonces);

// HMAC_MD5(ExportedSessionKey, NEGOTIATE || CHALLENGE || AUTHENTICATE)
// with the AUTHENTICATE's MIC field taken as zero (MS-NLMP 3.1.5.1.2).
Result<Bytes16> compute_mic(const Bytes16 &exported_session_key,
                            ByteView negotiate, ByteView challenge,
                            ByteView authenticate);

// The steps of MS-NLMP 3.3.2, exposed so that the unit tests check each
// against the published example.
Result<Bytes16> ntowfv2(std::string_view password, std::string_view user,
                        std::string_view domain);
struct Ntlmv2Responses {
    std::vector<uint8_t> nt; // NTProofStr || temp
    std::array<uint8_t, 24> lm{};
    Bytes16 session_base_key{};
};
// @av_pairs: the AV pairs for the blob, encoded, EOL included.
Ntlmv2Responses ntlmv2_responses(const Bytes16 &response_key,
                                 const std::array<uint8_t, 8> &server,
                                 const std::array<uint8_t, 8> &client,
                                 uint64_t filetime, ByteView av_pairs);

// UTF-8 to UTF-16LE; nullopt for invalid UTF-8.
std::optional<std::vector<uint8_t>> utf16le(std::string_view utf8);

// The NTLMSSP signatures with extended session security (MS-NLMP 3.4.4.2),
// client side: sign what goes to the server, verify what comes back. SPNEGO
// uses one each way for its mechListMIC. Not copyable: with key exchange
// each signature advances an RC4 stream and a sequence number, and a copy
// would sign with the same keystream and numbers again.
class Session {
  public:
    // @flags as in the AUTHENTICATE_MESSAGE (128/56, KEY_EXCH).
    Session(const Bytes16 &exported_session_key, uint32_t flags);
    Session(const Session &) = delete;
    Session &operator=(const Session &) = delete;
    // the moved-from Session must not sign or verify any more
    Session(Session &&) = default;
    Session &operator=(Session &&) = default;
    Bytes16 sign(ByteView message);
    Status verify(ByteView message, ByteView signature);

  private:
    Bytes16 mac(const Bytes16 &sign_key, Rc4 &seal, uint32_t seq,
                ByteView message) const;

    bool key_exch_;
    Bytes16 client_sign_;
    Bytes16 server_sign_;
    Rc4 client_seal_;
    Rc4 server_seal_;
    uint32_t send_seq_ = 0;
    uint32_t recv_seq_ = 0;
};

} // namespace smbd::smb2sec::ntlm

#endif // SMBD_SMB2SEC_NTLMSSP_H
