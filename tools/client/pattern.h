// The deterministic payload of test PDUs: a byte stream derived from the
// PDU's MessageId, so that the receiver can check every byte without a copy
// of what was sent.
#ifndef SMBD_CLIENT_PATTERN_H
#define SMBD_CLIENT_PATTERN_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace smbd::client {

void fill_pattern(uint64_t seed, std::span<uint8_t> out);
// Offset of the first byte that differs from the pattern, if any.
std::optional<size_t> pattern_mismatch(uint64_t seed,
                                       std::span<const uint8_t> data);

} // namespace smbd::client

#endif // SMBD_CLIENT_PATTERN_H
