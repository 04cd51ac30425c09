// The network fuzzer; see fuzz.h.
#include "fuzz.h"

#include <algorithm>
#include <cstdio>

#include "buffer_desc.h"
#include "rdma_io.h"
#include "smb2_rw.h"

namespace smbd::client {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
namespace rw = smbd::smb2rw;

// SMB2 header fields (MS-SMB2 2.2.1.2)
constexpr size_t HDR_STRUCTURE_SIZE = 4;
constexpr size_t HDR_CREDIT_CHARGE = 6;
constexpr size_t HDR_COMMAND = 12;
constexpr size_t HDR_FLAGS = 16;
constexpr size_t HDR_NEXT_COMMAND = 20;
constexpr size_t HDR_MESSAGE_ID = 24;
constexpr size_t HDR_PROCESS_ID = 32;
constexpr size_t HDR_SESSION_ID = 40;
// NEGOTIATE request body (2.2.3), from the header
constexpr size_t NEG_DIALECT_COUNT = SMB2_HDR_SIZE + 2;
constexpr size_t NEG_SECURITY_MODE = SMB2_HDR_SIZE + 4;
constexpr size_t NEG_CONTEXT_OFFSET = SMB2_HDR_SIZE + 28;
constexpr size_t NEG_CONTEXT_COUNT = SMB2_HDR_SIZE + 32;
constexpr size_t NEG_DIALECTS = SMB2_HDR_SIZE + 36;
// SESSION_SETUP request body (2.2.5)
constexpr size_t SETUP_FLAGS = SMB2_HDR_SIZE + 2;
constexpr size_t SETUP_CAPABILITIES = SMB2_HDR_SIZE + 4;
constexpr size_t SETUP_CHANNEL = SMB2_HDR_SIZE + 8;
constexpr size_t SETUP_BUFFER_OFFSET = SMB2_HDR_SIZE + 12;
constexpr size_t SETUP_BUFFER_LENGTH = SMB2_HDR_SIZE + 14;
constexpr size_t SETUP_PREVIOUS_SESSION = SMB2_HDR_SIZE + 16;
constexpr size_t SETUP_FIXED = SMB2_HDR_SIZE + 24;
// READ and WRITE request bodies (2.2.19, 2.2.21): where each puts the
// fields an RwEdit overwrites
struct RwFields {
    size_t amount, inline_data, channel, info_offset, info_length;
};
constexpr RwFields read_fields{SMB2_HDR_SIZE + 4, SMB2_HDR_SIZE + 32,
                               SMB2_HDR_SIZE + 36, SMB2_HDR_SIZE + 44,
                               SMB2_HDR_SIZE + 46};
constexpr RwFields write_fields{SMB2_HDR_SIZE + 36, SMB2_HDR_SIZE + 4,
                                SMB2_HDR_SIZE + 32, SMB2_HDR_SIZE + 40,
                                SMB2_HDR_SIZE + 42};
// Data Transfer message fields (MS-SMBD 2.2.3)
constexpr size_t DT_CREDITS_REQUESTED = 0;
constexpr size_t DT_RESERVED = 6;
constexpr size_t DT_REMAINING = 8;
constexpr size_t DT_DATA_OFFSET = 12;
constexpr size_t DT_DATA_LENGTH = 16;

// The driver takes no PDU above 128 KiB before a connection has an owner.
constexpr uint32_t setup_pdu_limit = 128u << 10;
constexpr uint64_t first_io_message_id = 2;

struct StageInfo {
    FuzzStage stage;
    std::string_view name;
    uint32_t weight; // of 100
};

constexpr StageInfo stage_table[] = {
    {FuzzStage::negotiate, "negotiate", 15},
    {FuzzStage::credits, "credits", 15},
    {FuzzStage::fragments, "fragments", 20},
    {FuzzStage::smb2_negotiate, "smb2-negotiate", 15},
    {FuzzStage::session_setup, "session-setup", 15},
    {FuzzStage::rdma, "rdma", 20},
};
static_assert(std::size(stage_table) == fuzz_stage_count);

uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

std::string hex(uint64_t v)
{
    char buf[24];
    std::snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)v);
    return buf;
}

std::string bytes_hex(std::span<const uint8_t> b, size_t max)
{
    std::string s;
    for (size_t i = 0; i < b.size() && i < max; i++) {
        char buf[4];
        std::snprintf(buf, sizeof(buf), "%02x", b[i]);
        s += buf;
    }
    return b.size() > max ? s + "..." : s;
}

// Field writers that leave a field past the end alone: a truncated
// message has no such field.
void put16(std::vector<uint8_t> &b, size_t at, uint16_t v)
{
    if (at + 2 <= b.size())
        smbd_put_le16(&b[at], v);
}

void put32(std::vector<uint8_t> &b, size_t at, uint32_t v)
{
    if (at + 4 <= b.size())
        smbd_put_le32(&b[at], v);
}

void put64(std::vector<uint8_t> &b, size_t at, uint64_t v)
{
    if (at + 8 <= b.size())
        smbd_put_le64(&b[at], v);
}

// @v over the bytes at @at, as far as @b reaches.
void put_bytes(std::vector<uint8_t> &b, size_t at, std::span<const uint8_t> v)
{
    for (size_t i = 0; i < v.size() && at + i < b.size(); i++)
        b[at + i] = v[i];
}

uint16_t get16(std::span<const uint8_t> b, size_t at)
{
    return at + 2 <= b.size() ? smbd_get_le16(&b[at]) : 0;
}

uint32_t get32(std::span<const uint8_t> b, size_t at)
{
    return at + 4 <= b.size() ? smbd_get_le32(&b[at]) : 0;
}

size_t align8(size_t n) { return (n + 7) & ~size_t(7); }

// The mutations of one message, in words.
struct Notes {
    std::string text;
    void add(const std::string &s) { text += (text.empty() ? "" : ", ") + s; }
};

uint16_t any16(FuzzRng &rng)
{
    return rng.pick<uint16_t>({0, 1, 2, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000,
                               0xfffe, 0xffff, uint16_t(rng.next())});
}

// Sizes at the edges: 0, the 128-byte minimum, around @near, the top.
uint32_t any_size(FuzzRng &rng, uint32_t near)
{
    return rng.pick<uint32_t>({0, 1, 127, 128, 129, near - 1, near, near + 1,
                               4096, 65536, 0x7fffffff, 0xffffffff,
                               1u << rng.below(32), uint32_t(rng.next())});
}

// Flip @n random bits in bytes [@from, @to) of @b.
void flip_bits(FuzzRng &rng, std::vector<uint8_t> &b, uint32_t n,
               size_t from = 0, size_t to = SIZE_MAX)
{
    to = std::min(to, b.size());
    if (from >= to)
        return;
    for (uint32_t i = 0; i < n; i++)
        b[from + rng.below(uint32_t(to - from))] ^= uint8_t(1u << rng.below(8));
}

// A mutation may write the value that was there: then one bit more.
void make_differ(FuzzRng &rng, std::vector<uint8_t> &b,
                 std::span<const uint8_t> valid, size_t from = 0)
{
    if (!std::equal(b.begin(), b.end(), valid.begin(), valid.end()))
        return;
    if (b.size() > from)
        flip_bits(rng, b, 1, from);
    else
        b.push_back(uint8_t(rng.next()));
}

std::vector<uint8_t> random_bytes(FuzzRng &rng, uint32_t n)
{
    std::vector<uint8_t> b(n);
    rng.fill(b);
    return b;
}

// Cut PDU @b to a random shorter length (a PDU has at least one byte), or
// add random bytes behind it.
void change_length(FuzzRng &rng, std::vector<uint8_t> &b, bool longer,
                   uint32_t max_extra, Notes &notes)
{
    size_t old = b.size();
    if (longer) {
        auto extra = random_bytes(rng, rng.between(1, max_extra));
        b.insert(b.end(), extra.begin(), extra.end());
    }
    else {
        b.resize(rng.between(1, uint32_t(old) - 1));
    }
    notes.add("length " + std::to_string(old) + " -> " +
              std::to_string(b.size()));
}

