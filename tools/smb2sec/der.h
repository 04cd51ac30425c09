// The little of DER that SPNEGO needs (X.690): definite lengths of up to
// four bytes, one-byte tags. The reader checks every length against what
// is left, so hostile tokens fail with Errc::der instead of reading past.
#ifndef SMBD_SMB2SEC_DER_H
#define SMBD_SMB2SEC_DER_H

#include <cstdint>
#include <vector>

#include "crypto.h"
#include "errc.h"

namespace smbd::smb2sec::der {

inline constexpr uint8_t ENUMERATED = 0x0a;
inline constexpr uint8_t OCTET_STRING = 0x04;
inline constexpr uint8_t OID = 0x06;
inline constexpr uint8_t SEQUENCE = 0x30;
inline constexpr uint8_t APPLICATION_0 = 0x60;
// [n] constructed, context-specific
constexpr uint8_t context(uint8_t n) { return uint8_t(0xa0 | n); }

struct Tlv {
    uint8_t tag = 0;
    ByteView content;
};

class Reader {
  public:
    explicit Reader(ByteView data) : rest_(data) {}
    bool empty() const { return rest_.empty(); }
    uint8_t peek_tag() const { return rest_.empty() ? 0 : rest_[0]; }
    Result<Tlv> next();
    // next() with @tag; @what names the element in the error.
    Result<ByteView> expect(uint8_t tag, const char *what);

  private:
    ByteView rest_;
};

// tag, length, @content
std::vector<uint8_t> tlv(uint8_t tag, ByteView content);

} // namespace smbd::smb2sec::der

#endif // SMBD_SMB2SEC_DER_H
