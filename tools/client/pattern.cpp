#include "pattern.h"

#include <algorithm>
#include <cstring>

namespace smbd::client {

namespace {

// splitmix64: cheap, and different seeds give unrelated streams, so a PDU
// echoed in place of another one is caught. Whole 64-bit words at a time
// keep checking megabytes cheap even in a sanitizer build.
class Stream {
public:
    explicit Stream(uint64_t seed) : state_(seed) {}
    void next(uint8_t out[8])
    {
        uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        for (int i = 0; i < 8; i++)
            out[i] = uint8_t(z >> (8 * i));
    }

private:
    uint64_t state_;
};

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

} // namespace smbd::client