// SMB2 header fields a server must check or copy.
void mutate_smb2_header(FuzzRng &rng, std::vector<uint8_t> &b, Notes &notes)
{
    switch (rng.below(8)) {
    case 0: {
        size_t at = rng.below(4);
        uint8_t bit = uint8_t(1u << rng.below(8));
        if (at < b.size())
            b[at] ^= bit;
        notes.add("ProtocolId byte " + std::to_string(at));
        break;
    }
    case 1: {
        uint16_t v = any16(rng);
        put16(b, HDR_STRUCTURE_SIZE, v);
        notes.add("header StructureSize " + hex(v));
        break;
    }
    case 2: {
        uint16_t v = rng.pick<uint16_t>({0, 1, 2, 0xffff});
        put16(b, HDR_CREDIT_CHARGE, v);
        notes.add("CreditCharge " + hex(v));
        break;
    }
    case 3: {
        uint16_t v = rng.pick<uint16_t>({SMB2_NEGOTIATE, SMB2_SESSION_SETUP,
                                         rw::SMB2_READ, rw::SMB2_WRITE,
                                         SMB2_IOCTL, uint16_t(rng.next())});
        put16(b, HDR_COMMAND, v);
        notes.add("Command " + hex(v));
        break;
    }
    case 4: {
        uint32_t v = rng.pick<uint32_t>(
            {SMB2_FLAGS_SERVER_TO_REDIR, SMB2_FLAGS_ASYNC_COMMAND,
             SMB2_FLAGS_RELATED_OPERATIONS, SMB2_FLAGS_SIGNED,
             uint32_t(rng.next())});
        put32(b, HDR_FLAGS, v);
        notes.add("Flags " + hex(v));
        break;
    }
    case 5: {
        uint32_t v = rng.pick<uint32_t>(
            {8, 64, uint32_t(b.size()), uint32_t(rng.next())});
        put32(b, HDR_NEXT_COMMAND, v);
        notes.add("NextCommand " + hex(v));
        break;
    }
    case 6: {
        uint64_t v = rng.pick<uint64_t>({0, 1, 2, rng.next()});
        put64(b, HDR_MESSAGE_ID, v);
        notes.add("MessageId " + hex(v));
        break;
    }
    default: {
        // ProcessId, TreeId, SessionId, Signature: copied into answers
        put_bytes(b, HDR_PROCESS_ID, random_bytes(rng, 32));
        notes.add("ProcessId, TreeId, SessionId and Signature random");
        break;
    }
    }
}

NegotiatePlan plan_negotiate(FuzzRng &rng, const FuzzTarget &t, Notes &notes)
{
    smbd_negotiate_req req = Client::negotiate_request(t.connect);
    std::vector<uint8_t> valid(SMBD_NEGOTIATE_REQ_SIZE);
    smbd_negotiate_req_build(&req, valid.data());
    std::vector<uint8_t> b = valid;
    uint32_t buffer = t.connect.preferred_send_size;
    size_t len = b.size();
    for (uint32_t n = rng.between(1, 3); n--;) {
        switch (rng.below(9)) {
        case 0: {
            uint16_t v = rng.pick<uint16_t>({0, SMBD_VERSION_1, 0x0101, 0x0200,
                                             0xffff, uint16_t(rng.next())});
            bool max = rng.percent(50);
            put16(b, max ? 2 : 0, v);
            notes.add(std::string(max ? "MaxVersion " : "MinVersion ") +
                      hex(v));
            break;
        }
        case 1: {
            uint16_t v = any16(rng);
            put16(b, 4, v);
            notes.add("Reserved " + hex(v));
            break;
        }
        case 2: {
            uint16_t v = rng.pick<uint16_t>(
                {0, 1, 2, 255, 256, 0xffff, uint16_t(rng.next())});
            put16(b, 6, v);
            notes.add("CreditsRequested " + std::to_string(v));
            break;
        }
        case 3: {
            uint32_t v = any_size(rng, t.receive_size);
            put32(b, 8, v);
            notes.add("PreferredSendSize " + std::to_string(v));
            break;
        }
        case 4: {
            uint32_t v = any_size(rng, t.connect.max_receive_size);
            put32(b, 12, v);
            notes.add("MaxReceiveSize " + std::to_string(v));
            break;
        }
        case 5: {
            uint32_t v = rng.pick<uint32_t>(
                {0, SMBD_MIN_FRAGMENTED_SIZE - 1, SMBD_MIN_FRAGMENTED_SIZE,
                 SMBD_MIN_FRAGMENTED_SIZE + 1, 1u << 20, 0xffffffff,
                 uint32_t(rng.next())});
            put32(b, 16, v);
            notes.add("MaxFragmentedSize " + std::to_string(v));
            break;
        }
        case 6: {
            uint32_t bits = rng.between(1, 4);
            flip_bits(rng, b, bits);
            notes.add(std::to_string(bits) + " bit flip(s)");
            break;
        }
        case 7:
            len = rng.below(SMBD_NEGOTIATE_REQ_SIZE);
            notes.add("length " + std::to_string(len));
            break;
        default:
            // up to the server's receive size and beyond what it posts
            len = std::clamp<uint32_t>(
                rng.pick<uint32_t>({21, 24, 32, t.receive_size - 1,
                                    t.receive_size, t.receive_size + 1,
                                    rng.between(21, buffer)}),
                SMBD_NEGOTIATE_REQ_SIZE + 1, buffer);
            notes.add("length " + std::to_string(len));
            break;
        }
    }
    size_t fields = b.size();
    b.resize(len);
    if (len > fields && rng.percent(50))
        rng.fill(std::span<uint8_t>(b).subspan(fields));
    make_differ(rng, b, valid);
    NegotiatePlan p;
    p.request = std::move(b);
    p.smb2_after = rng.percent(50);
    return p;
}

std::vector<uint8_t> data_message(const smbd_data_hdr &hdr,
                                  std::span<const uint8_t> payload)
{
    smbd_data_hdr h = hdr;
    h.data_length = uint32_t(payload.size());
    std::vector<uint8_t> m(SMBD_DATA_PAYLOAD_OFFSET);
    m.resize(smbd_data_build(&h, m.data()));
    m.insert(m.end(), payload.begin(), payload.end());
    return m;
}

CreditsPlan plan_credits(FuzzRng &rng, const FuzzTarget &t,
                         std::span<const uint8_t> negotiate_pdu, Notes &notes)
{
    CreditsPlan p;
    p.credits_requested = rng.pick<uint16_t>({1, 2, 3, 8, 32, 255});
    p.receive_credits = rng.pick<uint16_t>({1, 2, 4, 16, 64, 255});
    uint32_t target = p.credits_requested;
    uint32_t n = 0;
    switch (rng.below(4)) {
    case 0:
        n = rng.between(1, 4);
        break;
    case 1:
        n = target;
        break;
    // beyond what the server granted
    case 2:
        n = target + rng.between(1, 3);
        break;
    default:
        n = rng.between(1, 2 * target + 8);
        break;
    }
    uint32_t max_len = std::min(t.receive_size, t.connect.preferred_send_size);
    uint32_t zero_requested = 0, responses = 0, negotiates = 0, garbage = 0;
    uint16_t max_grant = 0;
    for (uint32_t i = 0; i < n; i++) {
        smbd_data_hdr h{};
        h.credits_requested =
            rng.percent(5) ? 0
                           : rng.pick<uint16_t>(
                                 {1, p.credits_requested,
                                  uint16_t(rng.between(1, 0xffff)), 0xffff});
        h.credits_granted = rng.pick<uint16_t>({0, 0, 1, p.receive_credits,
                                                uint16_t(p.receive_credits + 1),
                                                0xffff, uint16_t(rng.next())});
        h.flags = rng.pick<uint16_t>(
            {0, 0, SMBD_FLAG_RESPONSE_REQUESTED, uint16_t(rng.next())});
        std::vector<uint8_t> payload;
        uint32_t kind = rng.below(10);
        if (kind >= 7 && kind < 9 &&
            SMBD_DATA_PAYLOAD_OFFSET + negotiate_pdu.size() <= max_len) {
            payload.assign(negotiate_pdu.begin(), negotiate_pdu.end());
            negotiates++;
        }
        else if (kind == 9) {
            payload = random_bytes(rng, rng.between(1, 64));
            garbage++;
        }
        auto m = data_message(h, payload);
        if (rng.percent(10))
            put16(m, DT_RESERVED, uint16_t(rng.next()));
        zero_requested += h.credits_requested == 0;
        responses += (h.flags & SMBD_FLAG_RESPONSE_REQUESTED) != 0;
        max_grant = std::max(max_grant, h.credits_granted);
        p.messages.push_back(std::move(m));
    }
    notes.add("CreditsRequested " + std::to_string(p.credits_requested) +
              " in the negotiate and " + std::to_string(p.receive_credits) +
              " receives never reposted");
    notes.add(
        std::to_string(n) + " messages: " + std::to_string(zero_requested) +
        " with CreditsRequested 0, " + std::to_string(responses) +
        " asking for a response, grants up to " + std::to_string(max_grant) +
        ", " + std::to_string(negotiates) + " carrying the SMB2 NEGOTIATE, " +
        std::to_string(garbage) + " random data");
    return p;
}

