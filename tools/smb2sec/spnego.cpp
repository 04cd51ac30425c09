#include "spnego.h"

#include <algorithm>
#include <string>

#include "der.h"

namespace smbd::smb2sec::spnego {

namespace {

std::vector<uint8_t> cat(std::initializer_list<ByteView> parts)
{
    std::vector<uint8_t> out;
    for (ByteView p : parts)
        out.insert(out.end(), p.begin(), p.end());
    return out;
}

std::vector<uint8_t> copy(ByteView v) { return {v.begin(), v.end()}; }

} // namespace

std::vector<uint8_t> ntlmssp_mech_types()
{
    return der::tlv(der::SEQUENCE, der::tlv(der::OID, OID_NTLMSSP));
}

std::vector<uint8_t> neg_token_init(ByteView mech_token)
{
    // NegTokenInit ::= SEQUENCE { mechTypes [0], reqFlags [1] OPTIONAL,
    //                             mechToken [2] OPTIONAL, ... }
    auto init =
        der::tlv(der::SEQUENCE,
                 cat({der::tlv(der::context(0), ntlmssp_mech_types()),
                      der::tlv(der::context(2),
                               der::tlv(der::OCTET_STRING, mech_token))}));
    return der::tlv(der::APPLICATION_0, cat({der::tlv(der::OID, OID_SPNEGO),
                                             der::tlv(der::context(0), init)}));
}

std::vector<uint8_t> neg_token_resp(ByteView response_token,
                                    ByteView mech_list_mic)
{
    constexpr uint8_t incomplete[] = {uint8_t(NegState::accept_incomplete)};
    auto fields =
        cat({der::tlv(der::context(0), der::tlv(der::ENUMERATED, incomplete)),
             der::tlv(der::context(2),
                      der::tlv(der::OCTET_STRING, response_token))});
    if (!mech_list_mic.empty()) {
        auto mic = der::tlv(der::context(3),
                            der::tlv(der::OCTET_STRING, mech_list_mic));
        fields.insert(fields.end(), mic.begin(), mic.end());
    }
    return der::tlv(der::context(1), der::tlv(der::SEQUENCE, fields));
}

Result<NegTokenResp> parse_neg_token_resp(ByteView token)
{
    der::Reader outer(token);
    auto resp = outer.expect(der::context(1), "NegTokenResp");
    if (!resp)
        return resp.error();
    if (!outer.empty())
        return make_error(Errc::der, "bytes after the NegTokenResp");
    der::Reader inner(*resp);
    auto seq = inner.expect(der::SEQUENCE, "NegTokenResp sequence");
    if (!seq)
        return seq.error();
    if (!inner.empty())
        return make_error(Errc::der, "bytes after the NegTokenResp sequence");

    NegTokenResp r;
    der::Reader fields(*seq);
    int last = -1;
    while (!fields.empty()) {
        auto f = fields.next();
        if (!f)
            return f.error();
        int n = f->tag - der::context(0);
        if (n < 0 || n > 3 || n <= last)
            return make_error(Errc::spnego, "NegTokenResp field with tag " +
                                                std::to_string(f->tag) +
                                                " out of place");
        last = n;
        der::Reader value(f->content);
        static constexpr uint8_t kTag[] = {
            der::ENUMERATED, der::OID, der::OCTET_STRING, der::OCTET_STRING};
        static constexpr const char *kName[] = {"negState", "supportedMech",
                                                "responseToken", "mechListMIC"};
        auto v = value.expect(kTag[n], kName[n]);
        if (!v)
            return v.error();
        if (!value.empty())
            return make_error(Errc::der,
                              std::string("bytes after ") + kName[n]);
        switch (n) {
        case 0:
            if (v->size() != 1 || (*v)[0] > uint8_t(NegState::request_mic))
                return make_error(Errc::spnego, "negState out of range");
            r.state = NegState((*v)[0]);
            break;
        case 1:
            r.supported_mech = copy(*v);
            break;
        case 2:
            r.response_token = copy(*v);
            break;
        default:
            r.mech_list_mic = copy(*v);
            break;
        }
    }
    return r;
}

NtlmClient::NtlmClient(ntlm::ClientConfig cfg) : cfg_(std::move(cfg)) {}

std::vector<uint8_t> NtlmClient::start()
{
    negotiate_ = ntlm::build_negotiate(cfg_);
    return neg_token_init(negotiate_);
}

Result<std::vector<uint8_t>> NtlmClient::step(ByteView server_token,
                                              const ntlm::ClientNonces &nonces)
{
    auto resp = parse_neg_token_resp(server_token);
    if (!resp)
        return resp.error();
    // request-mic asks for the mechListMIC this client sends whenever
    // NTLMSSP signing was agreed (below)
    if (resp->state != NegState::accept_incomplete &&
        resp->state != NegState::request_mic)
        return make_error(Errc::spnego, "the server's first answer is neither "
                                        "accept-incomplete nor request-mic");
    if (!resp->supported_mech.empty() &&
        !std::ranges::equal(resp->supported_mech, OID_NTLMSSP))
        return make_error(Errc::spnego,
                          "the server chose a mechanism other than "
                          "NTLMSSP");
    auto auth = ntlm::build_authenticate(cfg_, negotiate_, resp->response_token,
                                         nonces);
    if (!auth)
        return auth.error();
    session_key_ = auth->exported_session_key;
    // Sign the mechTypes when NTLMSSP can: Samba 4.17 wants the
    // mechListMIC once the AUTHENTICATE carries a MIC, or asks for another
    // round.
    std::vector<uint8_t> mic;
    if (resp->state == NegState::request_mic &&
        !(auth->flags & ntlm::NEGOTIATE_SIGN))
        return make_error(Errc::flags,
                          "the server asks for a mechListMIC, but NTLMSSP "
                          "signing was not agreed, so there is none to send");
    if (auth->flags & ntlm::NEGOTIATE_SIGN) {
        ntlm_.emplace(session_key_, auth->flags);
        Bytes16 sig = ntlm_->sign(ntlmssp_mech_types());
        mic.assign(sig.begin(), sig.end());
    }
    return neg_token_resp(auth->message, mic);
}

Status NtlmClient::finish(ByteView server_token)
{
    auto resp = parse_neg_token_resp(server_token);
    if (!resp)
        return resp.error();
    if (resp->state != NegState::accept_completed)
        return make_error(Errc::spnego, "the server did not accept-complete");
    // ksmbd answers without a mechListMIC; whatever is sent must verify.
    if (!resp->mech_list_mic.empty()) {
        if (!ntlm_)
            return make_error(Errc::mic,
                              "a mechListMIC without NTLMSSP signing");
        return ntlm_->verify(ntlmssp_mech_types(), resp->mech_list_mic);
    }
    return {};
}

} // namespace smbd::smb2sec::spnego
