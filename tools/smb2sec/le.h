// Little-endian field access for the builders and parsers of this library.
#ifndef SMBD_SMB2SEC_LE_H
#define SMBD_SMB2SEC_LE_H

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace smbd::smb2sec::le {

inline uint16_t get16(std::span<const uint8_t> b, size_t at)
{
    return uint16_t(b[at] | b[at + 1] << 8);
}
inline uint32_t get32(std::span<const uint8_t> b, size_t at)
{
    return uint32_t(get16(b, at)) | uint32_t(get16(b, at + 2)) << 16;
}
inline uint64_t get64(std::span<const uint8_t> b, size_t at)
{
    return uint64_t(get32(b, at)) | uint64_t(get32(b, at + 4)) << 32;
}

inline void set16(std::span<uint8_t> b, size_t at, uint16_t v)
{
    b[at] = uint8_t(v);
    b[at + 1] = uint8_t(v >> 8);
}
inline void set32(std::span<uint8_t> b, size_t at, uint32_t v)
{
    set16(b, at, uint16_t(v));
    set16(b, at + 2, uint16_t(v >> 16));
}
inline void set64(std::span<uint8_t> b, size_t at, uint64_t v)
{
    set32(b, at, uint32_t(v));
    set32(b, at + 4, uint32_t(v >> 32));
}

inline void put16(std::vector<uint8_t> &out, uint16_t v)
{
    out.push_back(uint8_t(v));
    out.push_back(uint8_t(v >> 8));
}
inline void put32(std::vector<uint8_t> &out, uint32_t v)
{
    put16(out, uint16_t(v));
    put16(out, uint16_t(v >> 16));
}
inline void put64(std::vector<uint8_t> &out, uint64_t v)
{
    put32(out, uint32_t(v));
    put32(out, uint32_t(v >> 32));
}

} // namespace smbd::smb2sec::le

#endif // SMBD_SMB2SEC_LE_H