FragmentsPlan plan_fragments(FuzzRng &rng, const FuzzTarget &t,
                             std::span<const uint8_t> negotiate_pdu,
                             Notes &notes)
{
    FragmentsPlan p;
    p.owned = rng.percent(50);
    if (p.owned) {
        // SessionId 0: the bytes do not depend on what the server hands out
        uint32_t size =
            rng.pick<uint32_t>({SMB2_HDR_SIZE, 100, 1340, 1341, 4096, 65536,
                                200000, rng.between(SMB2_HDR_SIZE, 300000)});
        p.pdu = build_echo_pdu({first_io_message_id, 0, size});
        notes.add("a " + std::to_string(size) +
                  "-byte PDU after SESSION_SETUP");
    }
    else {
        p.pdu.assign(negotiate_pdu.begin(), negotiate_pdu.end());
        notes.add("the SMB2 NEGOTIATE");
    }
    uint32_t buffer = t.connect.preferred_send_size;
    uint32_t max_payload =
        std::min(t.receive_size, buffer) - SMBD_DATA_PAYLOAD_OFFSET;
    bool random_cuts = rng.percent(40);
    // random cuts make at most about 64 fragments
    uint32_t min_cut = std::min(
        max_payload, std::max<uint32_t>(1, uint32_t(p.pdu.size() / 64)));
    smbd_data_hdr h{};
    h.credits_requested = t.connect.send_credit_target;
    for (size_t off = 0; off < p.pdu.size();) {
        uint32_t left = uint32_t(p.pdu.size() - off);
        uint32_t len =
            std::min(left, random_cuts ? rng.between(min_cut, max_payload)
                                       : max_payload);
        h.remaining_data_length = left - len;
        p.messages.push_back(
            data_message(h, std::span<const uint8_t>(p.pdu).subspan(off, len)));
        off += len;
    }
    const auto valid = p.messages;
    for (uint32_t n = rng.between(1, 3); n--;) {
        auto &msgs = p.messages;
        uint32_t j = rng.below(uint32_t(msgs.size()));
        uint32_t op = rng.below(11);
        if (msgs.size() == 1 && (op == 4 || op == 5))
            op = 0;
        if (op == 7 && buffer <= t.receive_size)
            op = 2;
        std::vector<uint8_t> &m = msgs[j];
        std::string at = "fragment " + std::to_string(j + 1) + "/" +
                         std::to_string(msgs.size()) + " ";
        switch (op) {
        case 0: {
            uint32_t r = get32(m, DT_REMAINING), len = get32(m, DT_DATA_LENGTH);
            uint32_t v = rng.pick<uint32_t>({r + 1, r - 1, 0,
                                             uint32_t(rng.next()), 0xffffffff,
                                             t.max_fragmented_size - len + 1});
            put32(m, DT_REMAINING, v);
            notes.add(at + "RemainingDataLength " + std::to_string(r) + " -> " +
                      std::to_string(v));
            break;
        }
        case 1: {
            uint32_t v = rng.pick<uint32_t>(
                {0, 8, 16, 20, 23, 25, 32, 40, uint32_t(m.size()), 0xfffffff8});
            // 32 with the payload moved along: padding the protocol allows
            if (v == 32 && m.size() > SMBD_DATA_PAYLOAD_OFFSET)
                m.insert(m.begin() + SMBD_DATA_PAYLOAD_OFFSET, 8, 0);
            put32(m, DT_DATA_OFFSET, v);
            notes.add(at + "DataOffset " + std::to_string(v));
            break;
        }
        case 2: {
            uint32_t len = get32(m, DT_DATA_LENGTH);
            uint32_t v = rng.pick<uint32_t>({0, len - 1, len + 1, len + 8,
                                             0xffffffff, uint32_t(rng.next())});
            put32(m, DT_DATA_LENGTH, v);
            notes.add(at + "DataLength " + std::to_string(len) + " -> " +
                      std::to_string(v));
            break;
        }
        case 3: {
            std::vector<uint8_t> copy = m;
            msgs.insert(msgs.begin() + j + 1, std::move(copy));
            notes.add(at + "sent twice");
            break;
        }
        case 4:
            msgs.erase(msgs.begin() + j);
            notes.add(at + "left out");
            break;
        case 5:
            std::swap(m, msgs[(j + 1) % msgs.size()]);
            notes.add(at + "swapped with the next");
            break;
        case 6:
            put16(m, DT_CREDITS_REQUESTED, 0);
            notes.add(at + "CreditsRequested 0");
            break;
        case 7:
            m.resize(t.receive_size + rng.between(1, buffer - t.receive_size));
            notes.add(at + "of " + std::to_string(m.size()) +
                      " bytes, beyond the server's receive size");
            break;
        case 8:
            msgs.resize(j + 1);
            p.disconnect = true;
            notes.add("disconnect after " + at);
            break;
        case 9: {
            uint32_t bits = rng.between(1, 3);
            flip_bits(rng, m, bits, 0, SMBD_DATA_HDR_SIZE);
            notes.add(at + std::to_string(bits) + " header bit flip(s)");
            break;
        }
        default: {
            // the PDU goes on past its end: more fragments than it has
            uint32_t extra = rng.between(1, 4);
            std::vector<uint8_t> &last = msgs.back();
            put32(last, DT_REMAINING,
                  get32(last, DT_REMAINING) + extra * max_payload);
            for (uint32_t k = extra; k--;) {
                h.remaining_data_length = k * max_payload;
                msgs.push_back(data_message(h, random_bytes(rng, max_payload)));
            }
            notes.add(std::to_string(extra) +
                      " fragment(s) more than the PDU has");
            break;
        }
        }
    }
    if (p.messages == valid && !p.disconnect) {
        flip_bits(rng, p.messages[0], 1, DT_REMAINING, SMBD_DATA_HDR_SIZE);
        notes.add("fragment 1 header bit flip");
    }
    return p;
}

// Where each negotiate context header sits in a NEGOTIATE we built.
std::vector<size_t> negotiate_contexts(std::span<const uint8_t> pdu)
{
    std::vector<size_t> out;
    size_t pos = get32(pdu, NEG_CONTEXT_OFFSET);
    for (uint16_t i = get16(pdu, NEG_CONTEXT_COUNT); i > 0 && pos; i--) {
        pos = align8(pos);
        if (pos + 8 > pdu.size())
            break;
        out.push_back(pos);
        pos += 8 + get16(pdu, pos + 2);
    }
    return out;
}

Smb2NegotiatePlan
plan_smb2_negotiate(FuzzRng &rng, std::span<const uint8_t> valid, Notes &notes)
{
    std::vector<uint8_t> b(valid.begin(), valid.end());
    auto contexts = negotiate_contexts(valid);
    uint16_t dialects = get16(valid, NEG_DIALECT_COUNT);
    for (uint32_t n = rng.between(1, 4); n--;) {
        uint32_t op = rng.below(14);
        if (op >= 7 && op <= 9 && contexts.empty())
            op = 13;
        switch (op) {
        case 0:
            mutate_smb2_header(rng, b, notes);
            break;
        case 1: {
            uint16_t v = rng.pick<uint16_t>({0, 35, 37, uint16_t(rng.next())});
            put16(b, SMB2_HDR_SIZE, v);
            notes.add("StructureSize " + std::to_string(v));
            break;
        }
        case 2: {
            uint16_t v = rng.pick<uint16_t>({0, 1, uint16_t(dialects - 1),
                                             uint16_t(dialects + 1), 0xffff,
                                             uint16_t(rng.next())});
            put16(b, NEG_DIALECT_COUNT, v);
            notes.add("DialectCount " + std::to_string(v));
            break;
        }
        case 3: {
            size_t i = rng.below(dialects);
            uint16_t v =
                rng.pick<uint16_t>({0x02ff, 0, 0xffff, SMB2_DIALECT_311,
                                    SMB2_DIALECT_202, uint16_t(rng.next())});
            put16(b, NEG_DIALECTS + 2 * i, v);
            notes.add("dialect " + std::to_string(i) + " " + hex(v));
            break;
        }
        case 4: {
            put_bytes(b, NEG_SECURITY_MODE, random_bytes(rng, 24));
            notes.add("SecurityMode, Capabilities and ClientGuid random");
            break;
        }
        case 5: {
            uint32_t off = get32(valid, NEG_CONTEXT_OFFSET);
            uint32_t v = rng.pick<uint32_t>({0, off - 8, off + 8, off + 1,
                                             uint32_t(valid.size()), 0xffffffff,
                                             uint32_t(rng.next())});
            put32(b, NEG_CONTEXT_OFFSET, v);
            notes.add("NegotiateContextOffset " + std::to_string(v));
            break;
        }
        case 6: {
            uint16_t c = get16(valid, NEG_CONTEXT_COUNT);
            uint16_t v =
                rng.pick<uint16_t>({0, uint16_t(c - 1), uint16_t(c + 1), 0xffff,
                                    uint16_t(rng.next())});
            put16(b, NEG_CONTEXT_COUNT, v);
            notes.add("NegotiateContextCount " + std::to_string(v));
            break;
        }
        case 7: {
            uint32_t i = rng.below(uint32_t(contexts.size()));
            uint16_t len = get16(valid, contexts[i] + 2);
            uint16_t v = rng.pick<uint16_t>(
                {0, uint16_t(len - 1), uint16_t(len + 1), 0xffff});
            put16(b, contexts[i] + 2, v);
            notes.add("context " + std::to_string(i) + " DataLength " +
                      std::to_string(v));
            break;
        }
        case 8: {
            uint32_t i = rng.below(uint32_t(contexts.size()));
            uint16_t v = rng.pick<uint16_t>(
                {SMB2_PREAUTH_INTEGRITY_CAPABILITIES,
                 SMB2_ENCRYPTION_CAPABILITIES, SMB2_COMPRESSION_CAPABILITIES,
                 SMB2_NETNAME_NEGOTIATE_CONTEXT_ID,
                 SMB2_RDMA_TRANSFORM_CAPABILITIES, SMB2_SIGNING_CAPABILITIES,
                 SMB2_POSIX_EXTENSIONS_AVAILABLE, uint16_t(rng.next())});
            put16(b, contexts[i], v);
            notes.add("context " + std::to_string(i) + " type " + hex(v));
            break;
        }
        case 9: {
            uint32_t i = rng.below(uint32_t(contexts.size()));
            size_t from = contexts[i] + 8;
            uint32_t bits = rng.between(1, 4);
            flip_bits(rng, b, bits, from, from + get16(valid, contexts[i] + 2));
            notes.add("context " + std::to_string(i) +
                      " data: " + std::to_string(bits) + " bit flip(s)");
            break;
        }
        case 10:
            change_length(rng, b, false, 0, notes);
            break;
        case 11:
            if (rng.percent(5)) {
                // beyond what the driver takes before the connection has
                // an owner
                b.resize(rng.between(setup_pdu_limit - 100,
                                     setup_pdu_limit + 70000));
                notes.add("padded to " + std::to_string(b.size()) + " bytes");
            }
            else {
                change_length(rng, b, true, 2048, notes);
            }
            break;
        default: {
            uint32_t bits = rng.between(1, 8);
            flip_bits(rng, b, bits);
            notes.add(std::to_string(bits) + " bit flip(s)");
            break;
        }
        }
    }
    make_differ(rng, b, valid);
    return {std::move(b)};
}

