// The network fuzzer's planners; see fuzz_plan.h.
#include "fuzz_plan.h"

#include <algorithm>
#include <cassert>

#include "smb2_rw.h"

namespace smbd::client {

namespace {

namespace rw = smbd::smb2rw;
using namespace fuzz;

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

size_t align8(size_t n) { return (n + 7) & ~size_t(7); }

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
            put16(m, SMBD_DATA_RESERVED, uint16_t(rng.next()));
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
        p.pdu = build_echo_pdu({fuzz_first_io_message_id, 0, size});
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
            uint32_t r = get32(m, SMBD_DATA_REMAINING),
                     len = get32(m, SMBD_DATA_DATA_LENGTH);
            uint32_t v = rng.pick<uint32_t>({r + 1, r - 1, 0,
                                             uint32_t(rng.next()), 0xffffffff,
                                             t.max_fragmented_size - len + 1});
            put32(m, SMBD_DATA_REMAINING, v);
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
            put32(m, SMBD_DATA_DATA_OFFSET, v);
            notes.add(at + "DataOffset " + std::to_string(v));
            break;
        }
        case 2: {
            uint32_t len = get32(m, SMBD_DATA_DATA_LENGTH);
            uint32_t v = rng.pick<uint32_t>({0, len - 1, len + 1, len + 8,
                                             0xffffffff, uint32_t(rng.next())});
            put32(m, SMBD_DATA_DATA_LENGTH, v);
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
            put16(m, SMBD_DATA_CREDITS_REQUESTED, 0);
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
            put32(last, SMBD_DATA_REMAINING,
                  get32(last, SMBD_DATA_REMAINING) + extra * max_payload);
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
        flip_bits(rng, p.messages[0], 1, SMBD_DATA_REMAINING,
                  SMBD_DATA_HDR_SIZE);
        notes.add("fragment 1 header bit flip");
    }
    return p;
}

