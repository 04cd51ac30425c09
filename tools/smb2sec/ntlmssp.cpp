#include "ntlmssp.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "le.h"

namespace smbd::smb2sec::ntlm {

namespace {

constexpr uint8_t kSignature[8] = {'N', 'T', 'L', 'M', 'S', 'S', 'P', 0};
constexpr uint32_t kNegotiateType = 1;
constexpr uint32_t kChallengeType = 2;
constexpr uint32_t kAuthenticateType = 3;

// CHALLENGE_MESSAGE: through ServerChallenge, then through TargetInfoFields.
constexpr size_t kChallengeMin = 32;
constexpr size_t kChallengeWithInfo = 48;
// NEGOTIATE_MESSAGE with its Version field
constexpr size_t kNegotiateSize = 40;
// AUTHENTICATE_MESSAGE fields and its Version field
constexpr size_t kAuthFixed = 64;
constexpr size_t kAuthVersion = 8;
constexpr size_t kMicSize = 16;

// Flags the server may withhold; whatever else the client asked for it
// states again in the AUTHENTICATE_MESSAGE, as Windows does.
constexpr uint32_t kNegotiable =
    NEGOTIATE_OEM | NEGOTIATE_SIGN | NEGOTIATE_SEAL | NEGOTIATE_LM_KEY |
    NEGOTIATE_ALWAYS_SIGN | NEGOTIATE_EXTENDED_SESSIONSECURITY |
    NEGOTIATE_TARGET_INFO | NEGOTIATE_VERSION | NEGOTIATE_128 |
    NEGOTIATE_KEY_EXCH | NEGOTIATE_56;

// A payload field (Len, MaxLen, Offset) at @at; @fixed_end is where the
// payload may begin.
Result<ByteView> payload_field(ByteView msg, size_t at, size_t fixed_end,
                               const char *name)
{
    uint16_t len = le::get16(msg, at);
    uint32_t off = le::get32(msg, at + 4);
    if (len == 0)
        return ByteView{};
    if (off < fixed_end)
        return make_error(Errc::field_range,
                          std::string(name) + ": offset " +
                              std::to_string(off) + " inside the " +
                              std::to_string(fixed_end) + "-byte fixed part");
    if (off > msg.size() || len > msg.size() - off)
        return make_error(Errc::field_range,
                          std::string(name) + ": " + std::to_string(len) +
                              " bytes at offset " + std::to_string(off) +
                              " run past the end of the " +
                              std::to_string(msg.size()) + "-byte message");
    return msg.subspan(off, len);
}

Result<std::vector<AvPair>> parse_av_pairs(ByteView info)
{
    std::vector<AvPair> pairs;
    size_t at = 0;
    while (true) {
        if (info.size() - at < 4)
            return make_error(Errc::av_pairs, "TargetInfo ends at offset " +
                                                  std::to_string(at) +
                                                  " without MsvAvEOL");
        uint16_t id = le::get16(info, at);
        uint16_t len = le::get16(info, at + 2);
        at += 4;
        if (len > info.size() - at)
            return make_error(Errc::av_pairs,
                              "AV pair " + std::to_string(id) + ": " +
                                  std::to_string(len) + " bytes, " +
                                  std::to_string(info.size() - at) + " left");
        // MsvAvEOL ends the list and has no value (MS-NLMP 2.2.2.1)
        if (id == AV_EOL && len != 0)
            return make_error(Errc::av_pairs,
                              "MsvAvEOL of length " + std::to_string(len));
        if (id == AV_EOL)
            return pairs;
        if ((id == AV_TIMESTAMP && len != 8) || (id == AV_FLAGS && len != 4))
            return make_error(Errc::av_pairs, "AV pair " + std::to_string(id) +
                                                  ": length " +
                                                  std::to_string(len));
        pairs.push_back(AvPair{
            id, {info.begin() + long(at), info.begin() + long(at + len)}});
        at += len;
    }
}

void put_av(std::vector<uint8_t> &out, uint16_t id, ByteView value)
{
    le::put16(out, id);
    le::put16(out, uint16_t(value.size()));
    out.insert(out.end(), value.begin(), value.end());
}

std::string ascii_upper(std::string_view s)
{
    std::string u(s);
    for (char &c : u)
        if (c >= 'a' && c <= 'z')
            c = char(c - 'a' + 'A');
    return u;
}

std::vector<uint8_t> signing_magic(const char *text)
{
    // the constants include their terminating NUL
    return {text, text + std::strlen(text) + 1};
}

Bytes16 seal_key(const Bytes16 &key, uint32_t flags, const char *magic)
{
    size_t n = (flags & NEGOTIATE_128) ? 16 : (flags & NEGOTIATE_56) ? 7 : 5;
    return md5({ByteView(key).first(n), signing_magic(magic)});
}

} // namespace

std::optional<std::vector<uint8_t>> utf16le(std::string_view utf8)
{
    std::vector<uint8_t> out;
    for (size_t i = 0; i < utf8.size();) {
        auto b = uint8_t(utf8[i]);
        size_t n = b < 0x80         ? 1
                   : (b >> 5) == 6  ? 2
                   : (b >> 4) == 14 ? 3
                   : (b >> 3) == 30 ? 4
                                    : 0;
        if (n == 0 || utf8.size() - i < n)
            return std::nullopt;
        uint32_t cp = n == 1 ? b : b & (0x7f >> n);
        for (size_t k = 1; k < n; k++) {
            auto c = uint8_t(utf8[i + k]);
            if ((c & 0xc0) != 0x80)
                return std::nullopt;
            cp = cp << 6 | (c & 0x3f);
        }
        static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < kMin[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return std::nullopt;
        if (cp >= 0x10000) {
            cp -= 0x10000;
            le::put16(out, uint16_t(0xd800 | cp >> 10));
            cp = 0xdc00 | (cp & 0x3ff);
        }
        le::put16(out, uint16_t(cp));
        i += n;
    }
    return out;
}

Result<Challenge> parse_challenge(ByteView msg)
{
    if (msg.size() < kChallengeMin)
        return make_error(Errc::truncated, "CHALLENGE_MESSAGE of " +
                                               std::to_string(msg.size()) +
                                               " bytes, at least 32 needed");
    if (std::memcmp(msg.data(), kSignature, sizeof(kSignature)) != 0)
        return make_error(Errc::signature, "no NTLMSSP signature");
    uint32_t type = le::get32(msg, 8);
    if (type != kChallengeType)
        return make_error(Errc::message_type,
                          "NTLMSSP message type " + std::to_string(type) +
                              ", CHALLENGE_MESSAGE (2) expected");
    Challenge c;
    c.flags = le::get32(msg, 20);
    std::copy_n(msg.begin() + 24, 8, c.server_challenge.begin());
    if (!(c.flags & NEGOTIATE_UNICODE))
        return make_error(Errc::flags, "the server did not grant Unicode");
    bool has_info = c.flags & NEGOTIATE_TARGET_INFO;
    if (has_info && msg.size() < kChallengeWithInfo)
        return make_error(Errc::truncated,
                          "CHALLENGE_MESSAGE with TargetInfo of " +
                              std::to_string(msg.size()) +
                              " bytes, at least 48 needed");
    size_t fixed_end = has_info ? kChallengeWithInfo : kChallengeMin;
    auto name = payload_field(msg, 12, fixed_end, "TargetName");
    if (!name)
        return name.error();
    c.target_name.assign(name->begin(), name->end());
    if (!has_info)
        return c;
    auto info = payload_field(msg, 40, fixed_end, "TargetInfo");
    if (!info)
        return info.error();
    if (info->empty())
        return c;
    auto pairs = parse_av_pairs(*info);
    if (!pairs)
        return pairs.error();
    c.target_info = std::move(*pairs);
    for (const AvPair &p : c.target_info)
        if (p.id == AV_TIMESTAMP)
            c.timestamp = le::get64(p.value, 0);
    return c;
}

std::vector<uint8_t> build_negotiate(const ClientConfig &cfg)
{
    // Windows leaves the domain and workstation fields empty, offsets 0.
    std::vector<uint8_t> m(kSignature, kSignature + sizeof(kSignature));
    le::put32(m, kNegotiateType);
    le::put32(m, cfg.flags);
    m.resize(kNegotiateSize - 8);
    if (cfg.flags & NEGOTIATE_VERSION)
        m.insert(m.end(), cfg.version.begin(), cfg.version.end());
    return m;
}

Result<Bytes16> ntowfv2(std::string_view password, std::string_view user,
                        std::string_view domain)
{
    auto pw = utf16le(password);
    auto ud = utf16le(ascii_upper(user) + std::string(domain));
    if (!pw || !ud)
        return make_error(Errc::invalid_argument,
                          "user, domain or password not UTF-8");
    return hmac_md5(md4(*pw), {*ud});
}

Ntlmv2Responses ntlmv2_responses(const Bytes16 &response_key,
                                 const std::array<uint8_t, 8> &server,
                                 const std::array<uint8_t, 8> &client,
                                 uint64_t filetime, ByteView av_pairs)
{
    // temp (MS-NLMP 3.3.2): RespType, HiRespType, Z(6), Time,
    // ClientChallenge, Z(4), ServerName (the AV pairs), Z(4)
    std::vector<uint8_t> temp = {1, 1, 0, 0, 0, 0, 0, 0};
    le::put64(temp, filetime);
    temp.insert(temp.end(), client.begin(), client.end());
    temp.resize(temp.size() + 4);
    temp.insert(temp.end(), av_pairs.begin(), av_pairs.end());
    temp.resize(temp.size() + 4);

    Ntlmv2Responses r;
    Bytes16 proof = hmac_md5(response_key, {server, temp});
    r.nt.assign(proof.begin(), proof.end());
    r.nt.insert(r.nt.end(), temp.begin(), temp.end());
    Bytes16 lm = hmac_md5(response_key, {server, client});
    std::copy(lm.begin(), lm.end(), r.lm.begin());
    std::copy(client.begin(), client.end(), r.lm.begin() + 16);
    r.session_base_key = hmac_md5(response_key, {proof});
    return r;
}

Result<Authenticate> build_authenticate(const ClientConfig &cfg,
                                        ByteView negotiate, ByteView challenge,
                                        const ClientNonces &nonces)
{
    auto chal = parse_challenge(challenge);
    if (!chal)
        return chal.error();
    if (!(chal->flags & NEGOTIATE_EXTENDED_SESSIONSECURITY))
        return make_error(Errc::flags,
                          "the server did not grant extended session security");
    uint32_t flags = (cfg.flags & ~kNegotiable) |
                     (cfg.flags & chal->flags & kNegotiable) |
                     (chal->flags & NEGOTIATE_TARGET_INFO);

    auto key = ntowfv2(cfg.password, cfg.user, cfg.domain);
    auto domain = utf16le(cfg.domain);
    auto user = utf16le(cfg.user);
    auto workstation = utf16le(cfg.workstation);
    auto spn = utf16le(cfg.target_spn);
    if (!key || !domain || !user || !workstation || !spn)
        return make_error(Errc::invalid_argument, "credentials not UTF-8");

    // The blob echoes the server's pairs first and in order (Samba checks
    // that); with the server's time comes the MIC and its flag (MS-NLMP
    // 3.1.5.1.2). MsvAvChannelBindings and MsvAvTargetName are the
    // client's to state: with an SPN, ours take the place of any the
    // server sent, so that each appears once.
    bool mic = chal->timestamp.has_value();
    if (mic && negotiate.empty())
        return make_error(Errc::invalid_argument,
                          "the server's time calls for a MIC, which covers "
                          "the NEGOTIATE_MESSAGE: none was given");
    std::vector<uint8_t> av;
    bool flagged = false;
    bool own_pairs = !spn->empty();
    bool bindings_put = false, name_put = false;
    auto put_bindings = [&] {
        if (!bindings_put)
            put_av(av, AV_CHANNEL_BINDINGS, Bytes16{});
        bindings_put = true;
    };
    auto put_name = [&] {
        if (!name_put)
            put_av(av, AV_TARGET_NAME, *spn);
        name_put = true;
    };
    for (const AvPair &p : chal->target_info) {
        if (p.id == AV_FLAGS && mic) {
            std::vector<uint8_t> v = p.value;
            le::set32(v, 0, le::get32(v, 0) | AV_FLAG_MIC_PRESENT);
            put_av(av, p.id, v);
            flagged = true;
        }
        else if (p.id == AV_CHANNEL_BINDINGS && own_pairs) {
            put_bindings();
        }
        else if (p.id == AV_TARGET_NAME && own_pairs) {
            put_name();
        }
        else {
            put_av(av, p.id, p.value);
        }
    }
    if (mic && !flagged) {
        std::vector<uint8_t> v;
        le::put32(v, AV_FLAG_MIC_PRESENT);
        put_av(av, AV_FLAGS, v);
    }
    if (own_pairs) {
        put_bindings();
        put_name();
    }
    put_av(av, AV_EOL, {});

    uint64_t time = mic ? *chal->timestamp : nonces.filetime;
    Ntlmv2Responses resp = ntlmv2_responses(*key, chal->server_challenge,
                                            nonces.client_challenge, time, av);
    // With the server's time the LM response is Z(24) (MS-NLMP 3.1.5.1.2).
    std::array<uint8_t, 24> lm{};
    if (!mic)
        lm = resp.lm;

    Authenticate a;
    a.flags = flags;
    a.mic = mic;
    // NTLMv2: KeyExchangeKey is the SessionBaseKey (MS-NLMP 3.4.5.1).
    std::vector<uint8_t> enc_key;
    if (flags & NEGOTIATE_KEY_EXCH) {
        a.exported_session_key = nonces.random_session_key;
        enc_key.assign(a.exported_session_key.begin(),
                       a.exported_session_key.end());
        Rc4(resp.session_base_key).crypt(enc_key);
    }
    else {
        a.exported_session_key = resp.session_base_key;
    }

    // Payload in Windows' order: domain, user, workstation, LM, NT, key.
    const ByteView payload[] = {lm,    resp.nt,      *domain,
                                *user, *workstation, enc_key};
    constexpr size_t kFieldAt[] = {12, 20, 28, 36, 44, 52};
    constexpr size_t kPayloadOrder[] = {2, 3, 4, 0, 1, 5};
    for (const ByteView &p : payload)
        if (p.size() > 0xffff)
            return make_error(
                Errc::av_pairs,
                "a field of " + std::to_string(p.size()) +
                    " bytes does not fit the AUTHENTICATE_MESSAGE");
    std::vector<uint8_t> &m = a.message;
    m.assign(kAuthFixed + kAuthVersion + (mic ? kMicSize : 0), 0);
    std::copy(kSignature, kSignature + sizeof(kSignature), m.begin());
    le::set32(m, 8, kAuthenticateType);
    for (size_t i : kPayloadOrder) {
        le::set16(m, kFieldAt[i], uint16_t(payload[i].size()));
        le::set16(m, kFieldAt[i] + 2, uint16_t(payload[i].size()));
        le::set32(m, kFieldAt[i] + 4, uint32_t(m.size()));
        m.insert(m.end(), payload[i].begin(), payload[i].end());
    }
    le::set32(m, 60, flags);
    if (flags & NEGOTIATE_VERSION)
        std::copy(cfg.version.begin(), cfg.version.end(),
                  m.begin() + kAuthFixed);
    if (mic) {
        auto v = compute_mic(a.exported_session_key, negotiate, challenge, m);
        if (!v)
            return v.error();
        std::copy(v->begin(), v->end(), m.begin() + MIC_OFFSET);
    }
    return a;
}

Result<Bytes16> compute_mic(const Bytes16 &exported_session_key,
                            ByteView negotiate, ByteView challenge,
                            ByteView authenticate)
{
    if (authenticate.size() < MIC_OFFSET + kMicSize)
        return make_error(Errc::truncated,
                          "AUTHENTICATE_MESSAGE without a MIC");
    static constexpr Bytes16 kZero{};
    return hmac_md5(exported_session_key,
                    {negotiate, challenge, authenticate.first(MIC_OFFSET),
                     kZero, authenticate.subspan(MIC_OFFSET + kMicSize)});
}

Session::Session(const Bytes16 &exported_session_key, uint32_t flags)
    : key_exch_(flags & NEGOTIATE_KEY_EXCH),
      client_sign_(md5(
          {exported_session_key,
           signing_magic(
               "session key to client-to-server signing key magic constant")})),
      server_sign_(md5(
          {exported_session_key,
           signing_magic(
               "session key to server-to-client signing key magic constant")})),
      client_seal_(seal_key(
          exported_session_key, flags,
          "session key to client-to-server sealing key magic constant")),
      server_seal_(seal_key(
          exported_session_key, flags,
          "session key to server-to-client sealing key magic constant"))
{
}

Bytes16 Session::mac(const Bytes16 &sign_key, Rc4 &seal, uint32_t seq,
                     ByteView message) const
{
    std::vector<uint8_t> seqnum;
    le::put32(seqnum, seq);
    Bytes16 h = hmac_md5(sign_key, {seqnum, message});
    Bytes16 sig{};
    le::set32(sig, 0, 1);
    std::copy_n(h.begin(), 8, sig.begin() + 4);
    if (key_exch_)
        seal.crypt(std::span(sig).subspan(4, 8));
    le::set32(sig, 12, seq);
    return sig;
}

Bytes16 Session::sign(ByteView message)
{
    return mac(client_sign_, client_seal_, send_seq_++, message);
}

Status Session::verify(ByteView message, ByteView signature)
{
    Bytes16 want = mac(server_sign_, server_seal_, recv_seq_++, message);
    if (!same(want, signature))
        return make_error(Errc::mic, "NTLMSSP signature does not verify");
    return {};
}

} // namespace smbd::smb2sec::ntlm