SessionSetupPlan plan_session_setup(FuzzRng &rng,
                                    std::span<const uint8_t> negotiate_pdu,
                                    Notes &notes)
{
    SessionSetupOptions so;
    so.message_id = 1;
    uint32_t kind = rng.below(5);
    switch (kind) {
    case 0:
        notes.add("new session");
        break;
    case 1:
        so.binding = true;
        so.session_id = fuzz_registered_session;
        notes.add("binding to the registered session");
        break;
    case 2:
        so.binding = true;
        so.session_id = rng.next();
        notes.add("binding to session " + hex(so.session_id));
        break;
    case 3:
        so.binding = true;
        notes.add("binding to session 0");
        break;
    default:
        notes.add("new session with the registered SessionId");
        break;
    }
    if (rng.percent(30)) {
        so.security_blob = random_bytes(
            rng, rng.pick<uint32_t>({0, 1, 100, 4096, 0xffff - SETUP_FIXED}));
        notes.add("a random " + std::to_string(so.security_blob.size()) +
                  "-byte security blob");
    }
    std::vector<uint8_t> b = build_smb2_session_setup(so);
    if (kind == 4)
        put64(b, HDR_SESSION_ID, fuzz_registered_session);
    uint32_t ops = rng.below(4);
    uint32_t extras = rng.pick<uint32_t>({0, 0, 1, 2, 3});
    if (kind == 0 && ops == 0 && extras == 0)
        ops = 1;
    for (uint32_t n = ops; n--;) {
        switch (rng.below(11)) {
        case 0: {
            uint8_t v = rng.pick<uint8_t>({0, SMB2_SESSION_FLAG_BINDING, 0x02,
                                           0x80, 0xff, uint8_t(rng.next())});
            put_bytes(b, SETUP_FLAGS, std::span(&v, 1));
            notes.add("Flags " + hex(v));
            break;
        }
        case 1: {
            put_bytes(b, SETUP_CAPABILITIES - 1, random_bytes(rng, 5));
            notes.add("SecurityMode and Capabilities random");
            break;
        }
        case 2: {
            uint32_t v = rng.pick<uint32_t>({1, 2, 3, uint32_t(rng.next())});
            put32(b, SETUP_CHANNEL, v);
            notes.add("Channel " + hex(v));
            break;
        }
        case 3: {
            uint16_t v = rng.pick<uint16_t>(
                {0, SMB2_HDR_SIZE, SETUP_FIXED - 1, SETUP_FIXED + 1,
                 uint16_t(b.size()), 0xffff, uint16_t(rng.next())});
            put16(b, SETUP_BUFFER_OFFSET, v);
            notes.add("SecurityBufferOffset " + std::to_string(v));
            break;
        }
        case 4: {
            uint16_t len = get16(b, SETUP_BUFFER_LENGTH);
            uint16_t v =
                rng.pick<uint16_t>({0, uint16_t(len + 1), uint16_t(b.size()),
                                    0xffff, uint16_t(rng.next())});
            put16(b, SETUP_BUFFER_LENGTH, v);
            notes.add("SecurityBufferLength " + std::to_string(v));
            break;
        }
        case 5: {
            uint64_t v =
                rng.pick<uint64_t>({fuzz_registered_session, rng.next()});
            put64(b, SETUP_PREVIOUS_SESSION, v);
            notes.add("PreviousSessionId " + hex(v));
            break;
        }
        case 6:
            mutate_smb2_header(rng, b, notes);
            break;
        case 7: {
            uint16_t v = rng.pick<uint16_t>({0, 24, 26, uint16_t(rng.next())});
            put16(b, SMB2_HDR_SIZE, v);
            notes.add("StructureSize " + std::to_string(v));
            break;
        }
        case 8:
            change_length(rng, b, false, 0, notes);
            break;
        case 9:
            change_length(rng, b, true, 512, notes);
            break;
        default: {
            uint32_t bits = rng.between(1, 8);
            flip_bits(rng, b, bits);
            notes.add(std::to_string(bits) + " bit flip(s)");
            break;
        }
        }
    }
    SessionSetupPlan p;
    p.setup = std::move(b);
    for (uint32_t i = 0; i < extras; i++) {
        uint64_t id = 2 + i;
        switch (rng.below(4)) {
        case 0: {
            uint32_t size =
                rng.pick<uint32_t>({SMB2_HDR_SIZE, 200, 5000, 70000});
            p.extras.push_back(build_echo_pdu({id, 0, size}));
            notes.add("then a " + std::to_string(size) + "-byte PDU");
            break;
        }
        case 1:
            p.extras.push_back(random_bytes(rng, rng.between(1, 300)));
            notes.add("then " + std::to_string(p.extras.back().size()) +
                      " random bytes");
            break;
        case 2: {
            SessionSetupOptions again;
            again.message_id = id;
            p.extras.push_back(build_smb2_session_setup(again));
            notes.add("then another SESSION_SETUP");
            break;
        }
        default:
            p.extras.emplace_back(negotiate_pdu.begin(), negotiate_pdu.end());
            notes.add("then the NEGOTIATE again");
            break;
        }
    }
    return p;
}

const char *edit_name(RwEdit::Kind k)
{
    switch (k) {
    case RwEdit::Kind::token_xor:
        return "token ^";
    case RwEdit::Kind::token_set:
        return "token =";
    case RwEdit::Kind::offset_add:
        return "offset +";
    case RwEdit::Kind::offset_set:
        return "offset =";
    case RwEdit::Kind::length_set:
        return "length =";
    case RwEdit::Kind::length_add:
        return "length +";
    case RwEdit::Kind::duplicate:
        return "copied";
    case RwEdit::Kind::drop:
        return "dropped";
    case RwEdit::Kind::repeat:
        return "list grown to";
    case RwEdit::Kind::info_offset:
        return "ChannelInfoOffset";
    case RwEdit::Kind::info_length:
        return "ChannelInfoLength";
    case RwEdit::Kind::channel:
        return "Channel";
    case RwEdit::Kind::amount:
        return "Length/RemainingBytes";
    case RwEdit::Kind::inline_data:
        return "MinimumCount/Length";
    }
    return "?";
}

bool is_descriptor_edit(RwEdit::Kind k) { return k <= RwEdit::Kind::repeat; }

