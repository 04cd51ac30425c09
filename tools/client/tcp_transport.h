// SMB2 over TCP (Direct TCP transport, MS-SMB2 2.1): each PDU behind a
// 4-byte header, a zero byte and the length in 24 bits big-endian. The
// primary channel of Windows' flow, which an RDMA channel later binds to.
#ifndef SMBD_CLIENT_TCP_TRANSPORT_H
#define SMBD_CLIENT_TCP_TRANSPORT_H

#include <memory>
#include <string>

#include "transport.h"

namespace smbd::client {

class TcpTransport final : public PduTransport {
  public:
    // Connect to @addr (IPv4, IPv6 or a name) on @port within @timeout.
    static Result<std::unique_ptr<TcpTransport>>
    connect(const std::string &addr, uint16_t port,
            std::chrono::milliseconds timeout);
    // Take over @fd, a connected stream socket (a socketpair in tests).
    static std::unique_ptr<TcpTransport> adopt(int fd);
    ~TcpTransport() override;
    TcpTransport(const TcpTransport &) = delete;
    TcpTransport &operator=(const TcpTransport &) = delete;

    Status send_pdu(std::span<const uint8_t> pdu) override;
    // A timeout before the first byte of a PDU leaves the stream usable;
    // one within a PDU ends it (Errc::protocol from then on).
    Result<ReceivedPdu> recv(std::chrono::milliseconds timeout) override;
    bool rdma() const override { return false; }

  private:
    explicit TcpTransport(int fd) : fd_(fd) {}
    // Fill @out from the stream by @until.
    Status read_exact(std::span<uint8_t> out,
                      std::chrono::steady_clock::time_point until);

    int fd_;
    // A PDU was cut by a timeout: the stream has lost its framing.
    bool broken_ = false;
};

} // namespace smbd::client

#endif // SMBD_CLIENT_TCP_TRANSPORT_H
