// Whole SMB2 PDUs over one connection, whichever carries them: SMB Direct
// (Client, fragmented into MS-SMBD messages) or TCP (TcpTransport, each PDU
// behind the 4-byte Direct TCP length, MS-SMB2 2.1). What the SMB2 session
// layer (smb2_session.h) runs on.
#ifndef SMBD_CLIENT_TRANSPORT_H
#define SMBD_CLIENT_TRANSPORT_H

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "error.h"

namespace smbd::client {

// A reassembled PDU and what its receive completions said.
struct ReceivedPdu {
    std::vector<uint8_t> bytes;
    // the rkey a send with invalidate carrying it invalidated (IBV_WC_WITH_INV)
    std::optional<uint32_t> invalidated_rkey;
    // it came encrypted (an SMB2 TRANSFORM), its integrity the cipher's
    bool sealed = false;
};

class PduTransport {
  public:
    virtual ~PduTransport() = default;
    virtual Status send_pdu(std::span<const uint8_t> pdu) = 0;
    // Errc::peer_disconnected once the server is gone and nothing is left,
    // Errc::timeout when nothing came in time.
    virtual Result<ReceivedPdu> recv(std::chrono::milliseconds timeout) = 0;
    // Whether the server can move READ/WRITE data by RDMA on it.
    virtual bool rdma() const = 0;
};

} // namespace smbd::client

#endif // SMBD_CLIENT_TRANSPORT_H