RwEdit draw_edit(FuzzRng &rng, uint32_t size)
{
    using K = RwEdit::Kind;
    RwEdit e{K::token_xor};
    e.index = rng.below(16);
    switch (rng.below(14)) {
    case 0:
        e.value = 1u << rng.below(32);
        break;
    case 1:
        e.kind = K::token_set;
        e.value = rng.pick<uint64_t>({0, 0xffffffff, uint32_t(rng.next())});
        break;
    case 2:
        e.kind = K::offset_add;
        e.value =
            rng.pick<uint64_t>({1, ~0ull, 4096, ~4095ull, size, rng.next()});
        break;
    case 3:
        e.kind = K::offset_set;
        e.value = rng.pick<uint64_t>({0, ~15ull, rng.next()});
        break;
    case 4:
        e.kind = K::length_set;
        e.value = rng.pick<uint64_t>(
            {0, 0xffffffff, 0x80000000, uint32_t(rng.next())});
        break;
    case 5:
        e.kind = K::length_add;
        e.value = rng.pick<uint64_t>({1, 0xffffffff, 4096});
        break;
    case 6:
        e.kind = K::duplicate;
        break;
    case 7:
        e.kind = K::drop;
        break;
    case 8:
        // the driver takes 64 descriptors per operation
        e.kind = K::repeat;
        e.value = rng.pick<uint64_t>({64, 65, 255});
        break;
    case 9:
        e.kind = K::info_offset;
        e.value =
            rng.pick<uint64_t>({0, SMB2_HDR_SIZE, rw::REQ_BUFFER_OFFSET - 1,
                                rw::REQ_BUFFER_OFFSET + 1, 0xffff});
        break;
    case 10:
        e.kind = K::info_length;
        e.value = rng.pick<uint64_t>({0, 15, 17, 4096, 0xffff});
        break;
    case 11:
        e.kind = K::channel;
        e.value = rng.pick<uint64_t>({rw::CHANNEL_NONE, rw::CHANNEL_RDMA_V1,
                                      rw::CHANNEL_RDMA_V1_INVALIDATE,
                                      rw::CHANNEL_RDMA_TRANSFORM, 4,
                                      uint32_t(rng.next())});
        break;
    case 12:
        e.kind = K::amount;
        e.value = rng.pick<uint64_t>(
            {0, uint64_t{size} + 1, 0xffffffff, uint32_t(rng.next())});
        break;
    default:
        e.kind = K::inline_data;
        e.value = rng.pick<uint64_t>({1, uint64_t{size} + 1, 0xffffffff});
        break;
    }
    return e;
}

RdmaPlan plan_rdma(FuzzRng &rng, const FuzzTarget &t, Notes &notes)
{
    RdmaPlan p;
    p.other_channel = rng.percent(15);
    p.size = std::min(t.max_read_write_size,
                      rng.pick<uint32_t>({1, 511, 4096, 65536, 65537, 1u << 20,
                                          (3u << 20) + 5}));
    p.descriptors = rng.pick<uint32_t>({1, 1, 2, 3, 8});
    p.descriptor_extra = rng.pick<uint32_t>({0, 0, 1, 4096});
    notes.add(std::string(p.other_channel ? "the other RDMA channel, " : "") +
              std::to_string(p.descriptors) + " descriptor(s) for " +
              std::to_string(p.size) + " bytes" +
              (p.descriptor_extra
                   ? " and " + std::to_string(p.descriptor_extra) + " more"
                   : ""));
    uint32_t edits = 0;
    for (uint32_t n = rng.between(1, 3); n--;) {
        RwRequestPlan r;
        r.write = rng.percent(50);
        r.size = rng.pick<uint32_t>({p.size, 1, p.size / 2 + 1});
        r.offset = rng.pick<uint64_t>(
            {0, (1u << 20) - 1000, t.file_size - r.size, t.file_size,
             t.file_size + 1, 1ull << 63,
             rng.next() % std::max<uint64_t>(t.file_size, 1)});
        for (uint32_t k = rng.below(4); k--;)
            r.edits.push_back(draw_edit(rng, r.size));
        edits += uint32_t(r.edits.size());
        p.requests.push_back(std::move(r));
    }
    p.then = rng.pick<RdmaPlan::Then>(
        {RdmaPlan::Then::wait, RdmaPlan::Then::wait, RdmaPlan::Then::garbage,
         RdmaPlan::Then::close});
    if (edits == 0 && p.then == RdmaPlan::Then::wait)
        p.requests[0].edits.push_back(draw_edit(rng, p.requests[0].size));
    for (size_t i = 0; i < p.requests.size(); i++) {
        const RwRequestPlan &r = p.requests[i];
        std::string s = std::string(r.write ? "WRITE " : "READ ") +
                        std::to_string(r.size) + " at " +
                        std::to_string(r.offset);
        for (const RwEdit &e : r.edits)
            s += std::string("; ") + edit_name(e.kind) +
                 (is_descriptor_edit(e.kind)
                      ? " [" + std::to_string(e.index) + "]"
                      : "") +
                 (e.kind == RwEdit::Kind::duplicate ||
                          e.kind == RwEdit::Kind::drop
                      ? ""
                      : " " + hex(e.value));
        notes.add(s);
    }
    if (p.then == RdmaPlan::Then::garbage) {
        uint32_t len = rng.between(
            0, std::min(t.receive_size + 64, t.connect.preferred_send_size));
        p.garbage = random_bytes(rng, len);
        // half of them look like a Data Transfer message
        if (rng.percent(50))
            put16(p.garbage, DT_CREDITS_REQUESTED,
                  uint16_t(rng.between(1, 0xffff)));
        notes.add("then a " + std::to_string(len) + "-byte garbage message");
    }
    else if (p.then == RdmaPlan::Then::close) {
        notes.add("then disconnect at once");
    }
    return p;
}

uint16_t rw_charge(uint32_t size)
{
    // MS-SMB2 3.2.4.1.5: one credit per started 64 KiB
    return uint16_t(std::max<uint32_t>(1, (size + 65535) / 65536));
}

bool is_echo(std::span<const uint8_t> answer, std::span<const uint8_t> pdu)
{
    if (answer.size() != pdu.size())
        return false;
    for (size_t i = 0; i < pdu.size(); i++) {
        uint8_t want = pdu[i];
        if (i == HDR_FLAGS && pdu.size() >= HDR_FLAGS + 4)
            want |= SMB2_FLAGS_SERVER_TO_REDIR;
        if (answer[i] != want)
            return false;
    }
    return true;
}

// Whether @a (header @h) answers the request @req.
bool answers(std::span<const uint8_t> a, const smb2_hdr &h,
             std::span<const uint8_t> req)
{
    smb2_hdr q;
    if (smb2_hdr_parse(req.data(), req.size(), &q) != SMBD_E_OK ||
        q.message_id != h.message_id || q.command != h.command)
        return false;
    bool more = h.command == SMB2_SESSION_SETUP &&
                h.status == NT_STATUS_MORE_PROCESSING_REQUIRED;
    if (h.status != NT_STATUS_SUCCESS && !more)
        // an ERROR response (MS-SMB2 2.2.2) to this request's session
        return a.size() >= SMB2_ERROR_RESP_SIZE &&
               get16(a, SMB2_HDR_SIZE) ==
                   SMB2_ERROR_RESP_SIZE - SMB2_HDR_SIZE &&
               h.session_id == q.session_id;
    switch (h.command) {
    case SMB2_NEGOTIATE: {
        smb2_negotiate_req r;
        auto n = parse_smb2_negotiate_response(a);
        return smb2_negotiate_req_parse(req.data(), req.size(), &r) ==
                   SMBD_E_OK &&
               n && smb2_id_list_has(&r.dialects, n->dialect);
    }
    case SMB2_SESSION_SETUP: {
        smb2_session_setup_req r;
        return smb2_session_setup_parse(req.data(), req.size(), &r) ==
                   SMBD_E_OK &&
               parse_smb2_session_setup_response(a).ok();
    }
    case rw::SMB2_READ: {
        rw::ReadResponse r;
        return h.session_id == q.session_id &&
               rw::parse_read_response(a, r) == rw::Rule::ok;
    }
    case rw::SMB2_WRITE: {
        rw::WriteResponse r;
        return h.session_id == q.session_id &&
               rw::parse_write_response(a, r) == rw::Rule::ok;
    }
    default:
        return false;
    }
}

} // namespace

std::string_view fuzz_stage_name(FuzzStage stage)
{
    for (const auto &s : stage_table)
        if (s.stage == stage)
            return s.name;
    return "?";
}

std::optional<FuzzStage> parse_fuzz_stage(std::string_view name)
{
    for (const auto &s : stage_table)
        if (s.name == name)
            return s.stage;
    return std::nullopt;
}

FuzzRng::FuzzRng(uint64_t seed, uint64_t conversation)
    : state_(mix(mix(seed + 0x9e3779b97f4a7c15ull) ^ conversation))
{
}

