// Helpers for tests that build and compare SMB2 wire bytes.
#ifndef SMBD_TEST_WIRE_BYTES_H
#define SMBD_TEST_WIRE_BYTES_H

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string_view>
#include <vector>

#include "proto_error.h"

// Little-endian writer: every field is appended explicitly so that the test
// vectors show their layout.
struct Bytes {
    std::vector<uint8_t> b;

    Bytes &u8(uint8_t v)
    {
        b.push_back(v);
        return *this;
    }
    Bytes &le16(uint16_t v) { return u8(uint8_t(v)).u8(uint8_t(v >> 8)); }
    Bytes &le32(uint32_t v)
    {
        return le16(uint16_t(v)).le16(uint16_t(v >> 16));
    }
    Bytes &le64(uint64_t v)
    {
        return le32(uint32_t(v)).le32(uint32_t(v >> 32));
    }
    Bytes &raw(std::span<const uint8_t> s)
    {
        b.insert(b.end(), s.begin(), s.end());
        return *this;
    }
    Bytes &zeros(size_t n)
    {
        b.insert(b.end(), n, 0);
        return *this;
    }
    // Pad to the next 8-byte boundary of the SMB2 message.
    Bytes &pad8()
    {
        while (b.size() % 8 != 0)
            b.push_back(0);
        return *this;
    }
    size_t size() const { return b.size(); }
};

// Equality with the first differing offset in the message, which is what
// one needs to find a wrong field.
inline ::testing::AssertionResult SameBytes(const std::vector<uint8_t> &got,
                                            const std::vector<uint8_t> &want)
{
    size_t n = std::min(got.size(), want.size());
    for (size_t i = 0; i < n; i++) {
        if (got[i] != want[i]) {
            char msg[96];
            std::snprintf(msg, sizeof(msg),
                          "first difference at offset %zu (0x%zx): got 0x%02x, "
                          "want 0x%02x",
                          i, i, got[i], want[i]);
            return ::testing::AssertionFailure() << msg;
        }
    }
    if (got.size() != want.size())
        return ::testing::AssertionFailure()
               << "length " << got.size() << ", want " << want.size();
    return ::testing::AssertionSuccess();
}

// Compare by enumerator name so that failures say which rule fired.
#define EXPECT_PROTO_ERR(expr, want)                                           \
    EXPECT_STREQ(smbd_proto_error_name(expr), smbd_proto_error_name(want))
#define ASSERT_PROTO_ERR(expr, want)                                           \
    ASSERT_STREQ(smbd_proto_error_name(expr), smbd_proto_error_name(want))

#endif // SMBD_TEST_WIRE_BYTES_H
