// The network fuzzer's judge: what the server must make of what a plan
// sends, by the protocol core's rules, and whether an answer is one it may
// give. Pure functions over bytes.
#ifndef SMBD_CLIENT_FUZZ_JUDGE_H
#define SMBD_CLIENT_FUZZ_JUDGE_H

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "error.h"

namespace smbd::client {

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
} // namespace smbd::client

#endif // SMBD_CLIENT_FUZZ_JUDGE_H
