// Hexadecimal text for the tools' logs and error messages: numbers as
// "0x..." and bytes as pairs of digits, written one way everywhere.
#ifndef SMBD_HEX_H
#define SMBD_HEX_H

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>

namespace smbd {

// "0x1f"; zero-padded to at least @digits digits (up to 16): hex(0x1f, 4)
// is "0x001f", hex(0xc0000016, 8) "0xc0000016".
inline std::string hex(uint64_t v, int digits = 0)
{
    char buf[24];
    std::snprintf(buf, sizeof(buf), "0x%0*llx", std::clamp(digits, 0, 16),
                  static_cast<unsigned long long>(v));
    return buf;
}

// Each byte as two lowercase digits, no separator: "00ff10".
inline std::string hex_bytes(std::span<const uint8_t> bytes)
{
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string s;
    s.reserve(bytes.size() * 2);
    for (uint8_t b : bytes) {
        s += kDigits[b >> 4];
        s += kDigits[b & 0xf];
    }
    return s;
}

} // namespace smbd

#endif // SMBD_HEX_H
