// The network fuzzer (--fuzz): conversation i of seed S draws everything it
// sends from a PRNG seeded with (S, i) alone, runs the valid conversation up
// to one stage (MS-SMBD negotiate, credits, fragments, SMB2 NEGOTIATE,
// SESSION_SETUP, READ/WRITE over RDMA) and breaks that stage's messages,
// waits a bounded time for an answer or a disconnect, and closes. Every
// answer must be well formed, and a fully valid conversation must still
// succeed before the first conversation, every 50 and at the end: the
// driver serves whatever it was sent.
//
// A conversation is planned first, purely (plan_conversation), and only
// then played against the server; so a plan is the same bytes on every
// run, and what the server hands out (its limits, the SessionId, our
// memory's keys) enters only where the plan says so.
#ifndef SMBD_CLIENT_FUZZ_H
#define SMBD_CLIENT_FUZZ_H

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "client.h"
#include "io_run.h"

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

// SplitMix64: tiny, and the same stream on every platform and build.
class FuzzRng {
  public:
    FuzzRng(uint64_t seed, uint64_t conversation);
    uint64_t next();
    // [0, n) for n >= 1
    uint32_t below(uint32_t n);
    // [lo, hi]
    uint32_t between(uint32_t lo, uint32_t hi);
    // true in @p of 100 draws
    bool percent(uint32_t p) { return below(100) < p; }
    template <class T> T pick(std::initializer_list<T> values)
    {
        return *(values.begin() + below(uint32_t(values.size())));
    }
    void fill(std::span<uint8_t> out);

  private:
    uint64_t state_;
};

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

// One change to a READ/WRITE request over RDMA. Descriptor edits apply to
// entry index % count; field edits overwrite the request's field.
struct RwEdit {
    enum class Kind {
        token_xor,
        token_set,
        offset_add,
        offset_set,
        length_set,
        length_add,
        duplicate,
        drop,
        repeat, // the list: copy, remove, grow to value entries
        info_offset,
        info_length,
        channel,     // ChannelInfoOffset/Length, Channel
        amount,      // READ Length, WRITE RemainingBytes
        inline_data, // READ MinimumCount, WRITE Length
    };
    Kind kind;
    uint32_t index = 0;
    uint64_t value = 0;
};

struct RwRequestPlan {
    bool write = false;
    uint64_t offset = 0; // in the file
    uint32_t size = 0;
    std::vector<RwEdit> edits;
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

// The SMB2 READ or WRITE of @r with @descs (as RdmaIo::describe gives
// them) and the plan's edits applied.
std::vector<uint8_t> build_rw_request(const RwRequestPlan &r, uint32_t channel,
                                      std::span<const uint8_t> descs,
                                      uint64_t message_id, uint64_t session_id);

// What the server makes of Data Transfer messages under its limits, by the
// protocol core's rules: the PDUs it reassembles up to the first message
// it must refuse (and disconnect).
struct Reassembled {
    std::vector<std::vector<uint8_t>> pdus;
    std::optional<size_t> refused; // index of that message
};
Reassembled reassemble(std::span<const std::vector<uint8_t>> messages,
                       uint32_t receive_size, uint32_t max_fragmented_size);

// How the server must answer a Negotiate Request of these bytes (a
// message beyond its receive size is not even received).
enum class NegotiateAnswer { success, refusal, none };
NegotiateAnswer expected_negotiate_answer(std::span<const uint8_t> request,
                                          uint32_t receive_size);

// A PDU the server saw, for judging answers; @echoable: smbd owns the
// connection then and echoes what it does not serve.
struct SentPdu {
    std::vector<uint8_t> bytes;
    bool echoable = false;
};

// Whether @answer is a well-formed answer to one of @sent not answered yet
// (@answered, one flag each, is updated): an error response, a NEGOTIATE
// or SESSION_SETUP response to a request the protocol core accepts, a
// READ/WRITE response, or an echo. The error says what is wrong with it.
Status check_answer(std::span<const uint8_t> answer,
                    std::span<const SentPdu> sent, std::vector<bool> &answered);

struct FuzzOptions {
    std::string program = "smbdirect-client"; // for replay commands
    std::string addr;
    uint16_t port = kPortByTransport;
    uint64_t seed = 0;
    uint64_t first = 0; // index of the first conversation
    uint64_t conversations = 100;
    std::optional<FuzzStage> stage;
    std::chrono::milliseconds wait{300};      // for an answer after a mutation
    std::chrono::milliseconds timeout{10000}; // for each valid step
    FileOptions file;
    uint32_t check_every = 50;
};

struct FuzzReport {
    uint64_t conversations = 0;
    std::array<uint64_t, fuzz_stage_count> stages{};
    uint64_t server_disconnects = 0;
    uint64_t client_closes = 0;
    uint64_t answered =
        0; // conversations the server answered after the mutation
    uint64_t valid_checks = 0;
    bool ok = true;
    std::string failure; // what broke, when !ok
    std::string replay;  // the command that replays it
};

// @line, if given, sees a line per conversation and valid check.
FuzzReport run_fuzz(const FuzzOptions &opt,
                    const std::function<void(const std::string &)> &line = {});

// The NETFUZZ summary line (a script parses it).
std::string fuzz_summary(const FuzzOptions &opt, const FuzzReport &r);
// The command that runs @count conversations from @first again.
std::string fuzz_replay_command(const FuzzOptions &opt, uint64_t first,
                                uint64_t count);

} // namespace smbd::client

#endif // SMBD_CLIENT_FUZZ_H
