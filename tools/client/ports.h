// The RDMA ports of SMB Direct, as a client picks them.
#ifndef SMBD_CLIENT_PORTS_H
#define SMBD_CLIENT_PORTS_H

#include <cstdint>

namespace smbd::client {

// [MS-SMBD] 2.1: the RDMA port of SMB Direct is SMB's 445 on InfiniBand and
// RoCE, 5445 on iWARP (which shares the host's TCP ports). A port of 0 asks
// RdmaConnection::connect for the one the route's device maps to, as
// Windows picks it.
inline constexpr uint16_t kIbPort = 445;
inline constexpr uint16_t kIwarpPort = 5445;
inline constexpr uint16_t kPortByTransport = 0;

} // namespace smbd::client

#endif
