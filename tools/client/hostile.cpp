#include "hostile.h"

#include <linux/smbd.h>

namespace smbd::client {

namespace {

#define REASON(r) SMBD_REASON_##r, #r

constexpr HostileInfo modes[] = {
    {Hostile::none, "none", REASON(PEER),
     "no rule broken; the client closes the connection at the end"},
    {Hostile::negotiate_version, "negotiate-version", REASON(BAD_NEGOTIATE),
     "MS-SMBD Negotiate Request with Min/MaxVersion 0x0200 (no 0x0100); the "
     "server must answer with the 32-byte failure response, Status "
     "STATUS_NOT_SUPPORTED, then disconnect"},
    {Hostile::negotiate_short, "negotiate-short", REASON(BAD_NEGOTIATE),
     "Negotiate Request of 12 bytes instead of 20"},
    {Hostile::negotiate_credits_zero, "negotiate-credits-zero",
     REASON(BAD_NEGOTIATE), "Negotiate Request with CreditsRequested 0"},
    {Hostile::negotiate_small_receive, "negotiate-small-receive",
     REASON(BAD_NEGOTIATE), "Negotiate Request with MaxReceiveSize 64 (< 128)"},
    {Hostile::negotiate_small_fragmented, "negotiate-small-fragmented",
     REASON(BAD_NEGOTIATE),
     "Negotiate Request with MaxFragmentedSize 4096 (< 131072)"},
    {Hostile::offset_past_buffer, "offset-past-buffer", REASON(BAD_MESSAGE),
     "the SMB2 NEGOTIATE's Data Transfer message claims 64 bytes more "
     "DataLength than it carries"},
    {Hostile::offset_unaligned, "offset-unaligned", REASON(BAD_MESSAGE),
     "the SMB2 NEGOTIATE's Data Transfer message has DataOffset 20 (not "
     "8-byte aligned)"},
    {Hostile::data_credits_zero, "data-credits-zero", REASON(BAD_MESSAGE),
     "the SMB2 NEGOTIATE's Data Transfer message has CreditsRequested 0"},
    {Hostile::remaining_over_limit, "remaining-over-limit",
     REASON(BAD_REASSEMBLY),
     "the SMB2 NEGOTIATE's Data Transfer message has a RemainingDataLength "
     "that makes the PDU one byte larger than the server's MaxFragmentedSize"},
    {Hostile::send_without_credit, "send-without-credit",
     REASON(CREDIT_VIOLATION),
     "after the negotiate, sends one empty message more than the server "
     "granted, granting nothing back"},
    {Hostile::never_grant, "never-grant", REASON(CREDIT_TIMEOUT),
     "grants receive credits only in the first message; once the server "
     "has spent them it cannot answer and must give up"},
    {Hostile::stall_negotiate, "stall-negotiate", REASON(NEGOTIATE_TIMEOUT),
     "connects and never sends the MS-SMBD Negotiate Request"},
    {Hostile::stall_smb2, "stall-smb2", REASON(SETUP_TIMEOUT),
     "completes the MS-SMBD negotiate and never sends an SMB2 PDU"},
    {Hostile::stall_session_setup, "stall-session-setup", REASON(SETUP_TIMEOUT),
     "completes the SMB2 NEGOTIATE and never sends its SESSION_SETUP"},
    {Hostile::mid_fragment_disconnect, "mid-fragment-disconnect", REASON(PEER),
     "after SESSION_SETUP, sends the first half of the fragments of a large "
     "PDU and disconnects"},
    {Hostile::ignore_keepalive, "ignore-keepalive", REASON(KEEPALIVE_TIMEOUT),
     "after SESSION_SETUP, stops reading its completion queue, so the "
     "server's keepalive request is never answered"},
    {Hostile::flood, "flood", REASON(PEER),
     "after SESSION_SETUP, sends every PDU back to back as credits allow and "
     "reads the echoes only at the end; all must arrive intact"},
    {Hostile::bad_smb2_negotiate, "bad-smb2-negotiate", REASON(BAD_SMB2),
     "the first SMB2 PDU is a NEGOTIATE cut off in its fixed part"},
    {Hostile::first_not_negotiate, "first-not-negotiate", REASON(BAD_SMB2),
     "the first SMB2 PDU is a SESSION_SETUP instead of a NEGOTIATE"},
    {Hostile::oversized_setup, "oversized-setup", REASON(BAD_SMB2),
     "the first SMB2 PDU is a NEGOTIATE padded to 256 KiB; before a "
     "connection has an owner the driver takes no PDU above 128 KiB"},
    {Hostile::pipelined_setup, "pipelined-setup", REASON(PEER),
     "sends SESSION_SETUP and all its PDUs at once, before any answer; the "
     "driver holds them until the connection has an owner (granting no new "
     "credits once two are held) and loses none"},
};

#undef REASON

} // namespace

std::span<const HostileInfo> hostile_modes() { return modes; }

const HostileInfo &hostile_info(Hostile mode)
{
    for (const auto &m : modes)
        if (m.mode == mode)
            return m;
    return modes[0];
}

std::optional<Hostile> parse_hostile(std::string_view name)
{
    for (const auto &m : modes)
        if (m.name == name)
            return m.mode;
    return std::nullopt;
}

} // namespace smbd::client
