#include "pattern.h"

#include <algorithm>
#include <cstring>

namespace smbd::client {

namespace {

// splitmix64: cheap, and different seeds give unrelated streams, so a PDU
// echoed in place of another one is caught. Whole 64-bit words at a time
// keep checking megabytes cheap even in a sanitizer build.
constexpr uint64_t golden = 0x9E3779B97F4A7C15ull;

uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

class Stream {
  public:
    explicit Stream(uint64_t seed) : state_(seed) {}
    void next(uint8_t out[8])
    {
        uint64_t z = mix(state_ += golden);
        for (int i = 0; i < 8; i++)
            out[i] = uint8_t(z >> (8 * i));
    }

  private:
    uint64_t state_;
};

// Byte @offset of the file @seed lives in the 8-byte word offset / 8, a
// splitmix64 of the seed and the word's index.
uint8_t file_byte(uint64_t seed, uint64_t offset)
{
    return uint8_t(mix(seed + (offset / 8 + 1) * golden) >> (8 * (offset % 8)));
}

uint64_t file_word(uint64_t seed, uint64_t word)
{
    return mix(seed + (word + 1) * golden);
}

} // namespace

void fill_pattern(uint64_t seed, std::span<uint8_t> out)
{
    Stream s(seed);
    uint8_t w[8];
    for (size_t i = 0; i < out.size(); i += 8) {
        s.next(w);
        std::memcpy(&out[i], w, std::min<size_t>(8, out.size() - i));
    }
}

std::optional<size_t> pattern_mismatch(uint64_t seed,
                                       std::span<const uint8_t> data)
{
    Stream s(seed);
    uint8_t w[8];
    for (size_t i = 0; i < data.size(); i += 8) {
        s.next(w);
        size_t n = std::min<size_t>(8, data.size() - i);
        if (std::memcmp(&data[i], w, n) == 0)
            continue;
        for (size_t j = 0; j < n; j++)
            if (data[i + j] != w[j])
                return i + j;
    }
    return std::nullopt;
}

void fill_file_pattern(uint64_t seed, uint64_t offset, std::span<uint8_t> out)
{
    size_t i = 0;
    // the unaligned head byte by byte, then whole words
    for (; i < out.size() && (offset + i) % 8; i++)
        out[i] = file_byte(seed, offset + i);
    for (; i + 8 <= out.size(); i += 8) {
        uint64_t z = file_word(seed, (offset + i) / 8);
        for (int b = 0; b < 8; b++)
            out[i + b] = uint8_t(z >> (8 * b));
    }
    for (; i < out.size(); i++)
        out[i] = file_byte(seed, offset + i);
}

std::optional<size_t> file_pattern_mismatch(uint64_t seed, uint64_t offset,
                                            std::span<const uint8_t> data)
{
    // a word at a time through a small buffer keeps megabytes cheap
    uint8_t want[4096];
    for (size_t pos = 0; pos < data.size(); pos += sizeof(want)) {
        size_t n = std::min(sizeof(want), data.size() - pos);
        fill_file_pattern(seed, offset + pos, std::span<uint8_t>(want, n));
        if (std::memcmp(&data[pos], want, n) == 0)
            continue;
        for (size_t j = 0; j < n; j++)
            if (data[pos + j] != want[j])
                return pos + j;
    }
    return std::nullopt;
}

} // namespace smbd::client
