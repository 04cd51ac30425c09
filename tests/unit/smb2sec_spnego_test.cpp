// SPNEGO as Windows sends it (the blog's SMB 3.1.1 exchange, byte for
// byte), the client's run of the exchange against the server's published
// answers, and the DER reader on hostile tokens.
#include <gtest/gtest.h>

#include "der.h"
#include "smb2sec_vectors.h"
#include "spnego.h"

using namespace smbd::smb2sec;
using namespace smbd::smb2sec::spnego;
using smb2sec_test::hex;
using smb2sec_test::security_buffer;
namespace blog = smb2sec_test::blog311;

namespace {

std::vector<uint8_t> buffer(std::string_view pdu, bool request)
{
    return security_buffer(hex(pdu), request);
}

TEST(Spnego, NegTokenInitIsWhatWindowsSent)
{
    auto want = buffer(blog::kSessionSetupRequest1, true);
    std::vector<uint8_t> negotiate(want.end() - 40, want.end());
    EXPECT_EQ(neg_token_init(negotiate), want);
}

TEST(Spnego, NegTokenRespIsWhatWindowsSent)
{
    auto want = buffer(blog::kSessionSetupRequest2, true);
    auto parsed = parse_neg_token_resp(want);
    ASSERT_TRUE(parsed) << parsed.error().message;
    EXPECT_EQ(parsed->state, NegState::accept_incomplete);
    EXPECT_EQ(parsed->response_token.size(), 0x1a6u);
    EXPECT_EQ(neg_token_resp(parsed->response_token, parsed->mech_list_mic),
              want);
}

TEST(Spnego, ServerAnswersParse)
{
    auto first =
        parse_neg_token_resp(buffer(blog::kSessionSetupResponse1, false));
    ASSERT_TRUE(first) << first.error().message;
    EXPECT_EQ(first->state, NegState::accept_incomplete);
    EXPECT_EQ(
        first->supported_mech,
        std::vector<uint8_t>(std::begin(OID_NTLMSSP), std::end(OID_NTLMSSP)));
    ASSERT_GE(first->response_token.size(), 8u);
    EXPECT_EQ(first->response_token[8], 2) << "a CHALLENGE_MESSAGE";
    EXPECT_TRUE(first->mech_list_mic.empty());

    auto last =
        parse_neg_token_resp(buffer(blog::kSessionSetupResponse2, false));
    ASSERT_TRUE(last) << last.error().message;
    EXPECT_EQ(last->state, NegState::accept_completed);
    EXPECT_TRUE(last->response_token.empty());
    EXPECT_EQ(last->mech_list_mic, hex("010000003B453CDC3524164200000000"));
}

// The blog's client: with the blog's session key as the random session
// key (key exchange exports it) the exchange runs as it ran against that
// server, whatever the password.
ntlm::ClientConfig blog_config()
{
    ntlm::ClientConfig cfg;
    cfg.user = "administrator";
    cfg.domain = "SUT311";
    cfg.password = "not the one of the example";
    cfg.workstation = "DRIVER311";
    cfg.flags = 0xe2088297;
    cfg.version = {6, 3, 0x80, 0x25, 0, 0, 0, 15};
    cfg.target_spn = "cifs/SUT311";
    return cfg;
}

ntlm::ClientNonces blog_nonces()
{
    ntlm::ClientNonces nonces;
    auto key = hex(blog::kSessionKey);
    std::copy(key.begin(), key.end(), nonces.random_session_key.begin());
    return nonces;
}

TEST(Spnego, ClientRunsTheWindowsExchange)
{
    NtlmClient client(blog_config());
    EXPECT_EQ(client.start(), buffer(blog::kSessionSetupRequest1, true));

    auto answer =
        client.step(buffer(blog::kSessionSetupResponse1, false), blog_nonces());
    ASSERT_TRUE(answer) << answer.error().message;
    auto ours = parse_neg_token_resp(*answer);
    auto windows =
        parse_neg_token_resp(buffer(blog::kSessionSetupRequest2, true));
    ASSERT_TRUE(ours && windows);
    EXPECT_EQ(ours->state, NegState::accept_incomplete);
    // the mechListMIC Windows sent
    EXPECT_EQ(ours->mech_list_mic, windows->mech_list_mic);
    // and the flags of Windows' AUTHENTICATE
    EXPECT_EQ(std::vector<uint8_t>(ours->response_token.begin() + 60,
                                   ours->response_token.begin() + 64),
              hex("158288e2"));
    EXPECT_EQ(std::vector<uint8_t>(client.session_key().begin(),
                                   client.session_key().end()),
              hex(blog::kSessionKey));

    EXPECT_TRUE(client.finish(buffer(blog::kSessionSetupResponse2, false)));
}

TEST(Spnego, ForgedFinalMechListMicFails)
{
    NtlmClient client(blog_config());
    client.start();
    ASSERT_TRUE(client.step(buffer(blog::kSessionSetupResponse1, false),
                            blog_nonces()));
    auto last = buffer(blog::kSessionSetupResponse2, false);
    last[last.size() - 16 + 5] ^= 1; // in the checksum
    auto s = client.finish(last);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code, Errc::mic);
}

