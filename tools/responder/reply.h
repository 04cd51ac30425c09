// The SMB2 the test responder answers with, as pure functions over bytes so
// that the host unit tests check exactly what the responder sends.
#ifndef SMBD_TOOLS_RESPONDER_REPLY_H
#define SMBD_TOOLS_RESPONDER_REPLY_H

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace smbd::responder {

// SPNEGO negTokenResp with negState accept-completed: what a finished
// authentication returns in the last SESSION_SETUP response.
extern const std::vector<uint8_t> accept_completed_blob;

// An SMB2 SESSION_SETUP response (STATUS_SUCCESS) to @request for
// @session_id: the request's header fields echoed as smbd does,
// SMB2_FLAGS_SERVER_TO_REDIR, not signed, the blob at offset 72. Empty if
// @request is not a valid SESSION_SETUP request; @why then says what is wrong.
std::vector<uint8_t> session_setup_response(std::span<const uint8_t> request,
                                            uint64_t session_id,
                                            std::string *why = nullptr);

// @pdu with SMB2_FLAGS_SERVER_TO_REDIR set in its (first) header and every
// other byte the same; a PDU too short to have a Flags field is unchanged.
std::vector<uint8_t> echo_response(std::span<const uint8_t> pdu);

// "WRITE mid 7 session 0x..." for the log; "not SMB2" for other bytes.
std::string describe_pdu(std::span<const uint8_t> pdu);

} // namespace smbd::responder

#endif // SMBD_TOOLS_RESPONDER_REPLY_H
