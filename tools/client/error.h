// Errors of the SMB Direct client: its codes, their category, and the
// shared Error and Result (result.h).
#ifndef SMBD_CLIENT_ERROR_H
#define SMBD_CLIENT_ERROR_H

#include <system_error>

#include "result.h"

namespace smbd::client {

enum class Errc {
    invalid_argument = 1, // the caller asked for something impossible
    rdma,                 // an rdma_cm or verbs call failed
    unreachable,          // address/route resolution or connect failed
    timeout,              // nothing arrived in time
    peer_disconnected,    // the server closed the connection
    negotiate_rejected,   // MS-SMBD negotiate answered with a failure
    protocol,             // the server broke MS-SMBD or SMB2 framing
    smb2_status,          // an SMB2 response carried an error status
    mismatch,             // an echoed PDU differs from what was sent
    closed,               // the client closed the connection
};

const std::error_category &client_category();
std::error_code make_error_code(Errc e);

// The shared shape (result.h), under the client's names.
using smbd::Error;
using smbd::make_error;
using smbd::Result;
using smbd::Status;

} // namespace smbd::client

template <> struct std::is_error_code_enum<smbd::client::Errc> : true_type {
};

#endif // SMBD_CLIENT_ERROR_H
