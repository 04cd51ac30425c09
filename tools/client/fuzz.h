// The network fuzzer (--fuzz): conversation i of seed S draws everything it
// sends from a PRNG seeded with (S, i) alone, runs the valid conversation up
// to one stage (MS-SMBD negotiate, credits, fragments, SMB2 NEGOTIATE,
// SESSION_SETUP, READ/WRITE over RDMA) and breaks that stage's messages,
// waits a bounded time for an answer or a disconnect, and closes. Every
// answer must be well formed, and a fully valid conversation must still
// succeed before the first conversation, every 50 and at the end: the
// driver serves whatever it was sent.
////
// The plans (fuzz_plan.h), the mutators they apply (fuzz_mutate.h) and the
// judge of answers (fuzz_judge.h) are pure; this is the runner that plays
// them over RDMA.
#ifndef SMBD_CLIENT_FUZZ_H
#define SMBD_CLIENT_FUZZ_H

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "fuzz_plan.h"
#include "io_run.h"

namespace smbd::client {

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
    // a valid conversation after every this many, and after the last; 0:
    // only after the last
    uint32_t check_every = 50;
};

// Whether the valid conversation is due once @done of @opt's conversations
// were played.
bool valid_check_due(const FuzzOptions &opt, uint64_t done);

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
