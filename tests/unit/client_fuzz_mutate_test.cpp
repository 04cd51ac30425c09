// The network fuzzer's mutators: each edits only what it names, truncated
// messages keep their length, and a mutation never leaves the valid bytes.
#include <gtest/gtest.h>

#include <bit>
#include <set>

#include "fuzz_mutate.h"
#include "smb2_wire.h"

using namespace smbd::client;
using namespace smbd::client::fuzz;

namespace {

size_t bits_set(const std::vector<uint8_t> &b)
{
    size_t n = 0;
    for (uint8_t v : b)
        n += size_t(std::popcount(v));
    return n;
}

TEST(ClientFuzzMutate, FieldWritersLeaveAFieldPastTheEndAlone)
{
    std::vector<uint8_t> b(5, 0);
    put32(b, 2, 0xffffffff);
    put64(b, 0, ~0ull);
    EXPECT_EQ(b, std::vector<uint8_t>(5, 0));
    put32(b, 1, 0x04030201);
    EXPECT_EQ(b, (std::vector<uint8_t>{0, 1, 2, 3, 4}));
    put16(b, 3, 0xbbaa);
    EXPECT_EQ(b, (std::vector<uint8_t>{0, 1, 2, 0xaa, 0xbb}));
    EXPECT_EQ(get32(b, 1), 0xbbaa0201u);
    EXPECT_EQ(get32(b, 2), 0u);
    EXPECT_EQ(get16(b, 4), 0u);
}

TEST(ClientFuzzMutate, PutBytesWritesAsFarAsTheMessageReaches)
{
    std::vector<uint8_t> b(4, 0);
    const uint8_t v[] = {7, 8, 9};
    put_bytes(b, 2, v);
    EXPECT_EQ(b, (std::vector<uint8_t>{0, 0, 7, 8}));
    put_bytes(b, 9, v);
    EXPECT_EQ(b, (std::vector<uint8_t>{0, 0, 7, 8}));
}

TEST(ClientFuzzMutate, BitFlipsStayInTheirRange)
{
    for (uint64_t i = 0; i < 200; i++) {
        FuzzRng rng(3, i);
        std::vector<uint8_t> b(64, 0);
        flip_bits(rng, b, 5, 10, 20);
        // five flips, some maybe of the same bit: an odd count is left
        EXPECT_LE(bits_set(b), 5u);
        EXPECT_EQ(bits_set(b) % 2, 1u);
        for (size_t k = 0; k < b.size(); k++)
            EXPECT_TRUE((k >= 10 && k < 20) || b[k] == 0)
                << "byte " << k << ", conversation " << i;
    }
}

TEST(ClientFuzzMutate, BitFlipsOutsideTheMessageChangeNothing)
{
    FuzzRng rng(3, 0);
    std::vector<uint8_t> b(8, 0);
    flip_bits(rng, b, 4, 8);
    flip_bits(rng, b, 4, 6, 6);
    EXPECT_EQ(b, std::vector<uint8_t>(8, 0));
}

TEST(ClientFuzzMutate, MakeDifferLeavesNoMessageValid)
{
    const std::vector<uint8_t> valid{1, 2, 3, 4, 5, 6, 7, 8};
    for (uint64_t i = 0; i < 100; i++) {
        FuzzRng rng(4, i);
        std::vector<uint8_t> b = valid;
        make_differ(rng, b, valid, 4);
        ASSERT_EQ(b.size(), valid.size());
        EXPECT_NE(b, valid);
        EXPECT_TRUE(std::equal(valid.begin(), valid.begin() + 4, b.begin()))
            << "a byte before 4 changed";
        // nothing past the end to flip: one byte more
        b = valid;
        make_differ(rng, b, valid, 8);
        EXPECT_EQ(b.size(), 9u);
        // already different: left alone
        std::vector<uint8_t> other{9};
        make_differ(rng, other, valid);
        EXPECT_EQ(other, std::vector<uint8_t>{9});
    }
}

TEST(ClientFuzzMutate, ChangeLengthCutsOrExtendsAndSaysSo)
{
    const std::vector<uint8_t> pdu(100, 0x5a);
    for (uint64_t i = 0; i < 100; i++) {
        FuzzRng rng(5, i);
        std::vector<uint8_t> b = pdu;
        Notes shorter;
        change_length(rng, b, false, 0, shorter);
        EXPECT_GE(b.size(), 1u);
        EXPECT_LT(b.size(), pdu.size());
        EXPECT_EQ(shorter.text, "length 100 -> " + std::to_string(b.size()));

        b = pdu;
        Notes longer;
        change_length(rng, b, true, 16, longer);
        EXPECT_GT(b.size(), pdu.size());
        EXPECT_LE(b.size(), pdu.size() + 16);
        EXPECT_TRUE(std::equal(pdu.begin(), pdu.end(), b.begin()));
        EXPECT_EQ(longer.text, "length 100 -> " + std::to_string(b.size()));
    }
}

TEST(ClientFuzzMutate, NothingShorterThanOneByte)
{
    // 0 and 1 bytes have no shorter length of at least one byte: the PDU
    // stays as it is and nothing is drawn
    for (size_t size : {0, 1}) {
        FuzzRng rng(5, 0), fresh(5, 0);
        std::vector<uint8_t> b(size, 0x5a);
        Notes n;
        change_length(rng, b, false, 0, n);
        EXPECT_EQ(b, std::vector<uint8_t>(size, 0x5a));
        EXPECT_EQ(n.text, "length " + std::to_string(size) + " -> " +
                              std::to_string(size));
        EXPECT_EQ(rng.next(), fresh.next()) << size;
    }
}

TEST(ClientFuzzMutate, HeaderMutationsTouchOnlyTheHeader)
{
    const std::vector<uint8_t> pdu = build_echo_pdu({2, 0x77, 300});
    std::set<std::string> fields;
    size_t changed = 0;
    for (uint64_t i = 0; i < 400; i++) {
        FuzzRng rng(6, i);
        std::vector<uint8_t> b = pdu;
        Notes notes;
        mutate_smb2_header(rng, b, notes);
        ASSERT_EQ(b.size(), pdu.size());
        EXPECT_TRUE(std::equal(pdu.begin() + SMB2_HDR_SIZE, pdu.end(),
                               b.begin() + SMB2_HDR_SIZE))
            << notes.text;
        EXPECT_FALSE(notes.text.empty());
        fields.insert(notes.text.substr(0, notes.text.find(' ')));
        changed += b != pdu;
    }
    // every field is drawn; a value may happen to be the one there
    EXPECT_EQ(fields.size(), 8u);
    EXPECT_GT(changed, 300u);
}

TEST(ClientFuzzMutate, SizesIncludeTheEdgesAroundTheLimit)
{
    FuzzRng rng(7, 0);
    std::set<uint32_t> seen;
    for (int i = 0; i < 2000; i++)
        seen.insert(any_size(rng, 1364));
    for (uint32_t v : {0u, 127u, 128u, 1363u, 1364u, 1365u, 0xffffffffu})
        EXPECT_TRUE(seen.count(v)) << v;
}

TEST(ClientFuzzMutate, RandomBytesAreTheRngStream)
{
    FuzzRng a(8, 1), b(8, 1);
    std::vector<uint8_t> want(24);
    b.fill(want);
    EXPECT_EQ(random_bytes(a, 24), want);
}

TEST(ClientFuzzMutate, BodyFieldsCountFromTheHeader)
{
    EXPECT_EQ(in_body(SMB2_NEG_REQ_DIALECT_COUNT), 66u);
    EXPECT_EQ(in_body(SMB2_SETUP_REQ_BUFFER_OFFSET), 76u);
}

} // namespace
