// NTLMSSP against MS-NLMP's published NTLMv2 example (section 4.2.4) and a
// Windows client's exchange with a server (the blog's SMB 3.1.1 example),
// and the CHALLENGE_MESSAGE parser on hostile input.
#include <gtest/gtest.h>

#include <cstring>
#include <type_traits>

#include "ntlmssp.h"
#include "smb2sec_vectors.h"
#include "spnego.h"
#include "wire_bytes.h"

using namespace smbd::smb2sec;
using namespace smbd::smb2sec::ntlm;
using smb2sec_test::hex;

namespace {

std::vector<uint8_t> vec(ByteView v) { return {v.begin(), v.end()}; }

// MS-NLMP 4.2.1 and 4.2.4: User "User", domain "Domain", password
// "Password", ServerChallenge 0123456789abcdef, ClientChallenge aa..aa,
// Time 0, RandomSessionKey 55..55, workstation "COMPUTER".
const std::array<uint8_t, 8> kServerChallenge = {0x01, 0x23, 0x45, 0x67,
                                                 0x89, 0xab, 0xcd, 0xef};
const std::array<uint8_t, 8> kClientChallenge = {0xaa, 0xaa, 0xaa, 0xaa,
                                                 0xaa, 0xaa, 0xaa, 0xaa};
// MS-NLMP 4.2.4: the AV pairs MsvAvNbDomainName "Domain" and
// MsvAvNbComputerName "Server", then MsvAvEOL.
const auto kSpecAvPairs = hex("02000c0044006f006d00610069006e00"
                              "01000c00530065007200760065007200"
                              "00000000");
// MS-NLMP 4.2.4.3: the CHALLENGE_MESSAGE.
const auto kSpecChallenge =
    hex("4e544c4d53535000020000000c000c003800000033828ae2"
        "0123456789abcdef00000000000000002400240044000000"
        "060070170000000f530065007200760065007200"
        "02000c0044006f006d00610069006e00"
        "01000c0053006500720076006500720000000000");
// MS-NLMP 4.2.4.3: the AUTHENTICATE_MESSAGE (flags e2888235, version
// 5.1.2600, no MIC).
const auto kSpecAuthenticate =
    hex("4e544c4d5353500003000000180018006c00000054005400840000000c000c00"
        "480000000800080054000000100010005c00000010001000d8000000358288e2"
        "0501280a0000000f44006f006d00610069006e00550073006500720043004f00"
        "4d005000550054004500520086c35097ac9cec102554764a57cccc19aaaaaaaa"
        "aaaaaaaa68cd0ab851e51c96aabc927bebef6a1c010100000000000000000000"
        "00000000aaaaaaaaaaaaaaaa0000000002000c0044006f006d00610069006e00"
        "01000c005300650072007600650072000000000000000000c5dad2544fc97990"
        "94ce1ce90bc9d03e");

ClientConfig spec_config()
{
    ClientConfig c;
    c.user = "User";
    c.domain = "Domain";
    c.password = "Password";
    c.workstation = "COMPUTER";
    c.flags = 0xe2888235;
    c.version = {5, 1, 0x28, 0x0a, 0, 0, 0, 15};
    return c;
}

ClientNonces spec_nonces()
{
    ClientNonces n;
    n.client_challenge = kClientChallenge;
    n.random_session_key.fill(0x55);
    n.filetime = 0;
    return n;
}

TEST(Ntlmssp, Ntowfv2IsTheSpecResponseKey)
{
    // MS-NLMP 4.2.4.1.1
    auto k = ntowfv2("Password", "User", "Domain");
    ASSERT_TRUE(k) << k.error().message;
    EXPECT_EQ(vec(*k), hex("0c868a403bfd7a93a3001ef22ef02e3f"));
    // the user name is uppercased, the domain is not
    EXPECT_EQ(vec(*ntowfv2("Password", "USER", "Domain")), vec(*k));
    EXPECT_NE(vec(*ntowfv2("Password", "User", "DOMAIN")), vec(*k));
}

TEST(Ntlmssp, ResponsesAreTheSpecResponses)
{
    auto k = ntowfv2("Password", "User", "Domain");
    ASSERT_TRUE(k);
    auto r = ntlmv2_responses(*k, kServerChallenge, kClientChallenge, 0,
                              kSpecAvPairs);
    // MS-NLMP 4.2.4.1.2 SessionBaseKey
    EXPECT_EQ(vec(r.session_base_key), hex("8de40ccadbc14a82f15cb0ad0de95ca3"));
    // MS-NLMP 4.2.4.2.1 LMv2 response
    EXPECT_EQ(vec(r.lm),
              hex("86c35097ac9cec102554764a57cccc19aaaaaaaaaaaaaaaa"));
    // MS-NLMP 4.2.4.2.2 NTProofStr, then temp (4.2.4.1.3)
    EXPECT_EQ(r.nt, hex("68cd0ab851e51c96aabc927bebef6a1c"
                        "01010000000000000000000000000000aaaaaaaaaaaaaaaa"
                        "00000000"
                        "02000c0044006f006d00610069006e00"
                        "01000c00530065007200760065007200"
                        "0000000000000000"));
}

TEST(Ntlmssp, AuthenticateIsTheSpecMessage)
{
    // Built from the spec's CHALLENGE it is the spec's AUTHENTICATE byte
    // for byte: NTLMv2 responses, key exchange (4.2.4.2.3: the encrypted
    // session key c5dad254...), payload order, no MIC without a server time.
    auto a =
        build_authenticate(spec_config(), {}, kSpecChallenge, spec_nonces());
    ASSERT_TRUE(a) << a.error().message;
    EXPECT_TRUE(SameBytes(a->message, kSpecAuthenticate));
    EXPECT_EQ(a->flags, 0xe2888235u);
    EXPECT_FALSE(a->mic);
    Bytes16 key;
    key.fill(0x55);
    EXPECT_EQ(a->exported_session_key, key);
}

TEST(Ntlmssp, WithoutKeyExchangeTheBaseKeyIsExported)
{
    ClientConfig c = spec_config();
    c.flags &= ~NEGOTIATE_KEY_EXCH;
    auto a = build_authenticate(c, {}, kSpecChallenge, spec_nonces());
    ASSERT_TRUE(a) << a.error().message;
    EXPECT_EQ(vec(a->exported_session_key),
              hex("8de40ccadbc14a82f15cb0ad0de95ca3"));
    // EncryptedRandomSessionKeyFields: length 0
    EXPECT_EQ(a->message[52] | a->message[53] << 8, 0);
}

TEST(Ntlmssp, NegotiateIsWhatWindowsSent)
{
    // The NTLMSSP NEGOTIATE inside the blog's first SESSION_SETUP (Windows
    // 8.1: flags e2088297, version 6.3.9600).
    auto buf = smb2sec_test::security_buffer(
        hex(smb2sec_test::blog311::kSessionSetupRequest1), true);
    ClientConfig c;
    c.flags = 0xe2088297;
    c.version = {6, 3, 0x80, 0x25, 0, 0, 0, 15};
    auto neg = build_negotiate(c);
    ASSERT_EQ(neg.size(), 40u);
    EXPECT_EQ(neg, std::vector<uint8_t>(buf.end() - 40, buf.end()));
}

// The NTLMSSP messages of the blog's exchange.
struct BlogMessages {
    std::vector<uint8_t> negotiate, challenge, authenticate;
    std::vector<uint8_t> client_mic, server_mic;
};

BlogMessages blog_messages()
{
    using namespace smb2sec_test;
    BlogMessages m;
    auto init = security_buffer(hex(blog311::kSessionSetupRequest1), true);
    m.negotiate.assign(init.end() - 40, init.end());
    auto r1 = spnego::parse_neg_token_resp(
        security_buffer(hex(blog311::kSessionSetupResponse1), false));
    auto q2 = spnego::parse_neg_token_resp(
        security_buffer(hex(blog311::kSessionSetupRequest2), true));
    auto r2 = spnego::parse_neg_token_resp(
        security_buffer(hex(blog311::kSessionSetupResponse2), false));
    EXPECT_TRUE(r1 && q2 && r2);
    m.challenge = r1->response_token;
    m.authenticate = q2->response_token;
    m.client_mic = q2->mech_list_mic;
    m.server_mic = r2->mech_list_mic;
    return m;
}

TEST(Ntlmssp, MicIsTheOneWindowsSent)
{
    // The MIC of the blog's AUTHENTICATE (at offset 72), under the session
    // key the blog gives.
    BlogMessages m = blog_messages();
    Bytes16 key;
    auto k = hex(smb2sec_test::blog311::kSessionKey);
    std::copy(k.begin(), k.end(), key.begin());
    auto mic = compute_mic(key, m.negotiate, m.challenge, m.authenticate);
    ASSERT_TRUE(mic);
    EXPECT_EQ(vec(*mic), hex("ECAC77A5F385A8BF9C38C706EEEDDCD3"));
    EXPECT_EQ(std::vector<uint8_t>(m.authenticate.begin() + MIC_OFFSET,
                                   m.authenticate.begin() + MIC_OFFSET + 16),
              vec(*mic));
}

TEST(Ntlmssp, MechListMicsAreTheOnesWindowsAndTheServerSent)
{
    // The mechListMIC each side sent in the blog's exchange: NTLMSSP
    // signatures (MS-NLMP 3.4.4.2) over the MechTypeList with sequence
    // number 0, sealed with RC4 under key exchange.
    BlogMessages m = blog_messages();
    Bytes16 key;
    auto k = hex(smb2sec_test::blog311::kSessionKey);
    std::copy(k.begin(), k.end(), key.begin());
    Session s(key, 0xe2888215);
    auto types = spnego::ntlmssp_mech_types();
    EXPECT_EQ(vec(s.sign(types)), m.client_mic);
    EXPECT_TRUE(s.verify(types, m.server_mic));
}

// A copy would sign again with the keystream and sequence number the
// original already used.
static_assert(!std::is_copy_constructible_v<Session> &&
              !std::is_copy_assignable_v<Session>);
static_assert(std::is_move_constructible_v<Session>);

TEST(Ntlmssp, ForgedServerMechListMicFails)
{
    BlogMessages m = blog_messages();
    Bytes16 key;
    auto k = hex(smb2sec_test::blog311::kSessionKey);
    std::copy(k.begin(), k.end(), key.begin());
    m.server_mic[5] ^= 1;
    Session s(key, 0xe2888215);
    auto v = s.verify(spnego::ntlmssp_mech_types(), m.server_mic);
    ASSERT_FALSE(v);
    EXPECT_EQ(v.error().code, Errc::mic);
}

TEST(Ntlmssp, ServerTimeBringsMicAndFlagsAndZeroLm)
{
    // The blog's CHALLENGE has MsvAvTimestamp: Windows' answer carries
    // MsvAvFlags MIC_PRESENT, a MIC over the three messages and Z(24) as
    // the LM response, and reuses the server's time in the blob.
    BlogMessages m = blog_messages();
    ClientConfig c = spec_config();
    c.flags = CLIENT_FLAGS;
    c.target_spn = "cifs/SUT311";
    auto neg = build_negotiate(c);
    auto a = build_authenticate(c, neg, m.challenge, spec_nonces());
    ASSERT_TRUE(a) << a.error().message;
    EXPECT_TRUE(a->mic);
    const auto &msg = a->message;
    auto mic = compute_mic(a->exported_session_key, neg, m.challenge, msg);
    EXPECT_EQ(std::vector<uint8_t>(msg.begin() + MIC_OFFSET,
                                   msg.begin() + MIC_OFFSET + 16),
              vec(*mic));
    size_t lm_len = msg[12] | msg[13] << 8;
    size_t lm_off = msg[16] | msg[17] << 8;
    ASSERT_EQ(lm_len, 24u);
    EXPECT_EQ(std::vector<uint8_t>(msg.begin() + long(lm_off),
                                   msg.begin() + long(lm_off + 24)),
              std::vector<uint8_t>(24));
    // the blob: 16-byte proof, 28 bytes of fixed fields, then the pairs
    size_t nt_len = msg[20] | msg[21] << 8;
    size_t nt_off = msg[24] | msg[25] << 8;
    std::vector<uint8_t> nt(msg.begin() + long(nt_off),
                            msg.begin() + long(nt_off + nt_len));
    auto chal = parse_challenge(m.challenge);
    ASSERT_TRUE(chal);
    uint64_t t = 0;
    for (int i = 7; i >= 0; i--)
        t = t << 8 | nt[24 + size_t(i)];
    EXPECT_EQ(t, *chal->timestamp);
    auto flags = hex("0600 0400 02000000");
    auto spn = hex("0900 1600 63006900660073002f00530055005400330031003100");
    EXPECT_NE(std::search(nt.begin(), nt.end(), flags.begin(), flags.end()),
              nt.end());
    EXPECT_NE(std::search(nt.begin(), nt.end(), spn.begin(), spn.end()),
              nt.end());
    // the server's pairs first and in order, as Samba checks
    std::vector<uint8_t> server_pairs;
    for (const AvPair &p : chal->target_info) {
        server_pairs.push_back(uint8_t(p.id));
        server_pairs.push_back(uint8_t(p.id >> 8));
        server_pairs.push_back(uint8_t(p.value.size()));
        server_pairs.push_back(uint8_t(p.value.size() >> 8));
        server_pairs.insert(server_pairs.end(), p.value.begin(), p.value.end());
    }
    EXPECT_TRUE(
        std::equal(server_pairs.begin(), server_pairs.end(), nt.begin() + 44));
    EXPECT_EQ(a->flags, 0xe2888215u);
}

TEST(Ntlmssp, ChallengeParsesTheSpecMessage)
{
    auto c = parse_challenge(kSpecChallenge);
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(c->flags, 0xe28a8233u);
    EXPECT_EQ(c->server_challenge, kServerChallenge);
    EXPECT_EQ(c->target_name, hex("530065007200760065007200"));
    ASSERT_EQ(c->target_info.size(), 2u);
    EXPECT_EQ(c->target_info[0].id, AV_NB_DOMAIN_NAME);
    EXPECT_EQ(c->target_info[1].id, AV_NB_COMPUTER_NAME);
    EXPECT_FALSE(c->timestamp);
}

// One hostile CHALLENGE_MESSAGE: the spec's with a change.
struct Hostile {
    const char *name;
    void (*mutate)(std::vector<uint8_t> &);
    Errc want;
};

void set16(std::vector<uint8_t> &m, size_t at, uint16_t v)
{
    m[at] = uint8_t(v);
    m[at + 1] = uint8_t(v >> 8);
}
void set32(std::vector<uint8_t> &m, size_t at, uint32_t v)
{
    set16(m, at, uint16_t(v));
    set16(m, at + 2, uint16_t(v >> 16));
}

const Hostile kHostile[] = {
    {"shorter than the fixed part", [](auto &m) { m.resize(31); },
     Errc::truncated},
    {"target info fields cut off", [](auto &m) { m.resize(44); },
     Errc::truncated},
    {"not NTLMSSP", [](auto &m) { m[0] = 'X'; }, Errc::signature},
    {"an AUTHENTICATE", [](auto &m) { set32(m, 8, 3); }, Errc::message_type},
    {"no Unicode", [](auto &m) { m[20] &= 0xfe; }, Errc::flags},
    {"target name past the end", [](auto &m) { set16(m, 12, 0x100); },
     Errc::field_range},
    {"target info offset 4 GiB", [](auto &m) { set32(m, 44, 0xffffffff); },
     Errc::field_range},
    {"target info one byte past the end",
     [](auto &m) { set16(m, 40, uint16_t(m.size() - 0x44 + 1)); },
     Errc::field_range},
    {"target info inside the header", [](auto &m) { set32(m, 44, 8); },
     Errc::field_range},
    {"no MsvAvEOL",
     [](auto &m) {
         m.resize(m.size() - 4);
         set16(m, 40, 32);
     },
     Errc::av_pairs},
    {"AV pair longer than the info", [](auto &m) { set16(m, 0x44 + 2, 0x200); },
     Errc::av_pairs},
    {"MsvAvEOL with a length: the computer name's pair, renamed",
     [](auto &m) { set16(m, 0x44 + 16, AV_EOL); }, Errc::av_pairs},
    {"timestamp of 4 bytes",
     [](auto &m) {
         set16(m, 0x44, AV_TIMESTAMP);
         set16(m, 0x44 + 2, 4);
         set16(m, 0x44 + 8, AV_EOL);
         set16(m, 0x44 + 10, 0);
     },
     Errc::av_pairs},
};

TEST(Ntlmssp, HostileChallengesFailWithTheirRule)
{
    for (const Hostile &h : kHostile) {
        auto m = kSpecChallenge;
        h.mutate(m);
        auto c = parse_challenge(m);
        ASSERT_FALSE(c) << h.name;
        EXPECT_EQ(c.error().code, h.want)
            << h.name << ": " << c.error().code.message();
        EXPECT_FALSE(c.error().message.empty()) << h.name;
    }
}

TEST(Ntlmssp, EveryTruncationFails)
{
    for (size_t n = 0; n < kSpecChallenge.size(); n++) {
        std::vector<uint8_t> m(kSpecChallenge.begin(),
                               kSpecChallenge.begin() + long(n));
        EXPECT_FALSE(parse_challenge(m)) << n << " bytes";
    }
}

TEST(Ntlmssp, NoExtendedSessionSecurityIsRefused)
{
    auto m = kSpecChallenge;
    set32(m, 20, 0xe2828233); // without 0x00080000
    auto a = build_authenticate(spec_config(), {}, m, spec_nonces());
    ASSERT_FALSE(a);
    EXPECT_EQ(a.error().code, Errc::flags);
}

// The AV pairs of the NTLMv2 blob in @authenticate's NtChallengeResponse,
// EOL excluded.
std::vector<AvPair> blob_pairs(const std::vector<uint8_t> &authenticate)
{
    size_t nt_len = authenticate[20] | authenticate[21] << 8;
    size_t nt_off = authenticate[24] | authenticate[25] << 8;
    // NTProofStr (16), then RespType to the Z(4) after ClientChallenge (28)
    std::vector<AvPair> pairs;
    for (size_t at = nt_off + 44; at + 4 <= nt_off + nt_len;) {
        uint16_t id = uint16_t(authenticate[at] | authenticate[at + 1] << 8);
        size_t len = authenticate[at + 2] | authenticate[at + 3] << 8;
        if (id == AV_EOL)
            break;
        pairs.push_back({id,
                         {authenticate.begin() + long(at + 4),
                          authenticate.begin() + long(at + 4 + len)}});
        at += 4 + len;
    }
    return pairs;
}

TEST(Ntlmssp, ServerTargetNameAndChannelBindingsAreReplaced)
{
    // The spec CHALLENGE with its two pairs renamed: the server sends
    // MsvAvTargetName and MsvAvChannelBindings of its own. The client's
    // take their place, once each.
    auto m = kSpecChallenge;
    set16(m, 0x44, AV_TARGET_NAME);
    set16(m, 0x44 + 16, AV_CHANNEL_BINDINGS);
    ClientConfig c = spec_config();
    c.target_spn = "cifs/server";
    auto a = build_authenticate(c, build_negotiate(c), m, spec_nonces());
    ASSERT_TRUE(a) << a.error().message;
    auto pairs = blob_pairs(a->message);
    ASSERT_EQ(pairs.size(), 2u);
    EXPECT_EQ(pairs[0].id, AV_TARGET_NAME);
    EXPECT_EQ(pairs[0].value, *utf16le("cifs/server"));
    EXPECT_EQ(pairs[1].id, AV_CHANNEL_BINDINGS);
    EXPECT_EQ(pairs[1].value, std::vector<uint8_t>(16));

    // without an SPN the client has none of its own: the server's stay
    c.target_spn.clear();
    a = build_authenticate(c, build_negotiate(c), m, spec_nonces());
    ASSERT_TRUE(a) << a.error().message;
    pairs = blob_pairs(a->message);
    ASSERT_EQ(pairs.size(), 2u);
    EXPECT_EQ(pairs[0].value, hex("44006f006d00610069006e00"));
    EXPECT_EQ(pairs[1].value, hex("530065007200760065007200"));
}

TEST(Ntlmssp, MicNeedsTheNegotiateMessage)
{
    // The blog's CHALLENGE has the server's time, so a MIC over NEGOTIATE,
    // CHALLENGE and AUTHENTICATE is due: without the NEGOTIATE it would be
    // a MIC the server cannot verify.
    BlogMessages m = blog_messages();
    ClientConfig c = spec_config();
    auto a = build_authenticate(c, {}, m.challenge, spec_nonces());
    ASSERT_FALSE(a);
    EXPECT_EQ(a.error().code, Errc::invalid_argument);
    EXPECT_TRUE(
        build_authenticate(c, build_negotiate(c), m.challenge, spec_nonces()));
}

TEST(Ntlmssp, InvalidUtf8Credentials)
{
    ClientConfig c = spec_config();
    c.password = "\xc3";
    auto a = build_authenticate(c, {}, kSpecChallenge, spec_nonces());
    ASSERT_FALSE(a);
    EXPECT_EQ(a.error().code, Errc::invalid_argument);
}

TEST(Ntlmssp, Utf16le)
{
    EXPECT_EQ(*utf16le("A\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"),
              hex("4100 e900 ac20 3dd8 00de"));
    EXPECT_FALSE(utf16le("\xc0\x80"));     // overlong
    EXPECT_FALSE(utf16le("\xed\xa0\x80")); // a surrogate
    EXPECT_FALSE(utf16le("\x80"));
}

} // namespace
