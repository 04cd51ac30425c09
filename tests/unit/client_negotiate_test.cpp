// The client's SMB2 NEGOTIATE request, proven by the protocol core's server
// parser, and its response parser, proven by the core's response builder:
// the bytes the client sends are what the driver parses, and what the
// driver answers is what the client reads.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "smb2_wire.h"
#include "wire_bytes.h"

using namespace smbd::client;

namespace {

Smb2NegotiateOptions options_311()
{
    Smb2NegotiateOptions o;
    for (size_t i = 0; i < o.salt.size(); i++)
        o.salt[i] = uint8_t(0xA0 + i);
    for (size_t i = 0; i < o.client_guid.size(); i++)
        o.client_guid[i] = uint8_t(i + 1);
    return o;
}

std::vector<uint8_t> build_ok(const Smb2NegotiateOptions &o)
{
    auto b = build_smb2_negotiate(o);
    EXPECT_TRUE(b.ok());
    return b.ok() ? *b : std::vector<uint8_t>{};
}

std::vector<uint16_t> ids(const smb2_id_list &l)
{
    std::vector<uint16_t> v;
    for (uint16_t i = 0; i < l.count; i++)
        v.push_back(smb2_id_list_get(&l, i));
    return v;
}

TEST(ClientNegotiateRequest, AllContextsParseAsTheServerSeesThem)
{
    Smb2NegotiateOptions o = options_311();
    o.posix = true;
    auto b = build_ok(o);
    smb2_negotiate_req req;
    ASSERT_PROTO_ERR(smb2_negotiate_req_parse(b.data(), b.size(), &req),
                     SMBD_E_OK);
    EXPECT_EQ(req.hdr.message_id, 0u);
    EXPECT_EQ(req.hdr.command, SMB2_NEGOTIATE);
    EXPECT_EQ(req.security_mode, SMB2_NEGOTIATE_SIGNING_ENABLED);
    EXPECT_EQ(req.capabilities, o.capabilities);
    EXPECT_EQ(0, std::memcmp(req.client_guid, o.client_guid.data(), 16));
    EXPECT_EQ(ids(req.dialects), o.dialects);
    EXPECT_EQ(req.context_count, 4);
    EXPECT_EQ(ids(req.preauth_hashes),
              std::vector<uint16_t>{SMB2_PREAUTH_INTEGRITY_SHA512});
    EXPECT_EQ(ids(req.ciphers), o.ciphers);
    EXPECT_EQ(ids(req.signing_algorithms), o.signing_algorithms);
    EXPECT_TRUE(req.posix);
    EXPECT_FALSE(req.rdma_transforms.present);
}

TEST(ClientNegotiateRequest, WithoutSmb311NoContexts)
{
    Smb2NegotiateOptions o = options_311();
    o.dialects = {SMB2_DIALECT_300, SMB2_DIALECT_302};
    auto b = build_ok(o);
    ASSERT_EQ(b.size(), 64u + 36 + 4);
    // ClientStartTime (where 3.1.1 has the context offset and count) is 0
    for (size_t i = 64 + 28; i < 64 + 36; i++)
        EXPECT_EQ(b[i], 0) << "byte " << i;
    smb2_negotiate_req req;
    ASSERT_PROTO_ERR(smb2_negotiate_req_parse(b.data(), b.size(), &req),
                     SMBD_E_OK);
    EXPECT_EQ(ids(req.dialects), o.dialects);
    EXPECT_FALSE(req.preauth_hashes.present);
}

// The contexts start at the first 8-aligned offset after the dialect array,
// counted from the SMB2 header: 4 dialect counts give every padding.
TEST(ClientNegotiateRequest, ContextOffsetAlignedAfterDialects)
{
    const std::vector<std::vector<uint16_t>> lists = {
        {SMB2_DIALECT_311},
        {SMB2_DIALECT_302, SMB2_DIALECT_311},
        {SMB2_DIALECT_300, SMB2_DIALECT_302, SMB2_DIALECT_311},
        {SMB2_DIALECT_210, SMB2_DIALECT_300, SMB2_DIALECT_302,
         SMB2_DIALECT_311},
    };
    for (const auto &l : lists) {
        Smb2NegotiateOptions o = options_311();
        o.dialects = l;
        auto b = build_ok(o);
        uint32_t off = smbd_get_le32(&b[64 + 28]);
        EXPECT_EQ(off, (100 + 2 * l.size() + 7) / 8 * 8)
            << l.size() << " dialects";
        smb2_negotiate_req req;
        EXPECT_PROTO_ERR(smb2_negotiate_req_parse(b.data(), b.size(), &req),
                         SMBD_E_OK);
    }
}

// Byte by byte for one dialect and the preauth context only.
TEST(ClientNegotiateRequest, ExactBytes)
{
    Smb2NegotiateOptions o = options_311();
    o.dialects = {SMB2_DIALECT_311};
    o.ciphers.clear();
    o.signing_algorithms.clear();
    o.capabilities = SMB2_GLOBAL_CAP_MULTI_CHANNEL;
    Bytes w;
    w.u8(0xfe).u8('S').u8('M').u8('B').le16(64).le16(0).le32(0);
    w.le16(SMB2_NEGOTIATE).le16(1).le32(0).le32(0).le64(0);
    w.le32(0xFEFF).le32(0).le64(0).zeros(16);
    w.le16(36).le16(1).le16(SMB2_NEGOTIATE_SIGNING_ENABLED).le16(0);
    w.le32(SMB2_GLOBAL_CAP_MULTI_CHANNEL).raw(o.client_guid);
    w.le32(104).le16(1).le16(0);
    w.le16(SMB2_DIALECT_311).pad8();
    w.le16(SMB2_PREAUTH_INTEGRITY_CAPABILITIES).le16(38).le32(0);
    w.le16(1).le16(32).le16(SMB2_PREAUTH_INTEGRITY_SHA512).raw(o.salt);
    EXPECT_TRUE(SameBytes(build_ok(o), w.b));
}

TEST(ClientNegotiateRequest, NoDialectIsAnError)
{
    Smb2NegotiateOptions o;
    o.dialects.clear();
    auto b = build_smb2_negotiate(o);
    ASSERT_FALSE(b.ok());
    EXPECT_EQ(b.error().code, make_error_code(Errc::invalid_argument));
}

TEST(ClientDialect, ParsesBothSpellings)
{
    EXPECT_EQ(parse_dialect("0311"), SMB2_DIALECT_311);
    EXPECT_EQ(parse_dialect("3.0.2"), SMB2_DIALECT_302);
    EXPECT_EQ(parse_dialect("0300"), SMB2_DIALECT_300);
    EXPECT_FALSE(parse_dialect("0312").has_value());
    EXPECT_FALSE(parse_dialect("").has_value());
    EXPECT_EQ(dialect_text(SMB2_DIALECT_311), "3.1.1");
}

// What the driver answers, built by the protocol core from a policy.
struct ServerAnswer {
    std::vector<uint8_t> bytes;
    smb2_negotiated neg{};
};

const uint8_t kBlob[] = {0x60, 0x28, 0x06, 0x06, 0x2b,
                         0x06, 0x01, 0x05, 0x05, 0x02};

ServerAnswer server_answer(const std::vector<uint8_t> &request, bool posix)
{
    smb2_negotiate_policy pol{};
    for (int i = 0; i < 16; i++)
        pol.server_guid[i] = uint8_t(0x30 + i);
    pol.capabilities = SMB2_GLOBAL_CAP_DFS | SMB2_GLOBAL_CAP_LARGE_MTU |
                       SMB2_GLOBAL_CAP_MULTI_CHANNEL |
                       SMB2_GLOBAL_CAP_ENCRYPTION;
    pol.security_mode = SMB2_NEGOTIATE_SIGNING_ENABLED;
    pol.min_dialect = SMB2_DIALECT_300;
    pol.max_dialect = SMB2_DIALECT_311;
    pol.max_transact_size = pol.max_read_size = pol.max_write_size = 8 << 20;
    pol.ciphers[0] = SMB2_ENCRYPTION_AES128_CCM;
    pol.ciphers[1] = SMB2_ENCRYPTION_AES128_GCM;
    pol.cipher_count = 2;
    pol.signing_algorithms[0] = SMB2_SIGNING_AES128_CMAC;
    pol.signing_algorithms[1] = SMB2_SIGNING_HMAC_SHA256;
    pol.signing_algorithm_count = 2;
    pol.posix_extensions = posix;
    pol.sec_blob = kBlob;
    pol.sec_blob_len = sizeof(kBlob);

    smb2_negotiate_req req;
    EXPECT_PROTO_ERR(
        smb2_negotiate_req_parse(request.data(), request.size(), &req),
        SMBD_E_OK);
    ServerAnswer a;
    smb2_negotiate_decide(&pol, &req, &a.neg);
    EXPECT_EQ(a.neg.status, NT_STATUS_SUCCESS);
    uint8_t salt[SMB2_PREAUTH_SALT_SIZE];
    for (int i = 0; i < SMB2_PREAUTH_SALT_SIZE; i++)
        salt[i] = uint8_t(i * 3);
    a.bytes.resize(1024);
    size_t len = 0;
    EXPECT_PROTO_ERR(
        smb2_negotiate_resp_build(&pol, &req, &a.neg, 0x01D9000000000000ull,
                                  salt, a.bytes.data(), a.bytes.size(), &len),
        SMBD_E_OK);
    a.bytes.resize(len);
    return a;
}

TEST(ClientNegotiateResponse, ReadsWhatTheDriverBuilds311)
{
    Smb2NegotiateOptions o = options_311();
    o.posix = true;
    ServerAnswer a = server_answer(build_ok(o), true);
    auto r = parse_smb2_negotiate_response(a.bytes);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->dialect, SMB2_DIALECT_311);
    EXPECT_EQ(r->server_guid[0], 0x30);
    EXPECT_EQ(r->server_guid[15], 0x3f);
    EXPECT_EQ(r->capabilities, a.neg.capabilities);
    EXPECT_EQ(r->security_mode, SMB2_NEGOTIATE_SIGNING_ENABLED);
    EXPECT_EQ(r->max_read_size, a.neg.max_read_size);
    EXPECT_EQ(r->max_write_size, a.neg.max_write_size);
    EXPECT_EQ(r->system_time, 0x01D9000000000000ull);
    EXPECT_EQ(r->security_blob,
              std::vector<uint8_t>(kBlob, kBlob + sizeof(kBlob)));
    EXPECT_EQ(r->context_count, 4);
    EXPECT_EQ(r->preauth_hash, SMB2_PREAUTH_INTEGRITY_SHA512);
    EXPECT_EQ(r->preauth_salt.size(), size_t(SMB2_PREAUTH_SALT_SIZE));
    EXPECT_EQ(r->cipher, SMB2_ENCRYPTION_AES128_CCM);
    EXPECT_EQ(r->signing_algorithm, SMB2_SIGNING_AES128_CMAC);
    EXPECT_TRUE(r->posix);
}