// Where each negotiate context header sits in a NEGOTIATE we built.
std::vector<size_t> negotiate_contexts(std::span<const uint8_t> pdu)
{
    std::vector<size_t> out;
    size_t pos = get32(pdu, in_body(SMB2_NEG_REQ_CONTEXT_OFFSET));
    for (uint16_t i = get16(pdu, in_body(SMB2_NEG_REQ_CONTEXT_COUNT));
         i > 0 && pos; i--) {
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
    uint16_t dialects = get16(valid, in_body(SMB2_NEG_REQ_DIALECT_COUNT));
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
            put16(b, in_body(SMB2_NEG_REQ_DIALECT_COUNT), v);
            notes.add("DialectCount " + std::to_string(v));
            break;
        }
        case 3: {
            size_t i = rng.below(dialects);
            uint16_t v =
                rng.pick<uint16_t>({0x02ff, 0, 0xffff, SMB2_DIALECT_311,
                                    SMB2_DIALECT_202, uint16_t(rng.next())});
            put16(b, in_body(SMB2_NEG_REQ_DIALECTS) + 2 * i, v);
            notes.add("dialect " + std::to_string(i) + " " + hex(v));
            break;
        }
        case 4: {
            put_bytes(b, in_body(SMB2_NEG_REQ_SECURITY_MODE),
                      random_bytes(rng, 24));
            notes.add("SecurityMode, Capabilities and ClientGuid random");
            break;
        }
        case 5: {
            uint32_t off = get32(valid, in_body(SMB2_NEG_REQ_CONTEXT_OFFSET));
            uint32_t v = rng.pick<uint32_t>({0, off - 8, off + 8, off + 1,
                                             uint32_t(valid.size()), 0xffffffff,
                                             uint32_t(rng.next())});
            put32(b, in_body(SMB2_NEG_REQ_CONTEXT_OFFSET), v);
            notes.add("NegotiateContextOffset " + std::to_string(v));
            break;
        }
        case 6: {
            uint16_t c = get16(valid, in_body(SMB2_NEG_REQ_CONTEXT_COUNT));
            uint16_t v =
                rng.pick<uint16_t>({0, uint16_t(c - 1), uint16_t(c + 1), 0xffff,
                                    uint16_t(rng.next())});
            put16(b, in_body(SMB2_NEG_REQ_CONTEXT_COUNT), v);
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
                b.resize(rng.between(SMBD_MAX_SETUP_PDU - 100,
                                     SMBD_MAX_SETUP_PDU + 70000));
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
            rng,
            rng.pick<uint32_t>(
                {0, 1, 100, 4096, 0xffff - in_body(SMB2_SETUP_REQ_BODY_SIZE)}));
        notes.add("a random " + std::to_string(so.security_blob.size()) +
                  "-byte security blob");
    }
    std::vector<uint8_t> b = build_smb2_session_setup(so);
    if (kind == 4)
        put64(b, SMB2_HDR_SESSION_ID, fuzz_registered_session);
    uint32_t ops = rng.below(4);
    uint32_t extras = rng.pick<uint32_t>({0, 0, 1, 2, 3});
    if (kind == 0 && ops == 0 && extras == 0)
        ops = 1;
    for (uint32_t n = ops; n--;) {
        switch (rng.below(11)) {
        case 0: {
            uint8_t v = rng.pick<uint8_t>({0, SMB2_SESSION_FLAG_BINDING, 0x02,
                                           0x80, 0xff, uint8_t(rng.next())});
            put_bytes(b, in_body(SMB2_SETUP_REQ_FLAGS), std::span(&v, 1));
            notes.add("Flags " + hex(v));
            break;
        }
        case 1: {
            put_bytes(b, in_body(SMB2_SETUP_REQ_SECURITY_MODE),
                      random_bytes(rng, 5));
            notes.add("SecurityMode and Capabilities random");
            break;
        }
        case 2: {
            uint32_t v = rng.pick<uint32_t>({1, 2, 3, uint32_t(rng.next())});
            put32(b, in_body(SMB2_SETUP_REQ_CHANNEL), v);
            notes.add("Channel " + hex(v));
            break;
        }
        case 3: {
            uint16_t v = rng.pick<uint16_t>(
                {0, SMB2_HDR_SIZE, in_body(SMB2_SETUP_REQ_BODY_SIZE) - 1,
                 in_body(SMB2_SETUP_REQ_BODY_SIZE) + 1, uint16_t(b.size()),
                 0xffff, uint16_t(rng.next())});
            put16(b, in_body(SMB2_SETUP_REQ_BUFFER_OFFSET), v);
            notes.add("SecurityBufferOffset " + std::to_string(v));
            break;
        }
        case 4: {
            uint16_t len = get16(b, in_body(SMB2_SETUP_REQ_BUFFER_LENGTH));
            uint16_t v =
                rng.pick<uint16_t>({0, uint16_t(len + 1), uint16_t(b.size()),
                                    0xffff, uint16_t(rng.next())});
            put16(b, in_body(SMB2_SETUP_REQ_BUFFER_LENGTH), v);
            notes.add("SecurityBufferLength " + std::to_string(v));
            break;
        }
        case 5: {
            uint64_t v =
                rng.pick<uint64_t>({fuzz_registered_session, rng.next()});
            put64(b, in_body(SMB2_SETUP_REQ_PREVIOUS_SESSION), v);
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
            put16(p.garbage, SMBD_DATA_CREDITS_REQUESTED,
                  uint16_t(rng.between(1, 0xffff)));
        notes.add("then a " + std::to_string(len) + "-byte garbage message");
    }
    else if (p.then == RdmaPlan::Then::close) {
        notes.add("then disconnect at once");
    }
    return p;
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
    // it refuses only an empty dialect list, and every list picked above
    // has one
    auto negotiate = build_smb2_negotiate(p.smb2);
    assert(negotiate);
    const std::vector<uint8_t> &negotiate_pdu = *negotiate;
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
} // namespace smbd::client
