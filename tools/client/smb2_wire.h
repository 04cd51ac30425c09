// The SMB2 messages the client sends and the responses it parses, as a
// Windows client on an SMB Direct channel would (MS-SMB2 2.2.1-2.2.6). Pure
// functions over bytes; the server side of the same bytes is the protocol
// core's smb2.h, which the unit tests use to prove what is built here.
#ifndef SMBD_CLIENT_SMB2_WIRE_H
#define SMBD_CLIENT_SMB2_WIRE_H

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "error.h"
#include "smb2.h"

namespace smbd::client {

inline constexpr uint16_t SMB2_IOCTL = 0x000B;
inline constexpr uint32_t NT_STATUS_MORE_PROCESSING_REQUIRED = 0xC0000016u;

// "STATUS_NOT_SUPPORTED (0xc00000bb)" for the statuses this tool meets.
std::string nt_status_text(uint32_t status);
// "3.1.1" for 0x0311.
std::string dialect_text(uint16_t dialect);
// Parse "0311" or "3.1.1"; nullopt for anything else.
std::optional<uint16_t> parse_dialect(std::string_view s);

// A request header as this client writes it: one credit asked for,
// ProcessId 0xFEFF as Windows sends it; smb2_hdr_build() writes it.
smb2_hdr smb2_request_header(uint16_t command, uint64_t message_id);

// The header of a response: protocol id, size and SERVER_TO_REDIR checked.
Result<smb2_hdr> parse_smb2_response_header(std::span<const uint8_t> pdu);

struct Smb2NegotiateOptions {
    std::vector<uint16_t> dialects{SMB2_DIALECT_300, SMB2_DIALECT_302,
                                   SMB2_DIALECT_311};
    uint16_t security_mode = SMB2_NEGOTIATE_SIGNING_ENABLED;
    uint32_t capabilities = SMB2_GLOBAL_CAP_DFS | SMB2_GLOBAL_CAP_LEASING |
                            SMB2_GLOBAL_CAP_LARGE_MTU |
                            SMB2_GLOBAL_CAP_MULTI_CHANNEL |
                            SMB2_GLOBAL_CAP_ENCRYPTION;
    std::array<uint8_t, 16> client_guid{};
    // 3.1.1 contexts; an empty list leaves its context out
    std::array<uint8_t, SMB2_PREAUTH_SALT_SIZE> salt{};
    // This client encrypts nothing, and smb2sec derives 128-bit cipher
    // keys only (keys.h): a session that must be encrypted on a connection
    // that chose AES-256 is to be refused. The AES-256 ids stay offered
    // since the fuzzer's pinned plans (seed 1) are built from this list.
    std::vector<uint16_t> ciphers{
        SMB2_ENCRYPTION_AES128_GCM, SMB2_ENCRYPTION_AES128_CCM,
        SMB2_ENCRYPTION_AES256_GCM, SMB2_ENCRYPTION_AES256_CCM};
    std::vector<uint16_t> signing_algorithms{SMB2_SIGNING_AES128_GMAC,
                                             SMB2_SIGNING_AES128_CMAC,
                                             SMB2_SIGNING_HMAC_SHA256};
    bool posix = false;
};

// MessageId 0, CreditCharge 0: the first request of a connection.
Result<std::vector<uint8_t>>
build_smb2_negotiate(const Smb2NegotiateOptions &opt);

struct Smb2NegotiateResponse {
    smb2_hdr hdr{};
    uint16_t security_mode = 0;
    uint16_t dialect = 0;
    std::array<uint8_t, 16> server_guid{};
    uint32_t capabilities = 0;
    uint32_t max_transact_size = 0;
    uint32_t max_read_size = 0;
    uint32_t max_write_size = 0;
    uint64_t system_time = 0;
    uint64_t server_start_time = 0;
    std::vector<uint8_t> security_blob;
    // 3.1.1 negotiate contexts
    uint16_t context_count = 0;
    std::optional<uint16_t> preauth_hash;
    std::vector<uint8_t> preauth_salt;
    std::optional<uint16_t> cipher;
    std::optional<uint16_t> signing_algorithm;
    bool posix = false;
};

// The response as a message: its fields and 3.1.1 contexts well formed.
// Whether it chose from what was offered is check_negotiate_choice's.
Result<Smb2NegotiateResponse>
parse_smb2_negotiate_response(std::span<const uint8_t> pdu);

// What the server chose, against what @offer offered: the dialect, and on
// 3.1.1 the preauth hash (SHA-512, the one build_smb2_negotiate offers),
// the cipher (or 0, no cipher in common) and the signing algorithm, each
// one of the ids MS-SMB2 defines. An Errc::protocol error names the first
// choice that was not offered; after it, no unknown signing or cipher id
// is left for the session to meet.
Status check_negotiate_choice(const Smb2NegotiateOptions &offer,
                              const Smb2NegotiateResponse &resp);

// Some bytes where a SPNEGO token would go: an NTLMSSP NEGOTIATE_MESSAGE.
std::vector<uint8_t> default_security_blob();

struct SessionSetupOptions {
    // binding: SMB2_SESSION_FLAG_BINDING for session_id, signed with a
    // dummy signature (no keys here); otherwise a new session (id 0)
    bool binding = false;
    uint64_t session_id = 0;
    uint64_t message_id = 1;
    uint8_t security_mode = SMB2_NEGOTIATE_SIGNING_ENABLED;
    uint32_t capabilities = SMB2_GLOBAL_CAP_DFS;
    uint16_t credit_request = 32;
    std::vector<uint8_t> security_blob = default_security_blob();
};

std::vector<uint8_t> build_smb2_session_setup(const SessionSetupOptions &opt);

struct SessionSetupResponse {
    smb2_hdr hdr{};
    uint16_t session_flags = 0;
    std::vector<uint8_t> security_blob;
};

// STATUS_SUCCESS and STATUS_MORE_PROCESSING_REQUIRED are answers; any other
// status is an Errc::smb2_status error naming it.
Result<SessionSetupResponse>
parse_smb2_session_setup_response(std::span<const uint8_t> pdu);

// The CreditCharge of a request that moves @size bytes: one credit per
// started 64 KiB (MS-SMB2 3.2.4.1.5), at least one.
uint16_t smb2_credit_charge(uint64_t size);

// A test PDU: an SMB2 IOCTL request header, then the pattern of MessageId.
struct EchoSpec {
    uint64_t message_id = 0;
    uint64_t session_id = 0;
    uint32_t size = SMB2_HDR_SIZE; // whole PDU, header included
};

std::vector<uint8_t> build_echo_pdu(const EchoSpec &spec);
// The echo is the PDU with SMB2_FLAGS_SERVER_TO_REDIR added to Flags and
// every other byte unchanged; the error names the first differing byte.
Status verify_echo(const EchoSpec &spec, std::span<const uint8_t> got);

} // namespace smbd::client

#endif // SMBD_CLIENT_SMB2_WIRE_H