uint64_t FuzzRng::next()
{
    state_ += 0x9e3779b97f4a7c15ull;
    return mix(state_);
}

uint32_t FuzzRng::below(uint32_t n)
{
    return uint32_t(((next() >> 32) * n) >> 32);
}

uint32_t FuzzRng::between(uint32_t lo, uint32_t hi)
{
    if (hi <= lo)
        return lo;
    uint64_t span = uint64_t{hi} - lo + 1;
    return lo + uint32_t(span > UINT32_MAX ? next() : next() % span);
}

void FuzzRng::fill(std::span<uint8_t> out)
{
    for (uint8_t &b : out)
        b = uint8_t(next());
}

ConversationPlan plan_conversation(uint64_t seed, uint64_t index,
                                   std::optional<FuzzStage> only,
                                   const FuzzTarget &target)
{
    FuzzRng rng(seed, index);
    ConversationPlan p;
    p.index = index;
    // drawn even when restricted, so the rest of the stream stays the same
    uint32_t w = rng.below(100);
    for (const auto &s : stage_table) {
        p.stage = s.stage;
        if (w < s.weight)
            break;
        w -= s.weight;
    }
    if (only)
        p.stage = *only;
    rng.fill(p.smb2.salt);
    rng.fill(p.smb2.client_guid);
    p.smb2.dialects =
        rng.pick<std::vector<uint16_t>>({p.smb2.dialects,
                                         {SMB2_DIALECT_300},
                                         {SMB2_DIALECT_302},
                                         {SMB2_DIALECT_311},
                                         {SMB2_DIALECT_300, SMB2_DIALECT_302}});
    // closing at a random point of the wait is part of the test
    p.wait_permille = rng.percent(25) ? rng.below(1001) : 1000;
    auto negotiate_pdu = *build_smb2_negotiate(p.smb2);
    Notes notes;
    switch (p.stage) {
    case FuzzStage::negotiate:
        p.detail = plan_negotiate(rng, target, notes);
        break;
    case FuzzStage::credits:
        p.detail = plan_credits(rng, target, negotiate_pdu, notes);
        break;
    case FuzzStage::fragments:
        p.detail = plan_fragments(rng, target, negotiate_pdu, notes);
        break;
    case FuzzStage::smb2_negotiate:
        p.detail = plan_smb2_negotiate(rng, negotiate_pdu, notes);
        break;
    case FuzzStage::session_setup:
        p.detail = plan_session_setup(rng, negotiate_pdu, notes);
        break;
    case FuzzStage::rdma:
        p.detail = plan_rdma(rng, target, notes);
        break;
    }
    p.what = notes.text;
    return p;
}

std::vector<uint8_t> build_rw_request(const RwRequestPlan &r, uint32_t channel,
                                      std::span<const uint8_t> descs,
                                      uint64_t message_id, uint64_t session_id)
{
    using K = RwEdit::Kind;
    std::vector<smbd_buffer_desc> list(descs.size() / SMBD_BUFFER_DESC_SIZE);
    for (size_t i = 0; i < list.size(); i++)
        smbd_buffer_desc_get(descs.data(), uint32_t(i), &list[i]);
    for (const RwEdit &e : r.edits) {
        if (!is_descriptor_edit(e.kind) || list.empty())
            continue;
        size_t i = e.index % list.size();
        smbd_buffer_desc &d = list[i];
        switch (e.kind) {
        case K::token_xor:
            d.token ^= uint32_t(e.value);
            break;
        case K::token_set:
            d.token = uint32_t(e.value);
            break;
        case K::offset_add:
            d.offset += e.value;
            break;
        case K::offset_set:
            d.offset = e.value;
            break;
        case K::length_set:
            d.length = uint32_t(e.value);
            break;
        case K::length_add:
            d.length += uint32_t(e.value);
            break;
        case K::duplicate: {
            smbd_buffer_desc copy = d;
            list.insert(list.begin() + long(i) + 1, copy);
            break;
        }
        case K::drop:
            list.erase(list.begin() + long(i));
            break;
        default: {
            // ChannelInfoLength is 16 bits: 4095 entries at most
            size_t n = list.size();
            while (list.size() < std::min<uint64_t>(e.value, 4095))
                list.push_back(list[list.size() % n]);
            break;
        }
        }
    }
    std::vector<uint8_t> info(list.size() * SMBD_BUFFER_DESC_SIZE);
    for (size_t i = 0; i < list.size(); i++)
        smbd_buffer_desc_put(info.data(), uint32_t(i), &list[i]);

    smb2_hdr h{};
    h.credit_charge = h.credits = rw_charge(r.size);
    h.message_id = message_id;
    h.process_id = 0xFEFF;
    h.tree_id = 1;
    h.session_id = session_id;
    std::vector<uint8_t> pdu;
    if (r.write) {
        rw::WriteRequest w;
        w.hdr = h;
        w.offset = r.offset;
        w.channel = channel;
        w.remaining_bytes = r.size;
        w.channel_info = info;
        pdu = rw::build_write_request(w);
    }
    else {
        rw::ReadRequest q;
        q.hdr = h;
        q.length = r.size;
        q.offset = r.offset;
        q.channel = channel;
        q.channel_info = info;
        pdu = rw::build_read_request(q);
    }
    const RwFields &f = r.write ? write_fields : read_fields;
    for (const RwEdit &e : r.edits) {
        switch (e.kind) {
        case K::info_offset:
            put16(pdu, f.info_offset, uint16_t(e.value));
            break;
        case K::info_length:
            put16(pdu, f.info_length, uint16_t(e.value));
            break;
        case K::channel:
            put32(pdu, f.channel, uint32_t(e.value));
            break;
        case K::amount:
            put32(pdu, f.amount, uint32_t(e.value));
            break;
        case K::inline_data:
            put32(pdu, f.inline_data, uint32_t(e.value));
            break;
        default:
            break;
        }
    }
    return pdu;
}

Reassembled reassemble(std::span<const std::vector<uint8_t>> messages,
                       uint32_t receive_size, uint32_t max_fragmented_size)
{
    Reassembled out;
    smbd_reassembly r;
    smbd_reassembly_init(&r, max_fragmented_size);
    std::vector<uint8_t> pdu;
    for (size_t i = 0; i < messages.size(); i++) {
        const std::vector<uint8_t> &m = messages[i];
        smbd_data_hdr h;
        uint32_t offset = 0, total = 0;
        bool complete = false;
        if (m.size() > receive_size ||
            smbd_data_parse(m.data(), m.size(), receive_size,
                            max_fragmented_size, &h) != SMBD_E_OK ||
            smbd_reassembly_add(&r, &h, &offset, &total, &complete) !=
                SMBD_E_OK) {
            out.refused = i;
            break;
        }
        if (h.data_length == 0)
            continue;
        if (offset == 0)
            pdu.assign(total, 0);
        std::copy_n(m.begin() + h.data_offset, h.data_length,
                    pdu.begin() + offset);
        if (complete)
            out.pdus.push_back(std::exchange(pdu, {}));
    }
    return out;
}

NegotiateAnswer expected_negotiate_answer(std::span<const uint8_t> request,
                                          uint32_t receive_size)
{
    if (request.size() > receive_size)
        return NegotiateAnswer::none;
    smbd_negotiate_req req;
    switch (smbd_negotiate_req_parse(request.data(), request.size(), &req)) {
    case SMBD_E_OK:
        return NegotiateAnswer::success;
    case SMBD_E_VERSION:
        return NegotiateAnswer::refusal;
    default:
        return NegotiateAnswer::none;
    }
}

Status check_answer(std::span<const uint8_t> answer,
                    std::span<const SentPdu> sent, std::vector<bool> &answered)
{
    answered.resize(sent.size());
    bool again = false;
    auto take = [&](size_t i) {
        if (answered[i]) {
            again = true;
            return false;
        }
        answered[i] = true;
        return true;
    };
    for (size_t i = 0; i < sent.size(); i++)
        if (sent[i].echoable && is_echo(answer, sent[i].bytes) && take(i))
            return {};
    std::string why;
    if (auto h = parse_smb2_response_header(answer)) {
        for (size_t i = 0; i < sent.size(); i++)
            if (answers(answer, *h, sent[i].bytes) && take(i))
                return {};
        why = again
                  ? "a second answer to one request"
                  : "it answers no request that was sent (command " +
                        hex(h->command) + ", MessageId " + hex(h->message_id) +
                        ", status " + nt_status_text(h->status) + ")";
    }
    else {
        why = h.error().message;
    }
    return make_error(Errc::protocol,
                      "the server answered with a " +
                          std::to_string(answer.size()) +
                          "-byte PDU that is no well-formed answer: " + why +
                          " (" + bytes_hex(answer, 72) + ")");
}

