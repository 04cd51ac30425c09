// The network fuzzer's planners: everything conversation i of seed S
// sends, drawn from a FuzzRng seeded with (S, i) alone, before anything is
// played against the server; so a plan is the same bytes on every run, and
// what the server hands out (its limits, the SessionId, our memory's keys)
// enters only where the plan says so. Each stage's planner runs the valid
// conversation up to its stage and breaks that stage's messages with the
// mutators of fuzz_mutate.h.
#ifndef SMBD_CLIENT_FUZZ_PLAN_H
#define SMBD_CLIENT_FUZZ_PLAN_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "client.h"
#include "fuzz_mutate.h"

namespace smbd::client {

enum class FuzzStage {
    negotiate, // the MS-SMBD Negotiate Request
    credits,   // Data Transfer credits and flags, receives never reposted
    fragments, // a PDU's fragments: RemainingDataLength, DataOffset, DataLength
    smb2_negotiate, // the SMB2 NEGOTIATE the driver answers itself
    session_setup,  // the SESSION_SETUP the driver routes, and PDUs behind it
    rdma,           // SMB2 READ/WRITE and their Buffer Descriptor V1 lists
};
inline constexpr size_t fuzz_stage_count = 6;

std::string_view fuzz_stage_name(FuzzStage stage);
std::optional<FuzzStage> parse_fuzz_stage(std::string_view name);

// Our send buffer: room for messages beyond what the server posts (1364
// bytes by default).
inline constexpr uint32_t fuzz_send_buffer = 4096;

// What plans are drawn against: the server's limits, as the first valid
// conversation learned them, and our own.
struct FuzzTarget {
    uint32_t receive_size = 1364;            // the server's MaxReceiveSize
    uint32_t max_fragmented_size = 1u << 20; // the server's MaxFragmentedSize
    uint32_t max_read_write_size = 8u << 20;
    // ours: the defaults (not the command line's, so that plans depend on
    // the seed, the index and the server alone) with fuzz_send_buffer
    ConnectOptions connect = [] {
        ConnectOptions o;
        o.preferred_send_size = fuzz_send_buffer;
        return o;
    }();
    uint64_t file_size = 64u << 20; // the responder's file
};

// The session the responder registers (tests/vm/net-fuzz.sh), for
// bindings that reach an owner.
inline constexpr uint64_t fuzz_registered_session = 0x1234;

struct NegotiatePlan {
    std::vector<uint8_t> request;
    bool smb2_after = false; // if accepted: a valid SMB2 NEGOTIATE on it
};

struct CreditsPlan {
    uint16_t credits_requested = 255;           // in the (valid) negotiate
    uint16_t receive_credits = 255;             // posted once, never again
    std::vector<std::vector<uint8_t>> messages; // sent as they are
};

struct FragmentsPlan {
    bool owned =
        false; // an echoed PDU after SESSION_SETUP, else the SMB2 NEGOTIATE
    std::vector<uint8_t> pdu;
    // Data Transfer messages; the client writes each one's CreditsGranted
    std::vector<std::vector<uint8_t>> messages;
    bool disconnect = false; // close right after the last message
};

struct Smb2NegotiatePlan {
    std::vector<uint8_t> pdu;
};

struct SessionSetupPlan {
    std::vector<uint8_t> setup;
    std::vector<std::vector<uint8_t>> extras; // sent before any answer
};
struct RdmaPlan {
    bool other_channel = false; // RDMA_V1 where INVALIDATE fits, or the reverse
    uint32_t size = 0;          // registered per request
    uint32_t descriptors = 1;
    uint32_t descriptor_extra = 0;
    std::vector<RwRequestPlan> requests;
    enum class Then { wait, garbage, close } then = Then::wait;
    std::vector<uint8_t> garbage; // an SMB Direct message, sent raw
};

struct ConversationPlan {
    uint64_t index = 0;
    FuzzStage stage = FuzzStage::negotiate;
    Smb2NegotiateOptions smb2;     // of the valid SMB2 NEGOTIATE
    uint32_t wait_permille = 1000; // of --fuzz-wait, then close
    std::string what;              // the mutation in words
    std::variant<NegotiatePlan, CreditsPlan, FragmentsPlan, Smb2NegotiatePlan,
                 SessionSetupPlan, RdmaPlan>
        detail;
};

// Everything conversation @index of @seed sends, but for what the server
// hands out; @only restricts the stage without changing the rest.
ConversationPlan plan_conversation(uint64_t seed, uint64_t index,
                                   std::optional<FuzzStage> only,
                                   const FuzzTarget &target);

// The MessageId of the first PDU after SESSION_SETUP.
inline constexpr uint64_t fuzz_first_io_message_id = 2;

} // namespace smbd::client

#endif // SMBD_CLIENT_FUZZ_PLAN_H
