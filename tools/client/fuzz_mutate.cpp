// The network fuzzer's mutators; see fuzz_mutate.h.
#include "fuzz_mutate.h"

#include <algorithm>
#include <cstdio>

#include "buffer_desc.h"
#include "smb2_rw.h"
#include "smb2_wire.h"

namespace smbd::client {

namespace {

namespace rw = smbd::smb2rw;
using fuzz::in_body;
using fuzz::put16;
using fuzz::put32;

uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// READ and WRITE request bodies (2.2.19, 2.2.21): where each puts the
// fields an RwEdit overwrites
struct RwFields {
    size_t amount, inline_data, channel, info_offset, info_length;
};
constexpr RwFields read_fields{
    in_body(rw::READ_LENGTH), in_body(rw::READ_MINIMUM_COUNT),
    in_body(rw::READ_CHANNEL), in_body(rw::READ_CHANNEL_INFO_OFFSET),
    in_body(rw::READ_CHANNEL_INFO_LENGTH)};
constexpr RwFields write_fields{
    in_body(rw::WRITE_REMAINING_BYTES), in_body(rw::WRITE_LENGTH),
    in_body(rw::WRITE_CHANNEL), in_body(rw::WRITE_CHANNEL_INFO_OFFSET),
    in_body(rw::WRITE_CHANNEL_INFO_LENGTH)};

} // namespace

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

bool is_descriptor_edit(RwEdit::Kind k) { return k <= RwEdit::Kind::repeat; }

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
    h.credit_charge = h.credits = smb2_credit_charge(r.size);
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

namespace fuzz {

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

uint16_t any16(FuzzRng &rng)
{
    return rng.pick<uint16_t>({0, 1, 2, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000,
                               0xfffe, 0xffff, uint16_t(rng.next())});
}

uint32_t any_size(FuzzRng &rng, uint32_t near)
{
    return rng.pick<uint32_t>({0, 1, 127, 128, 129, near - 1, near, near + 1,
                               4096, 65536, 0x7fffffff, 0xffffffff,
                               1u << rng.below(32), uint32_t(rng.next())});
}

void flip_bits(FuzzRng &rng, std::vector<uint8_t> &b, uint32_t n, size_t from,
               size_t to)
{
    to = std::min(to, b.size());
    if (from >= to)
        return;
    for (uint32_t i = 0; i < n; i++) {
        // the bit is drawn before the byte, as the right operand of the
        // ^= this was sequenced first (C++17): the plans stay the same
        auto bit = uint8_t(1u << rng.below(8));
        size_t at = from + rng.below(uint32_t(to - from));
        b[at] ^= bit;
    }
}

void make_differ(FuzzRng &rng, std::vector<uint8_t> &b,
                 std::span<const uint8_t> valid, size_t from)
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

void change_length(FuzzRng &rng, std::vector<uint8_t> &b, bool longer,
                   uint32_t max_extra, Notes &notes)
{
    size_t old = b.size();
    if (longer) {
        auto extra = random_bytes(rng, rng.between(1, max_extra));
        b.insert(b.end(), extra.begin(), extra.end());
    }
    else if (old > 1) {
        b.resize(rng.between(1, uint32_t(old) - 1));
    }
    // 0 or 1 bytes: nothing shorter keeps a byte, and nothing is drawn (as
    // between(1, 0) did not draw for 1 byte)
    notes.add("length " + std::to_string(old) + " -> " +
              std::to_string(b.size()));
}

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
        put16(b, SMB2_HDR_STRUCTURE_SIZE, v);
        notes.add("header StructureSize " + hex(v));
        break;
    }
    case 2: {
        uint16_t v = rng.pick<uint16_t>({0, 1, 2, 0xffff});
        put16(b, SMB2_HDR_CREDIT_CHARGE, v);
        notes.add("CreditCharge " + hex(v));
        break;
    }
    case 3: {
        uint16_t v = rng.pick<uint16_t>({SMB2_NEGOTIATE, SMB2_SESSION_SETUP,
                                         rw::SMB2_READ, rw::SMB2_WRITE,
                                         SMB2_IOCTL, uint16_t(rng.next())});
        put16(b, SMB2_HDR_COMMAND, v);
        notes.add("Command " + hex(v));
        break;
    }
    case 4: {
        uint32_t v = rng.pick<uint32_t>(
            {SMB2_FLAGS_SERVER_TO_REDIR, SMB2_FLAGS_ASYNC_COMMAND,
             SMB2_FLAGS_RELATED_OPERATIONS, SMB2_FLAGS_SIGNED,
             uint32_t(rng.next())});
        put32(b, SMB2_HDR_FLAGS, v);
        notes.add("Flags " + hex(v));
        break;
    }
    case 5: {
        uint32_t v = rng.pick<uint32_t>(
            {8, 64, uint32_t(b.size()), uint32_t(rng.next())});
        put32(b, SMB2_HDR_NEXT_COMMAND, v);
        notes.add("NextCommand " + hex(v));
        break;
    }
    case 6: {
        uint64_t v = rng.pick<uint64_t>({0, 1, 2, rng.next()});
        put64(b, SMB2_HDR_MESSAGE_ID, v);
        notes.add("MessageId " + hex(v));
        break;
    }
    default: {
        // ProcessId, TreeId, SessionId, Signature: copied into answers
        put_bytes(b, SMB2_HDR_PROCESS_ID, random_bytes(rng, 32));
        notes.add("ProcessId, TreeId, SessionId and Signature random");
        break;
    }
    }
}

} // namespace fuzz

} // namespace smbd::client