namespace {

std::string ms_text(Clock::duration d)
{
    return std::to_string(std::chrono::duration_cast<milliseconds>(d).count()) +
           " ms";
}

bool is_garbage_error(const Error &e)
{
    // the server broke MS-SMBD or SMB2 framing, or we asked the client for
    // something impossible (a bug here)
    return e.code == make_error_code(Errc::protocol) ||
           e.code == make_error_code(Errc::invalid_argument);
}

// One conversation played against the server.
class Conversation {
  public:
    Conversation(const FuzzOptions &opt, const FuzzTarget &t,
                 const ConversationPlan &plan)
        : opt_(opt), t_(t), plan_(plan)
    {
    }

    struct Played {
        bool answered = false;
        bool server_disconnected = false;
    };

    Result<Played> play()
    {
        Status st =
            std::visit([&](const auto &d) { return stage(d); }, plan_.detail);
        Played p;
        if (!c_)
            return st ? Result<Played>(p) : Result<Played>(st.error());
        // a violation the client caught on the way is the server's garbage
        if (st && c_->end() &&
            c_->end()->code == make_error_code(Errc::protocol))
            st = *c_->end();
        p.answered = answered_;
        p.server_disconnected = c_->observed().peer_disconnected;
        // disconnect first: the memory goes only afterwards (io_)
        c_->close();
        if (!st)
            return st.error();
        return p;
    }

  private:
    milliseconds budget() const
    {
        return opt_.wait * plan_.wait_permille / 1000;
    }

    Error valid_step_failed(const std::string &step, const Error &e) const
    {
        return make_error(Errc::protocol,
                          "the valid " + step +
                              " before the mutation failed: " + e.message);
    }

    enum class Step { connect, negotiate, smb2_negotiate, session_setup };

    // The valid conversation up to @last, which the stage then breaks.
    Status valid_until(Step last, const ConnectOptions &o)
    {
        auto c = Client::connect(opt_.addr, opt_.port, o);
        if (!c)
            return valid_step_failed("connect", c.error());
        c_ = std::move(*c);
        if (last >= Step::negotiate)
            if (auto st = c_->negotiate(); !st)
                return valid_step_failed("MS-SMBD negotiate", st.error());
        if (last >= Step::smb2_negotiate) {
            auto n = c_->smb2_negotiate(plan_.smb2);
            if (!n)
                return valid_step_failed("SMB2 NEGOTIATE", n.error());
            dialect_ = n->dialect;
        }
        if (last >= Step::session_setup) {
            SessionSetupOptions so;
            so.message_id = 1;
            if (auto r = c_->session_setup(so); !r)
                return valid_step_failed("SESSION_SETUP", r.error());
        }
        return {};
    }

    // From here on every step waits the plan's share of --fuzz-wait.
    void mutating() { c_->set_timeout(budget()); }

    // A step after the mutation failed: garbage from the server fails the
    // conversation; its disconnect, its silence or a rule we broke do not.
    Status after(const Error &e)
    {
        if (is_garbage_error(e))
            return e;
        // a send or receive failed as the server's QP went down: its
        // disconnect follows
        if (e.code == make_error_code(Errc::rdma) &&
            !c_->observed().closed_locally)
            (void)c_->wait_peer_disconnect(budget());
        return {};
    }

    // Wait what is left of the plan's share of --fuzz-wait for @expected
    // answers (with none expected, for a disconnect), checking each.
    Status collect(size_t expected)
    {
        auto until = Clock::now() + budget();
        for (size_t got = 0; expected == 0 || got < expected; got++) {
            auto left =
                std::chrono::duration_cast<milliseconds>(until - Clock::now());
            if (left.count() <= 0)
                break;
            auto pdu = c_->recv(left);
            if (!pdu)
                return pdu.error().code == make_error_code(Errc::timeout)
                           ? Status()
                           : after(pdu.error());
            answered_ = true;
            if (auto st = check_answer(pdu->bytes, sent_, answered_flags_); !st)
                return st;
            // smbd answers the SESSION_SETUP before anything behind it
            if (setup_first_ && !answered_flags_[0])
                return make_error(Errc::protocol,
                                  "a PDU sent behind the SESSION_SETUP was "
                                  "answered before it");
        }
        return {};
    }

    Status send_pdus(size_t from)
    {
        for (size_t i = from; i < sent_.size(); i++)
            if (auto st = c_->send_pdu(sent_[i].bytes); !st)
                return after(st.error());
        return {};
    }

    void expect(const Reassembled &r, bool echoable)
    {
        for (const auto &pdu : r.pdus)
            sent_.push_back({pdu, echoable});
    }

    Status stage(const NegotiatePlan &p)
    {
        if (auto st = valid_until(Step::connect, t_.connect); !st)
            return st;
        mutating();
        auto want = expected_negotiate_answer(p.request, t_.receive_size);
        auto st = c_->negotiate_with(p.request);
        const Observed &o = c_->observed();
        answered_ = o.negotiate_response_length > 0;
        if (st) {
            if (want != NegotiateAnswer::success)
                return make_error(Errc::protocol,
                                  "the server accepted a Negotiate Request the "
                                  "protocol core refuses");
            if (!p.smb2_after)
                return {};
            // the driver must serve on whatever it agreed to
            auto n = c_->smb2_negotiate(plan_.smb2);
            if (!n && (is_garbage_error(n.error()) ||
                       n.error().code == make_error_code(Errc::smb2_status)))
                return make_error(
                    Errc::protocol,
                    "the SMB2 NEGOTIATE on an accepted negotiate: " +
                        n.error().message);
            return {};
        }
        const Error &e = st.error();
        if (e.code == make_error_code(Errc::negotiate_rejected)) {
            if (want != NegotiateAnswer::refusal)
                return make_error(
                    Errc::protocol,
                    "the server refused a Negotiate Request it "
                    "should have " +
                        std::string(want == NegotiateAnswer::success
                                        ? "accepted"
                                        : "disconnected on"));
            if (o.negotiate_response_length != SMBD_NEGOTIATE_RESP_SIZE ||
                o.negotiate_status != SMBD_STATUS_NOT_SUPPORTED)
                return make_error(Errc::protocol,
                                  "the failure response is not 32 bytes with "
                                  "STATUS_NOT_SUPPORTED: " +
                                      e.message);
            return {};
        }
        if (is_garbage_error(e))
            return e;
        if (want == NegotiateAnswer::success && o.peer_disconnected)
            return make_error(Errc::protocol,
                              "the server disconnected on a Negotiate Request "
                              "the protocol core accepts");
        return after(e);
    }

    Status stage(const CreditsPlan &p)
    {
        ConnectOptions o = t_.connect;
        o.send_credit_target = p.credits_requested;
        o.receive_credit_max = p.receive_credits;
        if (auto st = valid_until(Step::negotiate, o); !st)
            return st;
        c_->set_repost_receives(false);
        c_->set_control_messages(false);
        mutating();
        expect(reassemble(p.messages, t_.receive_size, t_.max_fragmented_size),
               false);
        for (const auto &m : p.messages)
            if (auto st = c_->send_raw_message(m); !st)
                return after(st.error());
        return collect(sent_.size());
    }

    Status stage(const FragmentsPlan &p)
    {
        if (auto st = valid_until(
                p.owned ? Step::session_setup : Step::negotiate, t_.connect);
            !st)
            return st;
        mutating();
        expect(reassemble(p.messages, t_.receive_size, t_.max_fragmented_size),
               p.owned);
        for (const auto &m : p.messages)
            if (auto st = c_->send_message(m); !st)
                return after(st.error());
        if (p.disconnect)
            return {};
        return collect(sent_.size());
    }

    Status stage(const Smb2NegotiatePlan &p)
    {
        if (auto st = valid_until(Step::negotiate, t_.connect); !st)
            return st;
        mutating();
        sent_.push_back({p.pdu, false});
        if (auto st = send_pdus(0); !st)
            return st;
        return collect(1);
    }

    Status stage(const SessionSetupPlan &p)
    {
        if (auto st = valid_until(Step::smb2_negotiate, t_.connect); !st)
            return st;
        mutating();
        sent_.push_back({p.setup, false});
        for (const auto &e : p.extras)
            sent_.push_back({e, true});
        setup_first_ = true;
        if (auto st = send_pdus(0); !st)
            return st;
        return collect(sent_.size());
    }