TEST(ClientNegotiateResponse, ReadsWhatTheDriverBuilds302)
{
    Smb2NegotiateOptions o = options_311();
    o.dialects = {SMB2_DIALECT_300, SMB2_DIALECT_302};
    ServerAnswer a = server_answer(build_ok(o), false);
    auto r = parse_smb2_negotiate_response(a.bytes);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->dialect, SMB2_DIALECT_302);
    EXPECT_EQ(r->context_count, 0);
    EXPECT_FALSE(r->preauth_hash.has_value());
    EXPECT_EQ(r->security_blob.size(), sizeof(kBlob));
}

TEST(ClientNegotiateResponse, ErrorStatusNamed)
{
    auto b = build_ok(options_311());
    smb2_hdr h;
    ASSERT_PROTO_ERR(smb2_hdr_parse(b.data(), b.size(), &h), SMBD_E_OK);
    std::vector<uint8_t> err(SMB2_ERROR_RESP_SIZE);
    size_t len;
    ASSERT_PROTO_ERR(smb2_error_resp_build(&h, NT_STATUS_NOT_SUPPORTED,
                                           err.data(), err.size(), &len),
                     SMBD_E_OK);
    auto r = parse_smb2_negotiate_response(err);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, make_error_code(Errc::smb2_status));
    EXPECT_NE(r.error().message.find("STATUS_NOT_SUPPORTED"),
              std::string::npos);
}

