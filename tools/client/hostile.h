// Hostile modes: each breaks exactly one rule of MS-SMBD or of the driver's
// SMB2 front door, so a test can check that the driver disconnects with the
// reason it should record. One table: each mode's name, reason, rule and
// the small function that plays it from a connection on (hostile.cpp).
#ifndef SMBD_CLIENT_HOSTILE_H
#define SMBD_CLIENT_HOSTILE_H

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace smbd::client {

class Flow;

enum class Hostile {
    none,
    negotiate_version,
    negotiate_short,
    negotiate_credits_zero,
    negotiate_small_receive,
    negotiate_small_fragmented,
    offset_past_buffer,
    offset_unaligned,
    data_credits_zero,
    remaining_over_limit,
    send_without_credit,
    never_grant,
    stall_negotiate,
    stall_smb2,
    stall_session_setup,
    mid_fragment_disconnect,
    ignore_keepalive,
    flood,
    bad_smb2_negotiate,
    first_not_negotiate,
    oversized_setup,
    pipelined_setup,
};

struct HostileInfo {
    Hostile mode;
    std::string_view name; // as on the command line
    uint32_t reason;       // SMBD_REASON_* the driver should record
    std::string_view reason_name;
    std::string_view rule; // what the mode does, in plain words
    void (*play)(Flow &);  // from the connection to the outcome
};

std::span<const HostileInfo> hostile_modes();
const HostileInfo &hostile_info(Hostile mode);
std::optional<Hostile> parse_hostile(std::string_view name);

} // namespace smbd::client

#endif // SMBD_CLIENT_HOSTILE_H
