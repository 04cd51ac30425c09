// The checks of smbdirect-smb2: each a whole SMB2 conversation as a
// Windows client holds it with a real server (the patched smbd, ksmbd),
// over TCP or SMB Direct, that passes only when every byte read back is
// the byte written and every signature verifies. The e2e scenarios
// (tests/e2e/) run them by name.
#ifndef SMBD_CLIENT_SMB2_CHECKS_H
#define SMBD_CLIENT_SMB2_CHECKS_H

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "ports.h"
#include "smb2_session.h"

namespace smbd::client {

enum class Carrier { tcp, rdma };

struct Smb2CheckOptions {
    std::string addr;
    uint16_t tcp_port = 445;
    uint16_t rdma_port = kPortByTransport;
    Carrier carrier = Carrier::rdma; // of the first connection
    Credentials creds;
    std::string share;
    Smb2NegotiateOptions smb2; // its ClientGuid drawn at random
    SessionOptions session;
    uint32_t size = 1u << 20; // bytes per RDMA transfer
    std::chrono::milliseconds timeout{10000};
};

// A check's state: its options, ClientGuid, file and progress.
class Smb2Run;

struct Smb2Check {
    const char *name;
    const char *what; // for --list
    Status (*run)(Smb2Run &);
};

const std::vector<Smb2Check> &smb2_checks();

// Run the check @name; the Status says why it failed. @step sees each step.
Status run_smb2_check(std::string_view name, const Smb2CheckOptions &opt,
                      const std::function<void(const std::string &)> &step);

} // namespace smbd::client

#endif // SMBD_CLIENT_SMB2_CHECKS_H