// Each malformed response is refused with a protocol error.
TEST(ClientNegotiateResponse, MalformedRefused)
{
    const std::vector<uint8_t> good =
        server_answer(build_ok(options_311()), false).bytes;
    struct Case {
        const char *name;
        size_t offset;
        uint8_t value;
        size_t truncate;
    };
    const Case cases[] = {
        {"protocol id", 0, 0xff, 0},
        {"not a response", 16, 0, 0},
        {"structure size", 64, 64, 0},
        {"security buffer past the end", 64 + 0x3A, 0xff, 0},
        {"context offset unaligned", 64 + 0x3C, 0x99, 0},
        {"truncated body", 0, 0xfe, 100},
        {"contexts cut off", 0, 0xfe, good.size() - 4},
    };
    for (const auto &c : cases) {
        auto b = good;
        b[c.offset] = c.value;
        if (c.truncate)
            b.resize(c.truncate);
        auto r = parse_smb2_negotiate_response(b);
        ASSERT_FALSE(r.ok()) << c.name;
        EXPECT_EQ(r.error().code, make_error_code(Errc::protocol)) << c.name;
    }
}

TEST(ClientNegotiateResponse, Smb311WithoutPreauthRefused)
{
    auto b = server_answer(build_ok(options_311()), false).bytes;
    smbd_put_le16(&b[64 + 6], 0); // NegotiateContextCount
    auto r = parse_smb2_negotiate_response(b);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("preauth"), std::string::npos);
}

