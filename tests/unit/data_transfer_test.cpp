// MS-SMBD 2.2.3 Data Transfer messages: byte-exact vectors, one test per
// receive validation rule (3.1.5.8), the send fragmentation plan and the
// receive reassembly, and a round trip of whole PDUs through all of them.
#include "data_transfer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <ostream>
#include <random>
#include <vector>

// Failures print "DATA_PAST_END" instead of a bare number.
static void PrintTo(smbd_proto_error err, std::ostream *os)
{
    *os << "SMBD_E_" << smbd_proto_error_name(err);
}

namespace {

using Bytes = std::vector<uint8_t>;

// The Linux defaults: 1364-byte messages, 1 MiB reassembly.
constexpr uint32_t kMaxRecv = 1364;
constexpr uint32_t kMaxFrag = 1048576;

// A first fragment of 8 payload bytes with 256 more to come.
constexpr std::array<uint8_t, 32> kDataMsg = {
    0xff, 0x00,             // CreditsRequested 255
    0x10, 0x00,             // CreditsGranted 16
    0x00, 0x00,             // Flags 0
    0x00, 0x00,             // Reserved
    0x00, 0x01, 0x00, 0x00, // RemainingDataLength 256
    0x18, 0x00, 0x00, 0x00, // DataOffset 24
    0x08, 0x00, 0x00, 0x00, // DataLength 8
    0x00, 0x00, 0x00, 0x00, // Padding to the 8-aligned payload
    0xfe, 'S',  'M',  'B',  // payload: the start of an SMB2 header
    0x40, 0x00, 0x00, 0x00,
};

// A keepalive: credits only, no payload, no padding.
constexpr std::array<uint8_t, SMBD_DATA_HDR_SIZE> kEmptyMsg = {
    0x01, 0x00,             // CreditsRequested 1
    0x05, 0x00,             // CreditsGranted 5
    0x01, 0x00,             // Flags SMB_DIRECT_RESPONSE_REQUESTED
    0x00, 0x00,             // Reserved
    0x00, 0x00, 0x00, 0x00, // RemainingDataLength 0
    0x00, 0x00, 0x00, 0x00, // DataOffset 0
    0x00, 0x00, 0x00, 0x00, // DataLength 0
};

constexpr size_t kCreditsRequested = 0, kFlags = 4, kReserved = 6,
                 kRemaining = 8, kDataOffset = 12, kDataLength = 16;

// A message of @len bytes with the given header fields (CreditsRequested 1).
Bytes Msg(size_t len, uint32_t offset, uint32_t length, uint32_t remaining = 0)
{
    Bytes b(len, 0x77);
    smbd_put_le16(b.data() + kCreditsRequested, 1);
    smbd_put_le16(b.data() + 2, 0);
    smbd_put_le16(b.data() + kFlags, 0);
    smbd_put_le16(b.data() + kReserved, 0);
    smbd_put_le32(b.data() + kRemaining, remaining);
    smbd_put_le32(b.data() + kDataOffset, offset);
    smbd_put_le32(b.data() + kDataLength, length);
    return b;
}

smbd_proto_error Parse(const Bytes &b, smbd_data_hdr *hdr = nullptr,
                       uint32_t max_recv = kMaxRecv,
                       uint32_t max_frag = kMaxFrag)
{
    smbd_data_hdr tmp;
    return smbd_data_parse(b.data(), b.size(), max_recv, max_frag,
                           hdr ? hdr : &tmp);
}

// --- Vectors ----------------------------------------------------------------

TEST(DataTransfer, ParsesMessageWithPayload)
{
    const Bytes b(kDataMsg.begin(), kDataMsg.end());
    smbd_data_hdr hdr;
    ASSERT_EQ(Parse(b, &hdr), SMBD_E_OK);
    EXPECT_EQ(hdr.credits_requested, 255);
    EXPECT_EQ(hdr.credits_granted, 16);
    EXPECT_EQ(hdr.flags, 0);
    EXPECT_EQ(hdr.remaining_data_length, 256u);
    EXPECT_EQ(hdr.data_offset, 24u);
    EXPECT_EQ(hdr.data_length, 8u);
}

TEST(DataTransfer, BuildsMessageWithPayloadBytes)
{
    smbd_data_hdr hdr = {
        .credits_requested = 255,
        .credits_granted = 16,
        .flags = 0,
        .remaining_data_length = 256,
        .data_offset = 0x5a5a5a5a, // set by build
        .data_length = 8,
    };
    std::array<uint8_t, 32> out;
    out.fill(0xaa); // padding must be written as zeroes
    ASSERT_EQ(smbd_data_build(&hdr, out.data()), SMBD_DATA_PAYLOAD_OFFSET);
    EXPECT_EQ(hdr.data_offset, 24u);
    std::copy(kDataMsg.begin() + 24, kDataMsg.end(), out.begin() + 24);
    EXPECT_EQ(out, kDataMsg);
}

TEST(DataTransfer, ParsesEmptyMessage)
{
    const Bytes b(kEmptyMsg.begin(), kEmptyMsg.end());
    smbd_data_hdr hdr;
    ASSERT_EQ(Parse(b, &hdr), SMBD_E_OK);
    EXPECT_EQ(hdr.credits_requested, 1);
    EXPECT_EQ(hdr.credits_granted, 5);
    EXPECT_EQ(hdr.flags, SMBD_FLAG_RESPONSE_REQUESTED);
    EXPECT_EQ(hdr.remaining_data_length, 0u);
    EXPECT_EQ(hdr.data_offset, 0u);
    EXPECT_EQ(hdr.data_length, 0u);
}

// Linux sends credit-only messages as just the 20-byte header.
TEST(DataTransfer, BuildsEmptyMessageBytes)
{
    smbd_data_hdr hdr = {
        .credits_requested = 1,
        .credits_granted = 5,
        .flags = SMBD_FLAG_RESPONSE_REQUESTED,
        .remaining_data_length = 0,
        .data_offset = 24, // cleared by build
        .data_length = 0,
    };
    std::array<uint8_t, SMBD_DATA_PAYLOAD_OFFSET> out;
    out.fill(0xaa);
    ASSERT_EQ(smbd_data_build(&hdr, out.data()), SMBD_DATA_HDR_SIZE);
    EXPECT_EQ(hdr.data_offset, 0u);
    EXPECT_TRUE(std::equal(kEmptyMsg.begin(), kEmptyMsg.end(), out.begin()));
    // nothing past the 20 bytes it returned
    EXPECT_EQ(out[20], 0xaa);
    EXPECT_EQ(out[23], 0xaa);
}

// --- Receive validation: one test per rule ----------------------------------

TEST(DataTransfer, RejectsTruncated)
{
    for (size_t len = 0; len < SMBD_DATA_HDR_SIZE; len++) {
        SCOPED_TRACE(len);
        EXPECT_EQ(Parse(Bytes(kEmptyMsg.begin(), kEmptyMsg.begin() + len)),
                  SMBD_E_TRUNCATED);
    }
}

TEST(DataTransfer, RejectsMessageLongerThanMaxReceiveSize)
{
    EXPECT_EQ(Parse(Msg(kMaxRecv + 1, 24, kMaxRecv + 1 - 24)),
              SMBD_E_MESSAGE_TOO_LONG);
    EXPECT_EQ(Parse(Msg(kMaxRecv, 24, kMaxRecv - 24)), SMBD_E_OK);
    // an empty message padded past the limit is still too long
    EXPECT_EQ(Parse(Msg(kMaxRecv + 1, 0, 0)), SMBD_E_MESSAGE_TOO_LONG);
}

TEST(DataTransfer, RejectsZeroCreditsRequested)
{
    for (Bytes b : {Msg(20, 0, 0), Msg(32, 24, 8)}) {
        SCOPED_TRACE(b.size());
        smbd_put_le16(b.data() + kCreditsRequested, 0);
        EXPECT_EQ(Parse(b), SMBD_E_ZERO_CREDITS_REQUESTED);
    }
}

TEST(DataTransfer, RejectsDataOffsetNotAligned)
{
    for (uint32_t off : {1u, 4u, 20u, 25u, 28u, 31u, 0xfffffffcu}) {
        SCOPED_TRACE(off);
        EXPECT_EQ(Parse(Msg(64, off, 1)), SMBD_E_DATA_OFFSET_ALIGNMENT);
    }
}

TEST(DataTransfer, RejectsDataOffsetInsideHeader)
{
    for (uint32_t off : {0u, 8u, 16u}) {
        SCOPED_TRACE(off);
        EXPECT_EQ(Parse(Msg(64, off, 8)), SMBD_E_DATA_OFFSET_IN_HEADER);
    }
}

TEST(DataTransfer, RejectsDataPastEnd)
{
    struct Case {
        size_t len;
        uint32_t offset, length;
    };
    for (Case c : {
             Case{32, 24, 9},          // one byte too many
             Case{24, 24, 1},          // header only, data announced
             Case{40, 40, 1},          // offset at the end
             Case{40, 48, 1},          // offset past the end
             Case{64, 0xfffffff8, 8},  // offset + length == 2^32
             Case{64, 0xfffffff8, 16}, // ... wraps to 8 in 32 bits
             Case{64, 24, 0xfffffff0}, // length wraps the sum to 8
             Case{64, 24, 0xffffffff},
         }) {
        SCOPED_TRACE(testing::Message()
                     << c.len << " " << c.offset << "+" << c.length);
        EXPECT_EQ(Parse(Msg(c.len, c.offset, c.length)), SMBD_E_DATA_PAST_END);
    }
}

// Payload ending exactly at the message end, and the tolerated larger padding
// (the spec checks only alignment and bounds, not DataOffset == 24).
TEST(DataTransfer, AcceptsDataUpToTheEnd)
{
    struct Case {
        size_t len;
        uint32_t offset, length;
    };
    for (Case c : {Case{25, 24, 1}, Case{32, 24, 8}, Case{40, 32, 8},
                   Case{64, 24, 1}, Case{kMaxRecv, 24, kMaxRecv - 24}}) {
        SCOPED_TRACE(testing::Message()
                     << c.len << " " << c.offset << "+" << c.length);
        smbd_data_hdr hdr;
        ASSERT_EQ(Parse(Msg(c.len, c.offset, c.length), &hdr), SMBD_E_OK);
        EXPECT_EQ(hdr.data_offset, c.offset);
        EXPECT_EQ(hdr.data_length, c.length);
    }
}

TEST(DataTransfer, RejectsRemainingWithoutData)
{
    EXPECT_EQ(Parse(Msg(20, 0, 0, 1)), SMBD_E_REMAINING_WITHOUT_DATA);
    EXPECT_EQ(Parse(Msg(24, 24, 0, 100)), SMBD_E_REMAINING_WITHOUT_DATA);
}

TEST(DataTransfer, RejectsDataPlusRemainingAboveMaxFragmented)
{
    const uint32_t frag = 131072;
    EXPECT_EQ(Parse(Msg(32, 24, 8, frag - 7), nullptr, kMaxRecv, frag),
              SMBD_E_FRAGMENT_TOO_LARGE);
    EXPECT_EQ(Parse(Msg(32, 24, 8, frag - 8), nullptr, kMaxRecv, frag),
              SMBD_E_OK);
    // the sum must not wrap in 32 bits
    EXPECT_EQ(Parse(Msg(32, 24, 8, 0xfffffff8), nullptr, kMaxRecv, frag),
              SMBD_E_FRAGMENT_TOO_LARGE);
    EXPECT_EQ(Parse(Msg(32, 24, 8, 0xffffffff), nullptr, kMaxRecv, 0xffffffff),
              SMBD_E_FRAGMENT_TOO_LARGE);
}

// The Windows test suite sends empty messages with DataOffset 24; DataOffset
// is unused without data, so no offset makes an empty message invalid.
TEST(DataTransfer, AcceptsEmptyMessageWithNonzeroDataOffset)
{
    for (uint32_t off : {24u, 8u, 13u, 0xfffffff8u}) {
        SCOPED_TRACE(off);
        smbd_data_hdr hdr;
        ASSERT_EQ(Parse(Msg(24, off, 0), &hdr), SMBD_E_OK);
        EXPECT_EQ(hdr.data_length, 0u);
    }
}

// Unknown flags and Reserved are ignored, not rejected.
TEST(DataTransfer, IgnoresUnknownFlagsAndReserved)
{
    Bytes b = Msg(32, 24, 8);
    smbd_put_le16(b.data() + kFlags, 0xffff);
    smbd_put_le16(b.data() + kReserved, 0xffff);
    smbd_data_hdr hdr;
    ASSERT_EQ(Parse(b, &hdr), SMBD_E_OK);
    EXPECT_EQ(hdr.flags, 0xffff);
}

// --- Fragmentation plan -----------------------------------------------------

smbd_proto_error Plan(uint32_t pdu, uint32_t send, uint32_t frag,
                      struct smbd_frag_plan *plan = nullptr)
{
    struct smbd_frag_plan tmp;
    return smbd_frag_plan_make(pdu, send, frag, plan ? plan : &tmp);
}

TEST(FragPlan, RejectsEmptyPdu)
{
    EXPECT_EQ(Plan(0, 1364, kMaxFrag), SMBD_E_EMPTY_PDU);
}

TEST(FragPlan, RejectsPduAbovePeerMaxFragmented)
{
    EXPECT_EQ(Plan(kMaxFrag + 1, 1364, kMaxFrag), SMBD_E_PDU_TOO_LARGE);
    EXPECT_EQ(Plan(0xffffffff, 1364, kMaxFrag), SMBD_E_PDU_TOO_LARGE);
    EXPECT_EQ(Plan(kMaxFrag, 1364, kMaxFrag), SMBD_E_OK);
}

// No room for payload after the 24-byte header.
TEST(FragPlan, RejectsSendSizeWithoutRoomForPayload)
{
    for (uint32_t send : {0u, 1u, 20u, 24u}) {
        SCOPED_TRACE(send);
        EXPECT_EQ(Plan(100, send, kMaxFrag), SMBD_E_SEND_SIZE_TOO_SMALL);
    }
    struct smbd_frag_plan plan;
    ASSERT_EQ(Plan(100, 25, kMaxFrag, &plan), SMBD_E_OK);
    EXPECT_EQ(plan.max_payload, 1u);
    EXPECT_EQ(plan.count, 100u);
}

// 1364 - 24 = 1340 payload bytes per message; around exact multiples.
TEST(FragPlan, CountsMessagesAroundMultiples)
{
    struct Case {
        uint32_t pdu, count;
    };
    for (Case c : {Case{1, 1}, Case{1339, 1}, Case{1340, 1}, Case{1341, 2},
                   Case{2680, 2}, Case{2681, 3}, Case{1048576, 783}}) {
        SCOPED_TRACE(c.pdu);
        struct smbd_frag_plan plan;
        ASSERT_EQ(Plan(c.pdu, 1364, kMaxFrag, &plan), SMBD_E_OK);
        EXPECT_EQ(plan.pdu_len, c.pdu);
        EXPECT_EQ(plan.max_payload, 1340u);
        EXPECT_EQ(plan.count, c.count);
    }
}

TEST(FragPlan, LastFragmentOfOffByOneSizes)
{
    struct smbd_frag_plan plan;
    smbd_fragment f;
    ASSERT_EQ(Plan(2681, 1364, kMaxFrag, &plan), SMBD_E_OK);
    smbd_frag_get(&plan, 2, &f);
    EXPECT_EQ(f.offset, 2680u);
    EXPECT_EQ(f.length, 1u);
    EXPECT_EQ(f.remaining, 0u);
    smbd_frag_get(&plan, 1, &f);
    EXPECT_EQ(f.offset, 1340u);
    EXPECT_EQ(f.length, 1340u);
    EXPECT_EQ(f.remaining, 1u);

    ASSERT_EQ(Plan(2680, 1364, kMaxFrag, &plan), SMBD_E_OK);
    smbd_frag_get(&plan, 1, &f);
    EXPECT_EQ(f.offset, 1340u);
    EXPECT_EQ(f.length, 1340u);
    EXPECT_EQ(f.remaining, 0u);
}

// No 32-bit overflow in the count or the offsets at the top of the range.
TEST(FragPlan, HandlesPduNearUint32Max)
{
    struct smbd_frag_plan plan;
    smbd_fragment f;
    ASSERT_EQ(Plan(0xffffffff, 0xffffffff, 0xffffffff, &plan), SMBD_E_OK);
    EXPECT_EQ(plan.count, 2u);
    smbd_frag_get(&plan, 1, &f);
    EXPECT_EQ(f.offset, 0xffffffe7u);
    EXPECT_EQ(f.length, 24u);
    EXPECT_EQ(f.remaining, 0u);

    ASSERT_EQ(Plan(0xffffffff, 25, 0xffffffff, &plan), SMBD_E_OK);
    EXPECT_EQ(plan.count, 0xffffffffu);
    smbd_frag_get(&plan, plan.count - 1, &f);
    EXPECT_EQ(f.offset, 0xfffffffeu);
    EXPECT_EQ(f.length, 1u);
    EXPECT_EQ(f.remaining, 0u);
}

// Fragments tile the PDU in order; each RemainingDataLength is what follows.
void CheckPlanCoversPdu(uint32_t pdu, uint32_t send)
{
    struct smbd_frag_plan plan;
    ASSERT_EQ(Plan(pdu, send, 0xffffffff, &plan), SMBD_E_OK);
    ASSERT_GE(plan.count, 1u);
    uint32_t next = 0;
    for (uint32_t i = 0; i < plan.count; i++) {
        smbd_fragment f;
        smbd_frag_get(&plan, i, &f);
        ASSERT_EQ(f.offset, next) << "fragment " << i;
        ASSERT_GT(f.length, 0u) << "fragment " << i;
        ASSERT_LE(f.length, send - SMBD_DATA_PAYLOAD_OFFSET)
            << "fragment " << i;
        if (i + 1 == plan.count) {
            ASSERT_EQ(f.remaining, 0u) << "the last fragment";
        }
        ASSERT_EQ(f.remaining, pdu - f.offset - f.length) << "fragment " << i;
        if (i + 1 < plan.count) {
            ASSERT_EQ(f.length, plan.max_payload) << "fragment " << i;
        }
        next += f.length;
    }
    EXPECT_EQ(next, pdu);
}

TEST(FragPlan, FragmentsCoverThePdu)
{
    struct Case {
        uint32_t send, max_pdu;
    };
    for (Case c : {Case{25, 300}, Case{128, 3000}, Case{1364, 5000}}) {
        const uint32_t send = c.send;
        for (uint32_t pdu = 1; pdu <= c.max_pdu; pdu++) {
            SCOPED_TRACE(testing::Message()
                         << "pdu " << pdu << " send " << send);
            CheckPlanCoversPdu(pdu, send);
            if (HasFatalFailure())
                return;
        }
    }
}

// --- Reassembly -------------------------------------------------------------

smbd_data_hdr Frag(uint32_t length, uint32_t remaining)
{
    return smbd_data_hdr{.credits_requested = 1,
                         .credits_granted = 0,
                         .flags = 0,
                         .remaining_data_length = remaining,
                         .data_offset = length ? 24u : 0u,
                         .data_length = length};
}

struct AddResult {
    smbd_proto_error err;
    uint32_t offset, total;
    bool complete;
};

AddResult Add(smbd_reassembly *r, const smbd_data_hdr &hdr)
{
    AddResult a = {SMBD_E_OK, 0xdeadbeef, 0xdeadbeef, true};
    a.err = smbd_reassembly_add(r, &hdr, &a.offset, &a.total, &a.complete);
    return a;
}

TEST(Reassembly, SingleFragmentCompletesAtOnce)
{
    smbd_reassembly r;
    smbd_reassembly_init(&r, kMaxFrag);
    AddResult a = Add(&r, Frag(100, 0));
    ASSERT_EQ(a.err, SMBD_E_OK);
    EXPECT_EQ(a.offset, 0u);
    EXPECT_EQ(a.total, 100u);
    EXPECT_TRUE(a.complete);
    EXPECT_FALSE(r.active);
}

TEST(Reassembly, PlacesFragmentsAtIncreasingOffsets)
{
    smbd_reassembly r;
    smbd_reassembly_init(&r, kMaxFrag);
    struct Step {
        uint32_t length, remaining, offset;
        bool complete;
    };
    // two PDUs back to back: the state resets after the first completes
    for (Step s : {Step{1340, 1500, 0, false}, Step{1340, 160, 1340, false},
                   Step{160, 0, 2680, true}, Step{10, 5, 0, false},
                   Step{5, 0, 10, true}}) {
        SCOPED_TRACE(testing::Message() << s.length << "+" << s.remaining);
        AddResult a = Add(&r, Frag(s.length, s.remaining));
        ASSERT_EQ(a.err, SMBD_E_OK);
        EXPECT_EQ(a.offset, s.offset);
        EXPECT_EQ(a.total, s.offset + s.length + s.remaining);
        EXPECT_EQ(a.complete, s.complete);
    }
}

// A fragment must announce exactly what the previous one left over.
TEST(Reassembly, RejectsRemainingThatDoesNotContinue)
{
    struct Case {
        const char *what;
        uint32_t length, remaining;
    };
    for (Case c : {Case{"gap", 50, 100}, Case{"overlap", 100, 150},
                   Case{"longer than announced", 250, 0},
                   Case{"ends early", 150, 0}, Case{"grows", 200, 1}}) {
        SCOPED_TRACE(c.what);
        smbd_reassembly r;
        smbd_reassembly_init(&r, kMaxFrag);
        ASSERT_EQ(Add(&r, Frag(100, 200)).err, SMBD_E_OK); // 300 in all
        EXPECT_EQ(Add(&r, Frag(c.length, c.remaining)).err,
                  SMBD_E_REASSEMBLY_MISMATCH);
    }
}

TEST(Reassembly, RejectsFirstFragmentAboveMaxFragmented)
{
    smbd_reassembly r;
    smbd_reassembly_init(&r, 131072);
    EXPECT_EQ(Add(&r, Frag(1340, 131072 - 1339)).err,
              SMBD_E_FRAGMENT_TOO_LARGE);
    EXPECT_EQ(Add(&r, Frag(1340, 0xffffffff)).err, SMBD_E_FRAGMENT_TOO_LARGE);
    EXPECT_FALSE(r.active);
    AddResult a = Add(&r, Frag(1340, 131072 - 1340));
    ASSERT_EQ(a.err, SMBD_E_OK);
    EXPECT_EQ(a.total, 131072u);
}

// Credit-only messages between fragments neither complete nor shift anything.
TEST(Reassembly, IgnoresEmptyMessagesBetweenFragments)
{
    smbd_reassembly r;
    smbd_reassembly_init(&r, kMaxFrag);
    AddResult a = Add(&r, Frag(0, 0));
    EXPECT_EQ(a.err, SMBD_E_OK);
    EXPECT_FALSE(a.complete);
    EXPECT_FALSE(r.active);

    ASSERT_EQ(Add(&r, Frag(100, 50)).err, SMBD_E_OK);
    for (int i = 0; i < 3; i++) {
        a = Add(&r, Frag(0, 0));
        EXPECT_EQ(a.err, SMBD_E_OK);
        EXPECT_FALSE(a.complete);
    }
    a = Add(&r, Frag(50, 0));
    ASSERT_EQ(a.err, SMBD_E_OK);
    EXPECT_EQ(a.offset, 100u);
    EXPECT_EQ(a.total, 150u);
    EXPECT_TRUE(a.complete);
}

// --- Whole PDUs through plan, build, parse and reassembly -------------------

// Sends @pdu the way the engine does and returns what the receiver rebuilt.
Bytes SendAndReassemble(const Bytes &pdu, uint32_t max_send)
{
    struct smbd_frag_plan plan;
    EXPECT_EQ(smbd_frag_plan_make(static_cast<uint32_t>(pdu.size()), max_send,
                                  kMaxFrag, &plan),
              SMBD_E_OK);
    smbd_reassembly r;
    smbd_reassembly_init(&r, kMaxFrag);
    Bytes out;
    Bytes wire;
    for (uint32_t i = 0; i < plan.count; i++) {
        smbd_fragment f;
        smbd_frag_get(&plan, i, &f);
        smbd_data_hdr hdr = {.credits_requested = 255,
                             .credits_granted = 1,
                             .flags = 0,
                             .remaining_data_length = f.remaining,
                             .data_offset = 0,
                             .data_length = f.length};
        wire.resize(SMBD_DATA_PAYLOAD_OFFSET);
        wire.resize(smbd_data_build(&hdr, wire.data()));
        wire.insert(wire.end(), pdu.begin() + f.offset,
                    pdu.begin() + f.offset + f.length);
        EXPECT_LE(wire.size(), max_send);

        smbd_data_hdr got;
        EXPECT_EQ(
            smbd_data_parse(wire.data(), wire.size(), max_send, kMaxFrag, &got),
            SMBD_E_OK);
        uint32_t offset, total;
        bool complete;
        EXPECT_EQ(smbd_reassembly_add(&r, &got, &offset, &total, &complete),
                  SMBD_E_OK);
        if (::testing::Test::HasFailure())
            return out;
        out.resize(total);
        std::copy(wire.begin() + got.data_offset,
                  wire.begin() + got.data_offset + got.data_length,
                  out.begin() + offset);
        EXPECT_EQ(complete, i + 1 == plan.count);
    }
    return out;
}

TEST(DataTransferRoundTrip, ReassemblesEveryPduSize)
{
    // random bytes, so that a misplaced fragment cannot go unnoticed
    std::mt19937 rng(1);
    Bytes random(kMaxFrag);
    for (auto &byte : random)
        byte = static_cast<uint8_t>(rng());
    auto check = [&](uint32_t size, uint32_t max_send) {
        SCOPED_TRACE(testing::Message()
                     << "pdu " << size << " send " << max_send);
        const Bytes pdu(random.begin(), random.begin() + size);
        ASSERT_EQ(SendAndReassemble(pdu, max_send), pdu);
    };
    for (uint32_t size = 1; size <= 5000; size++) {
        check(size, 1364);
        if (HasFatalFailure())
            return;
    }
    for (uint32_t size :
         {65536u, 131071u, 131072u, 500000u, 1048575u, 1048576u})
        check(size, 1364);
    std::uniform_int_distribution<uint32_t> any(1, kMaxFrag);
    for (int i = 0; i < 8; i++)
        check(any(rng), 1364);
    for (uint32_t size : {1u, 103u, 104u, 105u, 2000u})
        check(size, 128);
}

} // namespace
