// The network fuzzer's pure parts: the PRNG, the plans (deterministic for a
// seed and an index, each one breaking what it mutates), READ/WRITE
// requests with their edits, the reference reassembly and the judge of
// answers.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "buffer_desc.h"
#include "fuzz.h"
#include "fuzz_judge.h"
#include "fuzz_plan.h"
#include "smb2_rw.h"

using namespace smbd::client;
namespace rw = smbd::smb2rw;

namespace {

constexpr uint64_t kSeed = 1;
constexpr uint64_t kSession = 0x5e55000000000001ull;

// Every byte a plan would send with @descs for its READ/WRITEs, and its
// choices: two plans are the same conversation exactly when these are.
std::vector<std::vector<uint8_t>> bytes_of(const ConversationPlan &p,
                                           std::span<const uint8_t> descs)
{
    std::vector<std::vector<uint8_t>> out;
    out.push_back({uint8_t(p.stage), uint8_t(p.wait_permille),
                   uint8_t(p.wait_permille >> 8)});
    out.emplace_back(p.what.begin(), p.what.end());
    out.push_back(*build_smb2_negotiate(p.smb2));
    auto add = [&](const std::vector<std::vector<uint8_t>> &msgs) {
        out.insert(out.end(), msgs.begin(), msgs.end());
    };
    if (auto *n = std::get_if<NegotiatePlan>(&p.detail)) {
        out.push_back(n->request);
        out.push_back({n->smb2_after});
    }
    else if (auto *c = std::get_if<CreditsPlan>(&p.detail)) {
        out.push_back(
            {uint8_t(c->credits_requested), uint8_t(c->receive_credits)});
        add(c->messages);
    }
    else if (auto *f = std::get_if<FragmentsPlan>(&p.detail)) {
        out.push_back(f->pdu);
        out.push_back({f->owned, f->disconnect});
        add(f->messages);
    }
    else if (auto *s = std::get_if<Smb2NegotiatePlan>(&p.detail)) {
        out.push_back(s->pdu);
    }
    else if (auto *s = std::get_if<SessionSetupPlan>(&p.detail)) {
        out.push_back(s->setup);
        add(s->extras);
    }
    else if (auto *r = std::get_if<RdmaPlan>(&p.detail)) {
        for (const auto &q : r->requests)
            out.push_back(build_rw_request(q, rw::CHANNEL_RDMA_V1_INVALIDATE,
                                           descs, 2, kSession));
        out.push_back(r->garbage);
        out.push_back({uint8_t(r->then), r->other_channel,
                       uint8_t(r->descriptors), uint8_t(r->size)});
    }
    return out;
}

// Two descriptors as RdmaIo::describe gives them.
std::vector<uint8_t> two_descriptors()
{
    std::vector<uint8_t> d(2 * SMBD_BUFFER_DESC_SIZE);
    smbd_buffer_desc a{0x7f0000001000ull, 0x1234501, 4096};
    smbd_buffer_desc b{0x7f0000003000ull, 0x1234602, 4096};
    smbd_buffer_desc_put(d.data(), 0, &a);
    smbd_buffer_desc_put(d.data(), 1, &b);
    return d;
}

std::vector<uint8_t> valid_negotiate_request(const FuzzTarget &t)
{
    smbd_negotiate_req req = Client::negotiate_request(t.connect);
    std::vector<uint8_t> b(SMBD_NEGOTIATE_REQ_SIZE);
    smbd_negotiate_req_build(&req, b.data());
    return b;
}

// The plan for conversation @i restricted to @stage.
ConversationPlan plan(uint64_t i, FuzzStage stage, const FuzzTarget &t = {})
{
    return plan_conversation(kSeed, i, stage, t);
}

TEST(ClientFuzz, RngIsTheSameStreamForTheSameSeedAndIndex)
{
    FuzzRng a(7, 3), b(7, 3), other_index(7, 4), other_seed(8, 3);
    bool differs_index = false, differs_seed = false;
    for (int i = 0; i < 64; i++) {
        uint64_t v = a.next();
        EXPECT_EQ(v, b.next());
        differs_index |= v != other_index.next();
        differs_seed |= v != other_seed.next();
    }
    EXPECT_TRUE(differs_index);
    EXPECT_TRUE(differs_seed);
}

TEST(ClientFuzz, RngStaysInItsBounds)
{
    FuzzRng r(1, 1);
    std::set<uint32_t> seen;
    for (int i = 0; i < 10000; i++) {
        uint32_t v = r.below(7);
        ASSERT_LT(v, 7u);
        seen.insert(v);
        uint32_t w = r.between(5, 9);
        ASSERT_GE(w, 5u);
        ASSERT_LE(w, 9u);
    }
    EXPECT_EQ(seen.size(), 7u);
    EXPECT_EQ(r.between(3, 3), 3u);
    EXPECT_LE(r.between(0, UINT32_MAX), UINT32_MAX);
}

TEST(ClientFuzz, StageNamesRoundTrip)
{
    for (size_t i = 0; i < fuzz_stage_count; i++) {
        auto s = FuzzStage(i);
        EXPECT_EQ(parse_fuzz_stage(fuzz_stage_name(s)), s);
    }
    EXPECT_EQ(parse_fuzz_stage("smb2-negotiate"), FuzzStage::smb2_negotiate);
    EXPECT_FALSE(parse_fuzz_stage("rdma2").has_value());
    EXPECT_FALSE(parse_fuzz_stage("").has_value());
}

TEST(ClientFuzz, EveryStageIsDrawnAndNoneDominates)
{
    std::map<FuzzStage, int> n;
    for (uint64_t i = 0; i < 2000; i++)
        n[plan_conversation(kSeed, i, std::nullopt, {}).stage]++;
    ASSERT_EQ(n.size(), fuzz_stage_count);
    for (const auto &[stage, count] : n) {
        EXPECT_GT(count, 200) << fuzz_stage_name(stage);
        EXPECT_LT(count, 600) << fuzz_stage_name(stage);
    }
}

TEST(ClientFuzz, ReplayOfAConversationYieldsIdenticalBytes)
{
    FuzzTarget t;
    auto descs = two_descriptors();
    std::vector<std::vector<std::vector<uint8_t>>> run;
    for (uint64_t i = 0; i < 300; i++)
        run.push_back(
            bytes_of(plan_conversation(kSeed, i, std::nullopt, t), descs));
    // --conversations 1 --first i: nothing drawn before it
    for (uint64_t i : {0, 1, 17, 150, 299})
        EXPECT_EQ(bytes_of(plan_conversation(kSeed, i, std::nullopt, t), descs),
                  run[i])
            << "conversation " << i;
    // another seed is another conversation
    EXPECT_NE(
        bytes_of(plan_conversation(kSeed + 1, 17, std::nullopt, t), descs),
        run[17]);
}

// A replay command printed by one build must replay on the next: the plans
// of seed 1 are pinned, byte for byte (FNV-1a of what bytes_of gives).
TEST(ClientFuzz, PlansOfSeedOneArePinned)
{
    auto descs = two_descriptors();
    uint64_t h = 1469598103934665603ull;
    for (uint64_t i = 0; i < 400; i++)
        for (const auto &v :
             bytes_of(plan_conversation(kSeed, i, std::nullopt, {}), descs)) {
            for (uint8_t b : v)
                h = (h ^ b) * 1099511628211ull;
            h = (h ^ 0x100) * 1099511628211ull;
        }
    EXPECT_EQ(h, 0x448667ae8bfe5680ull);
}

TEST(ClientFuzz, OwnedFragmentsCarryThePduAfterSessionSetup)
{
    size_t owned = 0;
    for (uint64_t i = 0; i < 100; i++) {
        auto f = std::get<FragmentsPlan>(plan(i, FuzzStage::fragments).detail);
        smb2_hdr h;
        ASSERT_EQ(smb2_hdr_parse(f.pdu.data(), f.pdu.size(), &h), SMBD_E_OK);
        if (!f.owned) {
            EXPECT_EQ(h.command, SMB2_NEGOTIATE);
            continue;
        }
        owned++;
        EXPECT_EQ(h.message_id, fuzz_first_io_message_id);
        EXPECT_EQ(h.session_id, 0u);
    }
    EXPECT_GT(owned, 30u);
    EXPECT_LT(owned, 70u);
}

TEST(ClientFuzz, RestrictingToItsOwnStageChangesNothing)
{
    auto descs = two_descriptors();
    for (uint64_t i = 0; i < 100; i++) {
        auto p = plan_conversation(kSeed, i, std::nullopt, {});
        EXPECT_EQ(bytes_of(plan_conversation(kSeed, i, p.stage, {}), descs),
                  bytes_of(p, descs))
            << "conversation " << i;
    }
}

TEST(ClientFuzz, NegotiateRequestsDifferAndFitTheSendBuffer)
{
    FuzzTarget t;
    auto valid = valid_negotiate_request(t);
    std::set<size_t> lengths;
    for (uint64_t i = 0; i < 500; i++) {
        auto p = plan(i, FuzzStage::negotiate, t);
        const auto &req = std::get<NegotiatePlan>(p.detail).request;
        EXPECT_NE(req, valid) << "conversation " << i << ": " << p.what;
        EXPECT_LE(req.size(), t.connect.preferred_send_size);
        lengths.insert(req.size());
    }
    // truncated, whole, and beyond what the server posts
    EXPECT_LT(*lengths.begin(), size_t(SMBD_NEGOTIATE_REQ_SIZE));
    EXPECT_TRUE(lengths.count(SMBD_NEGOTIATE_REQ_SIZE));
    EXPECT_GT(*lengths.rbegin(), size_t(t.receive_size));
}

TEST(ClientFuzz, ExpectedNegotiateAnswerFollowsTheProtocolCore)
{
    FuzzTarget t;
    auto valid = valid_negotiate_request(t);
    EXPECT_EQ(expected_negotiate_answer(valid, t.receive_size),
              NegotiateAnswer::success);
    auto version = valid;
    version[0] = version[2] = 0;
    version[1] = version[3] = 2;
    EXPECT_EQ(expected_negotiate_answer(version, t.receive_size),
              NegotiateAnswer::refusal);
    auto shorter = valid;
    shorter.resize(12);
    EXPECT_EQ(expected_negotiate_answer(shorter, t.receive_size),
              NegotiateAnswer::none);
    auto longer = valid;
    longer.resize(t.receive_size + 1);
    EXPECT_EQ(expected_negotiate_answer(longer, t.receive_size),
              NegotiateAnswer::none);
    longer.resize(t.receive_size);
    EXPECT_EQ(expected_negotiate_answer(longer, t.receive_size),
              NegotiateAnswer::success);
}

TEST(ClientFuzz, CreditMessagesAreDataTransferMessagesThatFit)
{
    FuzzTarget t;
    bool beyond_grant = false;
    for (uint64_t i = 0; i < 300; i++) {
        auto p = plan(i, FuzzStage::credits, t);
        const auto &c = std::get<CreditsPlan>(p.detail);
        ASSERT_FALSE(c.messages.empty());
        beyond_grant |= c.messages.size() > c.credits_requested;
        for (const auto &m : c.messages) {
            EXPECT_GE(m.size(), size_t(SMBD_DATA_HDR_SIZE));
            EXPECT_LE(m.size(), size_t(t.receive_size));
        }
    }
    EXPECT_TRUE(beyond_grant);
}

// The valid fragments of @pdu, as the client sends them.
std::vector<std::vector<uint8_t>> fragments(std::span<const uint8_t> pdu,
                                            uint32_t max_send)
{
    smbd_frag_plan plan;
    EXPECT_EQ(
        smbd_frag_plan_make(uint32_t(pdu.size()), max_send, 1u << 20, &plan),
        SMBD_E_OK);
    std::vector<std::vector<uint8_t>> out;
    for (uint32_t i = 0; i < plan.count; i++) {
        smbd_fragment f;
        smbd_frag_get(&plan, i, &f);
        smbd_data_hdr h{};
        h.credits_requested = 255;
        h.remaining_data_length = f.remaining;
        h.data_length = f.length;
        std::vector<uint8_t> m(SMBD_DATA_PAYLOAD_OFFSET);
        smbd_data_build(&h, m.data());
        m.insert(m.end(), pdu.begin() + f.offset,
                 pdu.begin() + f.offset + f.length);
        out.push_back(std::move(m));
    }
    return out;
}

TEST(ClientFuzz, ReassemblyGivesBackTheFragmentedPdu)
{
    auto pdu = build_echo_pdu({2, 0, 5000});
    auto msgs = fragments(pdu, 1364);
    ASSERT_EQ(msgs.size(), 4u);
    auto r = reassemble(msgs, 1364, 1u << 20);
    EXPECT_FALSE(r.refused.has_value());
    ASSERT_EQ(r.pdus.size(), 1u);
    EXPECT_EQ(r.pdus[0], pdu);

    // a fragment that does not continue where the last ended
    auto broken = msgs;
    smbd_put_le32(&broken[2][8], 7);
    r = reassemble(broken, 1364, 1u << 20);
    EXPECT_EQ(r.refused, 2u);
    EXPECT_TRUE(r.pdus.empty());

    // a message beyond the receive size is not even received
    broken = msgs;
    broken[1].resize(1365);
    EXPECT_EQ(reassemble(broken, 1364, 1u << 20).refused, 1u);
}

TEST(ClientFuzz, FragmentPlansBreakTheValidFragmentation)
{
    FuzzTarget t;
    std::set<bool> owned;
    for (uint64_t i = 0; i < 300; i++) {
        auto p = plan(i, FuzzStage::fragments, t);
        const auto &f = std::get<FragmentsPlan>(p.detail);
        owned.insert(f.owned);
        auto valid = fragments(f.pdu, t.receive_size);
        EXPECT_TRUE(f.messages != valid || f.disconnect)
            << "conversation " << i << ": " << p.what;
        for (const auto &m : f.messages)
            EXPECT_LE(m.size(), size_t(t.connect.preferred_send_size));
        // what the server would deliver is computed without a crash
        auto r = reassemble(f.messages, t.receive_size, t.max_fragmented_size);
        EXPECT_LE(r.pdus.size(), f.messages.size());
    }
    EXPECT_EQ(owned.size(), 2u);
}

TEST(ClientFuzz, Smb2NegotiatePlansDifferFromTheValidNegotiate)
{
    for (uint64_t i = 0; i < 300; i++) {
        auto p = plan(i, FuzzStage::smb2_negotiate);
        EXPECT_NE(std::get<Smb2NegotiatePlan>(p.detail).pdu,
                  *build_smb2_negotiate(p.smb2))
            << "conversation " << i << ": " << p.what;
    }
}

// send_pdu takes no empty PDU (seed 8 conversation 219 truncated its
// NEGOTIATE to nothing).
TEST(ClientFuzz, PdusAreNeverEmpty)
{
    for (uint64_t seed : {1, 8}) {
        for (uint64_t i = 0; i < 1000; i++) {
            auto p = plan_conversation(seed, i, std::nullopt, {});
            std::vector<const std::vector<uint8_t> *> pdus;
            if (auto *n = std::get_if<Smb2NegotiatePlan>(&p.detail))
                pdus.push_back(&n->pdu);
            if (auto *s = std::get_if<SessionSetupPlan>(&p.detail)) {
                pdus.push_back(&s->setup);
                for (const auto &e : s->extras)
                    pdus.push_back(&e);
            }
            for (const auto *pdu : pdus)
                EXPECT_FALSE(pdu->empty())
                    << "seed " << seed << " conversation " << i;
        }
    }
}

TEST(ClientFuzz, SessionSetupPlansBreakSomething)
{
    SessionSetupOptions so;
    so.message_id = 1;
    auto valid = build_smb2_session_setup(so);
    for (uint64_t i = 0; i < 300; i++) {
        auto p = plan(i, FuzzStage::session_setup);
        const auto &s = std::get<SessionSetupPlan>(p.detail);
        EXPECT_TRUE(s.setup != valid || !s.extras.empty())
            << "conversation " << i << ": " << p.what;
    }
}

TEST(ClientFuzz, ReadWriteRequestsWithoutEditsParse)
{
    auto descs = two_descriptors();
    for (bool write : {false, true}) {
        RwRequestPlan r;
        r.write = write;
        r.offset = 4096;
        r.size = 8000;
        auto pdu = build_rw_request(r, rw::CHANNEL_RDMA_V1_INVALIDATE, descs, 9,
                                    kSession);
        std::span<const uint8_t> info;
        smb2_hdr h;
        if (write) {
            rw::WriteRequest w;
            ASSERT_EQ(rw::parse_write_request(pdu, SMB2_DIALECT_311, w),
                      rw::Rule::ok);
            EXPECT_EQ(w.remaining_bytes, 8000u);
            info = w.channel_info;
            h = w.hdr;
        }
        else {
            rw::ReadRequest q;
            ASSERT_EQ(rw::parse_read_request(pdu, SMB2_DIALECT_311, q),
                      rw::Rule::ok);
            EXPECT_EQ(q.length, 8000u);
            info = q.channel_info;
            h = q.hdr;
        }
        EXPECT_EQ(std::vector<uint8_t>(info.begin(), info.end()), descs);
        EXPECT_EQ(h.message_id, 9u);
        EXPECT_EQ(h.session_id, kSession);
    }
}

TEST(ClientFuzz, ReadWriteEditsChangeTheRequest)
{
    auto descs = two_descriptors();
    RwRequestPlan r;
    r.size = 8000;
    auto valid = build_rw_request(r, rw::CHANNEL_RDMA_V1, descs, 2, kSession);
    using K = RwEdit::Kind;
    for (auto kind : {K::token_xor, K::token_set, K::offset_add, K::offset_set,
                      K::length_set, K::length_add, K::duplicate, K::drop,
                      K::repeat, K::info_offset, K::info_length, K::channel,
                      K::amount, K::inline_data}) {
        RwRequestPlan e = r;
        e.edits.push_back({kind, 1, 65});
        EXPECT_NE(build_rw_request(e, rw::CHANNEL_RDMA_V1, descs, 2, kSession),
                  valid)
            << "edit " << int(kind);
    }
    // 65 descriptors: one more than the driver takes per operation
    RwRequestPlan many = r;
    many.edits.push_back({K::repeat, 0, 65});
    rw::ReadRequest q;
    auto pdu = build_rw_request(many, rw::CHANNEL_RDMA_V1, descs, 2, kSession);
    ASSERT_EQ(rw::parse_read_request(pdu, SMB2_DIALECT_311, q), rw::Rule::ok);
    EXPECT_EQ(q.channel_info.size(), 65u * SMBD_BUFFER_DESC_SIZE);
}

TEST(ClientFuzz, RdmaPlansBreakSomething)
{
    FuzzTarget t;
    for (uint64_t i = 0; i < 300; i++) {
        auto p = plan(i, FuzzStage::rdma, t);
        const auto &r = std::get<RdmaPlan>(p.detail);
        ASSERT_FALSE(r.requests.empty());
        size_t edits = 0;
        for (const auto &q : r.requests) {
            edits += q.edits.size();
            EXPECT_LE(q.size, r.size);
            EXPECT_GE(q.size, 1u);
        }
        EXPECT_TRUE(edits > 0 || r.then != RdmaPlan::Then::wait)
            << "conversation " << i << ": " << p.what;
        EXPECT_LE(r.garbage.size(), size_t(t.connect.preferred_send_size));
    }
}

// A request as the server saw it, and its error response.
std::vector<uint8_t> error_answer(std::span<const uint8_t> request,
                                  uint32_t status)
{
    smb2_hdr h;
    EXPECT_EQ(smb2_hdr_parse(request.data(), request.size(), &h), SMBD_E_OK);
    std::vector<uint8_t> out(SMB2_ERROR_RESP_SIZE);
    size_t len = 0;
    EXPECT_EQ(smb2_error_resp_build(&h, status, out.data(), out.size(), &len),
              SMBD_E_OK);
    return out;
}

std::vector<uint64_t> checks_due(const FuzzOptions &o)
{
    std::vector<uint64_t> due;
    for (uint64_t done = 1; done <= o.conversations; done++)
        if (valid_check_due(o, done))
            due.push_back(done);
    return due;
}

TEST(ClientFuzz, ValidConversationEveryNAndAfterTheLast)
{
    FuzzOptions o;
    o.conversations = 120;
    EXPECT_EQ(checks_due(o), (std::vector<uint64_t>{50, 100, 120}));
    o.check_every = 7;
    o.conversations = 14;
    EXPECT_EQ(checks_due(o), (std::vector<uint64_t>{7, 14}));
    // 0: only after the last, not a division by zero
    o.check_every = 0;
    o.conversations = 120;
    EXPECT_EQ(checks_due(o), (std::vector<uint64_t>{120}));
}

TEST(ClientFuzz, AnErrorResponseAnswersItsRequestOnce)
{
    Smb2NegotiateOptions o;
    std::vector<SentPdu> sent{{*build_smb2_negotiate(o), false}};
    auto answer = error_answer(sent[0].bytes, NT_STATUS_INVALID_PARAMETER);
    std::vector<bool> answered;
    EXPECT_TRUE(check_answer(answer, sent, answered).ok());
    auto again = check_answer(answer, sent, answered);
    ASSERT_FALSE(again.ok());
    EXPECT_NE(again.error().message.find("second answer"), std::string::npos);
}

TEST(ClientFuzz, AnAnswerToNothingSentIsGarbage)
{
    SessionSetupOptions so;
    std::vector<SentPdu> sent{{build_smb2_session_setup(so), false}};
    // another MessageId than the request's
    auto other = sent[0].bytes;
    smbd_put_le64(&other[24], 5);
    std::vector<bool> answered;
    EXPECT_FALSE(check_answer(error_answer(other, NT_STATUS_INVALID_PARAMETER),
                              sent, answered)
                     .ok());
    // not SMB2 at all
    std::vector<uint8_t> junk(100, 0x41);
    EXPECT_FALSE(check_answer(junk, sent, answered).ok());
    // the request itself, without SMB2_FLAGS_SERVER_TO_REDIR
    EXPECT_FALSE(check_answer(sent[0].bytes, sent, answered).ok());
}

TEST(ClientFuzz, EchoesCountOnlyForWhatSmbdEchoes)
{
    auto pdu = build_echo_pdu({3, kSession, 200});
    auto echo = pdu;
    echo[16] |= SMB2_FLAGS_SERVER_TO_REDIR;
    std::vector<bool> answered;
    std::vector<SentPdu> owned{{pdu, true}};
    EXPECT_TRUE(check_answer(echo, owned, answered).ok());
    answered.clear();
    std::vector<SentPdu> unowned{{pdu, false}};
    EXPECT_FALSE(check_answer(echo, unowned, answered).ok());
    // garbage is echoed as it is, flag and all
    std::vector<uint8_t> garbage{1, 2, 3};
    answered.clear();
    std::vector<SentPdu> g{{garbage, true}};
    EXPECT_TRUE(check_answer(garbage, g, answered).ok());
}

TEST(ClientFuzz, ReadWriteResponsesAnswerTheirRequest)
{
    RwRequestPlan r;
    r.size = 4096;
    auto req = build_rw_request(r, rw::CHANNEL_RDMA_V1, two_descriptors(), 7,
                                kSession);
    std::vector<SentPdu> sent{{req, false}};
    smb2_hdr h;
    ASSERT_EQ(smb2_hdr_parse(req.data(), req.size(), &h), SMBD_E_OK);
    std::vector<bool> answered;
    EXPECT_TRUE(
        check_answer(rw::build_read_response(h, 1, 4096), sent, answered).ok());
    answered.clear();
    EXPECT_TRUE(check_answer(
                    rw::build_error_response(h, 1, NT_STATUS_INVALID_PARAMETER),
                    sent, answered)
                    .ok());
    answered.clear();
    // a WRITE response to a READ
    h.command = rw::SMB2_WRITE;
    EXPECT_FALSE(
        check_answer(rw::build_write_response(h, 1, 4096), sent, answered)
            .ok());
}

} // namespace