TEST(Spnego, RequestMicIsAnswered)
{
    // the server's first answer with negState request-mic instead
    auto first = buffer(blog::kSessionSetupResponse1, false);
    ASSERT_EQ(first[10], uint8_t(NegState::accept_incomplete));
    first[10] = uint8_t(NegState::request_mic);
    NtlmClient client(blog_config());
    client.start();
    auto answer = client.step(first, blog_nonces());
    ASSERT_TRUE(answer) << answer.error().message;
    auto ours = parse_neg_token_resp(*answer);
    ASSERT_TRUE(ours);
    EXPECT_EQ(ours->mech_list_mic.size(), 16u);
}

TEST(Spnego, RequestMicWithoutSigningFails)
{
    // without NEGOTIATE_SIGN there is no mechListMIC to answer request-mic
    // with; accept-incomplete goes on without one
    ntlm::ClientConfig cfg = blog_config();
    cfg.flags &= ~ntlm::NEGOTIATE_SIGN;
    auto first = buffer(blog::kSessionSetupResponse1, false);
    {
        NtlmClient client(cfg);
        client.start();
        auto answer = client.step(first, blog_nonces());
        ASSERT_TRUE(answer) << answer.error().message;
        auto ours = parse_neg_token_resp(*answer);
        ASSERT_TRUE(ours);
        EXPECT_TRUE(ours->mech_list_mic.empty());
    }
    first[10] = uint8_t(NegState::request_mic);
    NtlmClient client(cfg);
    client.start();
    auto answer = client.step(first, blog_nonces());
    ASSERT_FALSE(answer);
    EXPECT_EQ(answer.error().code, Errc::flags);
}

TEST(Spnego, RejectIsAnError)
{
    NtlmClient client(ntlm::ClientConfig{});
    client.start();
    // NegTokenResp { negState reject }
    auto s = client.finish(hex("a1073005a0030a0102"));
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code, Errc::spnego);
    auto r = client.step(hex("a1073005a0030a0102"), {});
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, Errc::spnego);
}

TEST(Spnego, OtherMechanismIsRefused)
{
    // accept-incomplete with Kerberos (1.2.840.113554.1.2.2) chosen
    NtlmClient client(ntlm::ClientConfig{});
    client.start();
    auto r =
        client.step(hex("a1143012a0030a0101a10b06092a864886f712010202"), {});
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, Errc::spnego);
}

struct BadToken {
    const char *name;
    const char *hex;
    Errc want;
};

const BadToken kBad[] = {
    {"empty", "", Errc::der},
    {"header only", "a1", Errc::der},
    {"indefinite length", "a180300000000000", Errc::der},
    {"five length bytes", "a1850000000005300300", Errc::der},
    {"length past the end", "a1053003a0", Errc::der},
    {"long length past the end", "a182ffff30", Errc::der},
    {"multi-byte tag", "bf1f00", Errc::der},
    {"bytes after the token", "a1053003a0010000", Errc::der},
    {"a NegTokenInit", "a0023000", Errc::spnego},
    {"not a sequence", "a1023100", Errc::spnego},
    {"fields out of order", "a10d300ba2040402abcda0030a0101", Errc::spnego},
    {"field [4]", "a1063004a4020400", Errc::spnego},
    {"negState 4", "a1073005a0030a0104", Errc::spnego},
    {"negState of two bytes", "a1083006a0040a020001", Errc::spnego},
    {"negState not ENUMERATED", "a1073005a003020101", Errc::spnego},
    {"responseToken cut short", "a1073005a2030405ab", Errc::der},
    {"bytes after negState", "a1093007a0050a01010000", Errc::der},
};

TEST(Spnego, HostileTokensFailWithTheirRule)
{
    for (const BadToken &b : kBad) {
        auto r = parse_neg_token_resp(hex(b.hex));
        ASSERT_FALSE(r) << b.name;
        EXPECT_EQ(r.error().code, b.want)
            << b.name << ": " << r.error().code.message();
    }
}

TEST(Spnego, EveryTruncationOfTheServerAnswerFails)
{
    auto t = buffer(blog::kSessionSetupResponse1, false);
    for (size_t n = 0; n < t.size(); n++)
        EXPECT_FALSE(parse_neg_token_resp({t.data(), n})) << n << " bytes";
}

TEST(Der, LengthsEncodeMinimally)
{
    EXPECT_EQ(der::tlv(0x04, std::vector<uint8_t>(0x7f)).size(), 2u + 0x7f);
    auto l = der::tlv(0x04, std::vector<uint8_t>(0x80));
    EXPECT_EQ(std::vector<uint8_t>(l.begin(), l.begin() + 3), hex("048180"));
    auto ll = der::tlv(0x04, std::vector<uint8_t>(0x1234));
    EXPECT_EQ(std::vector<uint8_t>(ll.begin(), ll.begin() + 4),
              hex("04821234"));
    der::Reader r(ll);
    auto t = r.next();
    ASSERT_TRUE(t);
    EXPECT_EQ(t->content.size(), 0x1234u);
    EXPECT_TRUE(r.empty());
}

} // namespace
