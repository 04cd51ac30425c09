// The deterministic payload of test PDUs: a byte stream derived from the
// PDU's MessageId, so that the receiver can check every byte without a copy
// of what was sent. And the contents of a test file: each byte a function of
// a seed and its file offset only, so that any range written can be checked
// when it is read back, whatever ranges were written around it.
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

// The bytes of the test file @seed at [offset, offset + out.size()).
void fill_file_pattern(uint64_t seed, uint64_t offset, std::span<uint8_t> out);
// Index in @data of the first byte that differs, if any.
std::optional<size_t> file_pattern_mismatch(uint64_t seed, uint64_t offset,
                                            std::span<const uint8_t> data);

} // namespace smbd::client

#endif // SMBD_CLIENT_PATTERN_H
