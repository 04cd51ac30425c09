// Errors of the SMB2 security library: one code per way an input can be
// wrong, so that tests and logs name the rule, and a sentence with the
// numbers; the shared Error and Result (result.h).
#ifndef SMBD_SMB2SEC_ERRC_H
#define SMBD_SMB2SEC_ERRC_H

#include <system_error>

#include "result.h"

namespace smbd::smb2sec {

enum class Errc {
    invalid_argument = 1, // the caller asked for something impossible
    truncated,            // shorter than its fixed part
    signature,            // not "NTLMSSP\0"
    message_type,         // an NTLMSSP message of another type
    field_range,          // a length/offset field points outside the message
    av_pairs,             // TargetInfo AV pairs malformed
    flags,                // the server's flags leave nothing usable
    der,                  // DER encoding broken (length, tag, nesting)
    spnego,               // well-formed DER but not the SPNEGO token expected
    mic,                  // a MIC or mechListMIC did not verify
    pdu_signature,        // an SMB2 signature did not verify or was absent
};

// "smb2sec"; message() names the rule: "field_range".
const std::error_category &smb2sec_category();
std::error_code make_error_code(Errc e);

using smbd::Error;
using smbd::make_error;
using smbd::Result;
using smbd::Status;

} // namespace smbd::smb2sec

template <> struct std::is_error_code_enum<smbd::smb2sec::Errc> : true_type {
};

#endif // SMBD_SMB2SEC_ERRC_H