// What the driver chooses from the default offer is what was offered.
TEST(ClientNegotiateChoice, TheDriversChoiceWasOffered)
{
    for (auto dialects : {std::vector<uint16_t>{SMB2_DIALECT_311},
                          std::vector<uint16_t>{SMB2_DIALECT_302}}) {
        Smb2NegotiateOptions o = options_311();
        o.dialects = dialects;
        auto r = parse_smb2_negotiate_response(
            server_answer(build_ok(o), false).bytes);
        ASSERT_TRUE(r.ok()) << r.error().message;
        auto st = check_negotiate_choice(o, *r);
        EXPECT_TRUE(st.ok()) << st.error().message;
    }
}

// Each choice outside the offer, or an id MS-SMB2 does not define, is
// refused with a protocol error naming it.
TEST(ClientNegotiateChoice, WhatWasNotOfferedIsRefused)
{
    Smb2NegotiateOptions o = options_311();
    auto parsed =
        parse_smb2_negotiate_response(server_answer(build_ok(o), false).bytes);
    ASSERT_TRUE(parsed.ok()) << parsed.error().message;
    const Smb2NegotiateResponse good = *parsed;
    ASSERT_TRUE(check_negotiate_choice(o, good).ok());

    struct Case {
        const char *name;
        void (*change)(Smb2NegotiateOptions &, Smb2NegotiateResponse &);
        const char *says;
    };
    const Case cases[] = {
        {"dialect 2.1", [](auto &, auto &r) { r.dialect = SMB2_DIALECT_210; },
         "dialect"},
        {"3.0.2 when only 3.1.1 was offered",
         [](auto &o, auto &r) {
             o.dialects = {SMB2_DIALECT_311};
             r.dialect = SMB2_DIALECT_302;
         },
         "dialect"},
        {"preauth hash 2", [](auto &, auto &r) { r.preauth_hash = 2; },
         "preauth"},
        {"cipher not offered",
         [](auto &o, auto &r) {
             o.ciphers = {SMB2_ENCRYPTION_AES128_GCM};
             r.cipher = SMB2_ENCRYPTION_AES256_GCM;
         },
         "cipher"},
        {"cipher when none was offered",
         [](auto &o, auto &r) {
             o.ciphers.clear();
             r.cipher = SMB2_ENCRYPTION_AES128_GCM;
         },
         "cipher"},
        {"unknown cipher, even offered",
         [](auto &o, auto &r) {
             o.ciphers.push_back(7);
             r.cipher = 7;
         },
         "cipher"},
        {"signing algorithm not offered",
         [](auto &o, auto &r) {
             o.signing_algorithms = {SMB2_SIGNING_AES128_CMAC};
             r.signing_algorithm = SMB2_SIGNING_AES128_GMAC;
         },
         "signing"},
        {"signing when none was offered",
         [](auto &o, auto &r) {
             o.signing_algorithms.clear();
             r.signing_algorithm = SMB2_SIGNING_AES128_CMAC;
         },
         "signing"},
        {"unknown signing algorithm, even offered",
         [](auto &o, auto &r) {
             o.signing_algorithms.push_back(3);
             r.signing_algorithm = 3;
         },
         "signing"},
    };
    for (const Case &c : cases) {
        Smb2NegotiateOptions offer = o;
        Smb2NegotiateResponse resp = good;
        c.change(offer, resp);
        auto st = check_negotiate_choice(offer, resp);
        ASSERT_FALSE(st.ok()) << c.name;
        EXPECT_EQ(st.error().code, make_error_code(Errc::protocol)) << c.name;
        EXPECT_NE(st.error().message.find(c.says), std::string::npos)
            << c.name << ": " << st.error().message;
    }

    // no cipher in common is an answer, not a choice
    Smb2NegotiateResponse none = good;
    none.cipher = 0;
    EXPECT_TRUE(check_negotiate_choice(o, none).ok());
}

} // namespace
