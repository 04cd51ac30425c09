#include "pattern.h"

namespace smbd::client {

namespace {

// splitmix64: cheap, and different seeds give unrelated streams, so a PDU
// echoed in place of another one is caught.
class Stream {
public:
    explicit Stream(uint64_t seed) : state_(seed) {}
    uint8_t next()
    {
        if (left_ == 0) {
            uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
            word_ = z ^ (z >> 31);
            left_ = 8;
        }
        uint8_t b = uint8_t(word_);
        word_ >>= 8;
        left_--;
        return b;
    }

private:
    uint64_t state_;
    uint64_t word_ = 0;
    unsigned left_ = 0;
};

} // namespace

void fill_pattern(uint64_t seed, std::span<uint8_t> out)
{
    Stream s(seed);
    for (auto &b : out)
        b = s.next();
}

std::optional<size_t> pattern_mismatch(uint64_t seed,
                                       std::span<const uint8_t> data)
{
    Stream s(seed);
    for (size_t i = 0; i < data.size(); i++)
        if (data[i] != s.next())
            return i;
    return std::nullopt;
}

} // namespace smbd::client