    Status stage(const RdmaPlan &p)
    {
        if (auto st = valid_until(Step::session_setup, t_.connect); !st)
            return st;
        uint32_t natural = dialect_ >= SMB2_DIALECT_302
                               ? rw::CHANNEL_RDMA_V1_INVALIDATE
                               : rw::CHANNEL_RDMA_V1;
        IoOptions o;
        o.dialect = dialect_;
        o.channel = !p.other_channel ? natural
                    : natural == rw::CHANNEL_RDMA_V1
                        ? rw::CHANNEL_RDMA_V1_INVALIDATE
                        : rw::CHANNEL_RDMA_V1;
        o.descriptors = p.descriptors;
        o.descriptor_extra = p.descriptor_extra;
        // a slot per request: a window is bound once
        o.slots = uint32_t(p.requests.size());
        o.max_size = p.size;
        auto io = RdmaIo::create(*c_, o);
        if (!io)
            return make_error(Errc::invalid_argument,
                              "registering memory: " + io.error().message);
        io_ = std::move(*io);
        mutating();
        uint64_t message_id = first_io_message_id;
        for (uint32_t slot = 0; slot < p.requests.size(); slot++) {
            const RwRequestPlan &r = p.requests[slot];
            auto descs = io_->describe(slot, r.size);
            if (!descs)
                return after(descs.error());
            sent_.push_back({build_rw_request(r, o.channel, *descs, message_id,
                                              c_->session_id()),
                             false});
            message_id += rw_charge(r.size);
            if (auto st = send_pdus(slot); !st)
                return st;
        }
        switch (p.then) {
        case RdmaPlan::Then::close:
            return {};
        case RdmaPlan::Then::garbage:
            if (auto st = c_->send_raw_message(p.garbage); !st)
                return after(st.error());
            break;
        case RdmaPlan::Then::wait:
            break;
        }
        return collect(sent_.size());
    }

    const FuzzOptions &opt_;
    const FuzzTarget &t_;
    const ConversationPlan &plan_;
    std::unique_ptr<Client> c_;
    // after c_: destroyed first, once close() disconnected
    std::unique_ptr<RdmaIo> io_;
    uint16_t dialect_ = 0;
    std::vector<SentPdu> sent_; // what the server saw after the mutation
    std::vector<bool> answered_flags_;
    bool setup_first_ = false;
    bool answered_ = false;
};

// The fully valid conversation: negotiate, SMB2 NEGOTIATE, a new session,
// echoed PDUs (one in many fragments) and, when the server offers it, a
// write-read over RDMA checked byte for byte. @learn, if given, takes the
// server's limits.
Status valid_conversation(const FuzzOptions &opt, const FuzzTarget &t,
                          uint64_t check, FuzzTarget *learn, std::string &note)
{
    auto step = [](const std::string &what, const Error &e) {
        return make_error(e.code == make_error_code(Errc::protocol)
                              ? Errc::protocol
                              : Errc::mismatch,
                          what + ": " + e.message);
    };
    auto connected = Client::connect(opt.addr, opt.port, t.connect);
    if (!connected)
        return step("connect", connected.error());
    Client &c = **connected;
    if (auto st = c.negotiate(); !st)
        return step("MS-SMBD negotiate", st.error());
    const smbd_negotiate_resp &resp = c.smbd_response();
    if (learn) {
        learn->receive_size = resp.max_receive_size;
        learn->max_fragmented_size = resp.max_fragmented_size;
        learn->max_read_write_size = resp.max_read_write_size;
    }
    Smb2NegotiateOptions so;
    FuzzRng rng(opt.seed, ~check);
    rng.fill(so.salt);
    rng.fill(so.client_guid);
    auto n = c.smb2_negotiate(so);
    if (!n)
        return step("SMB2 NEGOTIATE", n.error());
    SessionSetupOptions ss;
    ss.message_id = 1;
    if (auto r = c.session_setup(ss); !r)
        return step("SESSION_SETUP", r.error());
    uint64_t id = first_io_message_id;
    for (uint32_t size :
         {uint32_t(SMB2_HDR_SIZE), resp.max_receive_size + 100, 70000u}) {
        EchoSpec e{id++, c.session_id(), size};
        if (auto st = c.send_pdu(build_echo_pdu(e)); !st)
            return step("sending a PDU", st.error());
        auto got = c.recv_pdu(t.connect.timeout);
        if (!got)
            return step("its echo", got.error());
        if (auto st = verify_echo(e, *got); !st)
            return step("its echo", st.error());
    }
    IoOptions o;
    o.dialect = n->dialect;
    o.channel = o.dialect >= SMB2_DIALECT_302 ? rw::CHANNEL_RDMA_V1_INVALIDATE
                                              : rw::CHANNEL_RDMA_V1;
    o.descriptors = 2;
    o.max_size = 200000;
    o.first_message_id = id;
    auto io = RdmaIo::create(c, o);
    if (!io)
        return step("registering memory", io.error());
    WriteReadOptions wr;
    wr.size = o.max_size;
    IoReport report;
    auto st = write_read(**io, opt.file, wr, t.connect.timeout, report);
    std::string refused = nt_status_text(NT_STATUS_NOT_SUPPORTED);
    if (!st && st.error().code == make_error_code(Errc::smb2_status) &&
        st.error().message.find(refused) != std::string::npos)
        note = "the server offers no RDMA";
    else if (!st)
        return step("write-read over RDMA", st.error());
    else
        note = "wrote and read back " + std::to_string(report.bytes_verified) +
               " bytes over RDMA";
    c.close();
    return {};
}

} // namespace

FuzzReport run_fuzz(const FuzzOptions &opt,
                    const std::function<void(const std::string &)> &line)
{
    FuzzReport r;
    FuzzTarget t;
    t.connect.timeout = opt.timeout;
    t.file_size = opt.file.size;
    auto say = [&](const std::string &s) {
        if (line)
            line(s);
    };
    auto check = [&](uint64_t n, FuzzTarget *learn, const std::string &when) {
        std::string note;
        auto start = Clock::now();
        auto st = valid_conversation(opt, t, n, learn, note);
        r.valid_checks++;
        if (!st) {
            r.ok = false;
            r.failure = "the valid conversation " + when +
                        " failed: " + st.error().message;
            return false;
        }
        say("valid conversation " + when + ": " + note + ", " +
            ms_text(Clock::now() - start));
        return true;
    };
    if (!check(0, &t, "before the first conversation"))
        return r;
    uint64_t since = opt.first;
    for (uint64_t k = 0; k < opt.conversations; k++) {
        uint64_t i = opt.first + k;
        ConversationPlan plan = plan_conversation(opt.seed, i, opt.stage, t);
        std::string head = "conversation " + std::to_string(i) + " " +
                           std::string(fuzz_stage_name(plan.stage)) + ": " +
                           plan.what;
        r.conversations++;
        r.stages[size_t(plan.stage)]++;
        auto start = Clock::now();
        auto played = Conversation(opt, t, plan).play();
        if (!played) {
            r.ok = false;
            r.failure = head + ": " + played.error().message;
            r.replay = fuzz_replay_command(opt, i, 1);
            return r;
        }
        r.answered += played->answered;
        (played->server_disconnected ? r.server_disconnects
                                     : r.client_closes)++;
        say(head + ": " + (played->answered ? "answered" : "no answer") + ", " +
            (played->server_disconnected ? "the server disconnected"
                                         : "the client closed") +
            ", " + ms_text(Clock::now() - start));
        if ((k + 1) % opt.check_every == 0 || k + 1 == opt.conversations) {
            if (!check(k + 1, nullptr,
                       "after conversation " + std::to_string(i))) {
                r.replay = fuzz_replay_command(opt, since, i - since + 1);
                return r;
            }
            since = i + 1;
        }
    }
    return r;
}

std::string fuzz_summary(const FuzzOptions &opt, const FuzzReport &r)
{
    std::string s = "NETFUZZ seed=" + std::to_string(opt.seed) +
                    " conversations=" + std::to_string(r.conversations);
    for (const auto &st : stage_table)
        s += " " + std::string(st.name) + "=" +
             std::to_string(r.stages[size_t(st.stage)]);
    return s + " server_disconnects=" + std::to_string(r.server_disconnects) +
           " client_closes=" + std::to_string(r.client_closes) +
           " answered=" + std::to_string(r.answered) +
           " valid_checks=" + std::to_string(r.valid_checks) +
           " result=" + (r.ok ? "pass" : "fail");
}

std::string fuzz_replay_command(const FuzzOptions &opt, uint64_t first,
                                uint64_t count)
{
    std::string s = opt.program + " --addr " + opt.addr;
    if (opt.port != kPortByTransport)
        s += " --port " + std::to_string(opt.port);
    s += " --fuzz " + std::to_string(opt.seed) + " --conversations " +
         std::to_string(count) + " --first " + std::to_string(first);
    if (opt.stage)
        s += " --fuzz-stage " + std::string(fuzz_stage_name(*opt.stage));
    if (opt.wait != FuzzOptions{}.wait)
        s += " --fuzz-wait " + std::to_string(opt.wait.count());
    if (opt.file.size != FileOptions{}.size)
        s += " --file-size " + std::to_string(opt.file.size);
    return s;
}

} // namespace smbd::client
