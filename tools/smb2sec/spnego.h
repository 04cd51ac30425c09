// SPNEGO (RFC 4178) around NTLMSSP, as Windows puts it in the SESSION_SETUP
// security buffer: NegTokenInit with the NTLMSSP NEGOTIATE, NegTokenResp
// with the AUTHENTICATE and the mechListMIC, the server's NegTokenResp
// parsed as hostile input. NtlmClient runs the exchange.
#ifndef SMBD_SMB2SEC_SPNEGO_H
#define SMBD_SMB2SEC_SPNEGO_H

#include <cstdint>
#include <optional>
#include <vector>

#include "crypto.h"
#include "errc.h"
#include "ntlmssp.h"

namespace smbd::smb2sec::spnego {

// 1.3.6.1.5.5.2 and 1.3.6.1.4.1.311.2.2.10, DER content octets
inline constexpr uint8_t OID_SPNEGO[] = {0x2b, 0x06, 0x01, 0x05, 0x05, 0x02};
inline constexpr uint8_t OID_NTLMSSP[] = {0x2b, 0x06, 0x01, 0x04, 0x01,
                                          0x82, 0x37, 0x02, 0x02, 0x0a};

enum class NegState : uint8_t {
    accept_completed = 0,
    accept_incomplete = 1,
    reject = 2,
    request_mic = 3,
};

// The MechTypeList offering NTLMSSP alone: what the mechListMIC signs.
std::vector<uint8_t> ntlmssp_mech_types();
// The GSS-API InitialContextToken carrying NegTokenInit.
std::vector<uint8_t> neg_token_init(ByteView mech_token);
// NegTokenResp with negState accept-incomplete, as Windows sends it; no
// mechListMIC when @mech_list_mic is empty.
std::vector<uint8_t> neg_token_resp(ByteView response_token,
                                    ByteView mech_list_mic);

struct NegTokenResp {
    std::optional<NegState> state;
    std::vector<uint8_t> supported_mech; // OID content octets
    std::vector<uint8_t> response_token;
    std::vector<uint8_t> mech_list_mic;
};

Result<NegTokenResp> parse_neg_token_resp(ByteView token);

// The client of one SESSION_SETUP exchange.
class NtlmClient {
  public:
    explicit NtlmClient(ntlm::ClientConfig cfg);
    // The first request's security buffer.
    std::vector<uint8_t> start();
    // The answer to the response with STATUS_MORE_PROCESSING_REQUIRED;
    // Errc::flags when it asks for a mechListMIC (request-mic) and NTLMSSP
    // signing, which makes one, was not agreed.
    Result<std::vector<uint8_t>> step(ByteView server_token,
                                      const ntlm::ClientNonces &nonces);
    // The final response: accepted, and its mechListMIC verified when
    // there is one.
    Status finish(ByteView server_token);
    // The SMB2 session key, once step() succeeded.
    const Bytes16 &session_key() const { return session_key_; }

  private:
    ntlm::ClientConfig cfg_;
    std::vector<uint8_t> negotiate_;
    std::optional<ntlm::Session> ntlm_;
    Bytes16 session_key_{};
};

} // namespace smbd::smb2sec::spnego

#endif // SMBD_SMB2SEC_SPNEGO_H
