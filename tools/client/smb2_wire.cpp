#include "smb2_wire.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "hex.h"
#include "pattern.h"
#include "smb2_ops.h"

namespace smbd::client {

namespace {

constexpr size_t NEG_RESP_BODY_SIZE = 64;
constexpr size_t NEG_CONTEXT_HDR_SIZE = 8;
constexpr size_t SESSION_SETUP_RESP_FIXED_SIZE = 8;

size_t align8(size_t n) { return (n + 7) & ~size_t(7); }

// Little-endian appender for building messages field by field.
struct Writer {
    std::vector<uint8_t> &b;
    void le16(uint16_t v)
    {
        b.push_back(uint8_t(v)), b.push_back(uint8_t(v >> 8));
    }
    void le32(uint32_t v) { le16(uint16_t(v)), le16(uint16_t(v >> 16)); }
    void raw(std::span<const uint8_t> s)
    {
        b.insert(b.end(), s.begin(), s.end());
    }
    void pad8() { b.resize(align8(b.size()), 0); }
};

// One negotiate context: type, data length, reserved, data.
void put_context(std::vector<uint8_t> &b, uint16_t type,
                 const std::vector<uint8_t> &data)
{
    Writer w{b};
    w.pad8();
    w.le16(type);
    w.le16(uint16_t(data.size()));
    w.le32(0);
    w.raw(data);
}

std::vector<uint8_t> id_list(const std::vector<uint16_t> &ids)
{
    std::vector<uint8_t> d;
    Writer w{d};
    w.le16(uint16_t(ids.size()));
    for (uint16_t id : ids)
        w.le16(id);
    return d;
}

Error protocol_error(std::string what)
{
    return make_error(Errc::protocol, std::move(what));
}

// The one algorithm a 3.1.1 response context must name.
Result<uint16_t> single_id(const uint8_t *data, uint16_t len, const char *what)
{
    if (len < 4 || smbd_get_le16(data) != 1)
        return protocol_error(std::string("the NEGOTIATE response's ") + what +
                              " context does not name exactly one algorithm");
    return smbd_get_le16(data + 2);
}

Status parse_response_contexts(std::span<const uint8_t> pdu, uint32_t offset,
                               Smb2NegotiateResponse &r)
{
    if (offset % 8 != 0 || offset > pdu.size())
        return protocol_error("NegotiateContextOffset " +
                              std::to_string(offset) +
                              " is unaligned or past the " +
                              std::to_string(pdu.size()) + "-byte response");
    size_t pos = offset;
    for (uint16_t i = 0; i < r.context_count; i++) {
        pos = align8(pos);
        if (pos + NEG_CONTEXT_HDR_SIZE > pdu.size())
            return protocol_error("negotiate context " + std::to_string(i) +
                                  " starts past the response");
        uint16_t type = smbd_get_le16(&pdu[pos]);
        uint16_t len = smbd_get_le16(&pdu[pos + 2]);
        pos += NEG_CONTEXT_HDR_SIZE;
        if (pos + len > pdu.size())
            return protocol_error("negotiate context " + std::to_string(i) +
                                  " ends past the response");
        const uint8_t *data = &pdu[pos];
        switch (type) {
        case SMB2_PREAUTH_INTEGRITY_CAPABILITIES: {
            if (len < 6 || smbd_get_le16(data) != 1)
                return protocol_error("the preauth context does not name "
                                      "exactly one hash algorithm");
            uint16_t salt_len = smbd_get_le16(data + 2);
            if (6u + salt_len > len)
                return protocol_error("the preauth salt is past its context");
            r.preauth_hash = smbd_get_le16(data + 4);
            r.preauth_salt.assign(data + 6, data + 6 + salt_len);
            break;
        }
        case SMB2_ENCRYPTION_CAPABILITIES: {
            auto id = single_id(data, len, "encryption");
            if (!id)
                return id.error();
            r.cipher = *id;
            break;
        }
        case SMB2_SIGNING_CAPABILITIES: {
            auto id = single_id(data, len, "signing");
            if (!id)
                return id.error();
            r.signing_algorithm = *id;
            break;
        }
        case SMB2_POSIX_EXTENSIONS_AVAILABLE:
            r.posix = len == SMB2_POSIX_CONTEXT_TAG_SIZE &&
                      std::memcmp(data, smb2_posix_context_tag, len) == 0;
            break;
        default:
            break;
        }
        pos += len;
    }
    if (!r.preauth_hash)
        return protocol_error("3.1.1 NEGOTIATE response without a preauth "
                              "integrity context");
    return {};
}

} // namespace

std::string nt_status_text(uint32_t status)
{
    const char *name = nullptr;
    switch (status) {
    case NT_STATUS_SUCCESS:
        name = "STATUS_SUCCESS";
        break;
    case NT_STATUS_PENDING:
        name = "STATUS_PENDING";
        break;
    case NT_STATUS_MORE_PROCESSING_REQUIRED:
        name = "STATUS_MORE_PROCESSING_REQUIRED";
        break;
    case NT_STATUS_ACCESS_DENIED:
        name = "STATUS_ACCESS_DENIED";
        break;
    case NT_STATUS_INVALID_PARAMETER:
        name = "STATUS_INVALID_PARAMETER";
        break;
    case NT_STATUS_NOT_SUPPORTED:
        name = "STATUS_NOT_SUPPORTED";
        break;
    case NT_STATUS_INSUFFICIENT_RESOURCES:
        name = "STATUS_INSUFFICIENT_RESOURCES";
        break;
    case NT_STATUS_NETWORK_NAME_DELETED:
        name = "STATUS_NETWORK_NAME_DELETED";
        break;
    case NT_STATUS_CANCELLED:
        name = "STATUS_CANCELLED";
        break;
    case NT_STATUS_LOGON_FAILURE:
        name = "STATUS_LOGON_FAILURE";
        break;
    case NT_STATUS_USER_SESSION_DELETED:
        name = "STATUS_USER_SESSION_DELETED";
        break;
    case NT_STATUS_SMB_NO_PREAUTH_INTEGRITY_HASH_OVERLAP:
        name = "STATUS_SMB_NO_PREAUTH_INTEGRITY_HASH_OVERLAP";
        break;
    }
    return name ? std::string(name) + " (" + hex(status, 8) + ")"
                : hex(status, 8);
}

std::string dialect_text(uint16_t d)
{
    switch (d) {
    case SMB2_DIALECT_202:
        return "2.0.2";
    case SMB2_DIALECT_210:
        return "2.1";
    case SMB2_DIALECT_300:
        return "3.0";
    case SMB2_DIALECT_302:
        return "3.0.2";
    case SMB2_DIALECT_311:
        return "3.1.1";
    }
    char buf[8];
    std::snprintf(buf, sizeof(buf), "%04x", d);
    return buf;
}

std::optional<uint16_t> parse_dialect(std::string_view s)
{
    for (uint16_t d : {SMB2_DIALECT_202, SMB2_DIALECT_210, SMB2_DIALECT_300,
                       SMB2_DIALECT_302, SMB2_DIALECT_311}) {
        char hex[8];
        std::snprintf(hex, sizeof(hex), "%04x", d);
        if (s == hex || s == dialect_text(d))
            return d;
    }
    return std::nullopt;
}

smb2_hdr smb2_request_header(uint16_t command, uint64_t message_id)
{
    smb2_hdr h{};
    h.command = command;
    h.message_id = message_id;
    h.credits = 1;
    h.process_id = 0xFEFF;
    return h;
}

Result<smb2_hdr> parse_smb2_response_header(std::span<const uint8_t> pdu)
{
    if (pdu.size() < SMB2_HDR_SIZE)
        return protocol_error("SMB2 response of " + std::to_string(pdu.size()) +
                              " bytes is shorter than its header");
    smb2_hdr h{};
    if (smb2_hdr_decode(pdu.data(), pdu.size(), &h) != SMBD_E_OK)
        return protocol_error("SMB2 response header: no 0xFE 'SMB' protocol "
                              "id or a StructureSize other than 64");
    if (!(h.flags & SMB2_FLAGS_SERVER_TO_REDIR))
        return protocol_error("SMB2 message from the server without "
                              "SMB2_FLAGS_SERVER_TO_REDIR");
    return h;
}

Result<std::vector<uint8_t>>
build_smb2_negotiate(const Smb2NegotiateOptions &opt)
{
    if (opt.dialects.empty() || opt.dialects.size() > 0xffff)
        return make_error(Errc::invalid_argument,
                          "offer at least one SMB2 dialect");
    bool smb311 = false;
    for (uint16_t d : opt.dialects)
        smb311 |= d == SMB2_DIALECT_311;

    std::vector<uint8_t> b(SMB2_HDR_SIZE + SMB2_NEG_REQ_DIALECTS, 0);
    smb2_hdr h = smb2_request_header(SMB2_NEGOTIATE, 0);
    smb2_hdr_build(&h, b.data());

    uint8_t *body = &b[SMB2_HDR_SIZE];
    smbd_put_le16(body, SMB2_NEG_REQ_BODY_SIZE);
    smbd_put_le16(body + SMB2_NEG_REQ_DIALECT_COUNT,
                  uint16_t(opt.dialects.size()));
    smbd_put_le16(body + SMB2_NEG_REQ_SECURITY_MODE, opt.security_mode);
    smbd_put_le32(body + SMB2_NEG_REQ_CAPABILITIES, opt.capabilities);
    std::memcpy(body + SMB2_NEG_REQ_CLIENT_GUID, opt.client_guid.data(), 16);
    // NegotiateContextOffset/Count (3.1.1) or ClientStartTime 0

    Writer w{b};
    for (uint16_t d : opt.dialects)
        w.le16(d);
    if (!smb311)
        return b;

    // Contexts start at the first 8-aligned offset after the dialects,
    // counted from the start of the SMB2 header.
    w.pad8();
    size_t ctx_offset = b.size();
    uint16_t count = 0;

    std::vector<uint8_t> preauth;
    Writer p{preauth};
    p.le16(1);
    p.le16(SMB2_PREAUTH_SALT_SIZE);
    p.le16(SMB2_PREAUTH_INTEGRITY_SHA512);
    p.raw(opt.salt);
    put_context(b, SMB2_PREAUTH_INTEGRITY_CAPABILITIES, preauth);
    count++;
    if (!opt.ciphers.empty()) {
        put_context(b, SMB2_ENCRYPTION_CAPABILITIES, id_list(opt.ciphers));
        count++;
    }
    if (!opt.signing_algorithms.empty()) {
        put_context(b, SMB2_SIGNING_CAPABILITIES,
                    id_list(opt.signing_algorithms));
        count++;
    }
    if (opt.posix) {
        put_context(b, SMB2_POSIX_EXTENSIONS_AVAILABLE,
                    std::vector<uint8_t>(smb2_posix_context_tag,
                                         smb2_posix_context_tag +
                                             SMB2_POSIX_CONTEXT_TAG_SIZE));
        count++;
    }
    body = &b[SMB2_HDR_SIZE];
    smbd_put_le32(body + SMB2_NEG_REQ_CONTEXT_OFFSET, uint32_t(ctx_offset));
    smbd_put_le16(body + SMB2_NEG_REQ_CONTEXT_COUNT, count);
    return b;
}

Result<Smb2NegotiateResponse>
parse_smb2_negotiate_response(std::span<const uint8_t> pdu)
{
    auto hdr = parse_smb2_response_header(pdu);
    if (!hdr)
        return hdr.error();
    if (hdr->command != SMB2_NEGOTIATE)
        return protocol_error("expected a NEGOTIATE response, got command " +
                              std::to_string(hdr->command));
    if (hdr->status != NT_STATUS_SUCCESS)
        return make_error(Errc::smb2_status,
                          "the server answered NEGOTIATE with " +
                              nt_status_text(hdr->status));
    if (pdu.size() < SMB2_HDR_SIZE + NEG_RESP_BODY_SIZE)
        return protocol_error("NEGOTIATE response of " +
                              std::to_string(pdu.size()) +
                              " bytes is truncated");
    const uint8_t *body = &pdu[SMB2_HDR_SIZE];
    if (smbd_get_le16(body) != NEG_RESP_BODY_SIZE + 1)
        return protocol_error("NEGOTIATE response StructureSize is not 65");

    Smb2NegotiateResponse r;
    r.hdr = *hdr;
    r.security_mode = smbd_get_le16(body + 0x02);
    r.dialect = smbd_get_le16(body + 0x04);
    r.context_count = smbd_get_le16(body + 0x06);
    std::memcpy(r.server_guid.data(), body + 0x08, 16);
    r.capabilities = smbd_get_le32(body + 0x18);
    r.max_transact_size = smbd_get_le32(body + 0x1C);
    r.max_read_size = smbd_get_le32(body + 0x20);
    r.max_write_size = smbd_get_le32(body + 0x24);
    r.system_time = smbd_get_le64(body + 0x28);
    r.server_start_time = smbd_get_le64(body + 0x30);
    uint16_t blob_off = smbd_get_le16(body + 0x38);
    uint16_t blob_len = smbd_get_le16(body + 0x3A);
    if (blob_len) {
        if (blob_off < SMB2_HDR_SIZE + NEG_RESP_BODY_SIZE ||
            size_t(blob_off) + blob_len > pdu.size())
            return protocol_error(
                "NEGOTIATE response security buffer (offset " +
                std::to_string(blob_off) + ", length " +
                std::to_string(blob_len) + ") is out of range");
        r.security_blob.assign(&pdu[blob_off], &pdu[blob_off] + blob_len);
    }
    if (r.dialect != SMB2_DIALECT_311) {
        r.context_count = 0; // the field is reserved before 3.1.1
        return r;
    }
    auto st = parse_response_contexts(pdu, smbd_get_le32(body + 0x3C), r);
    if (!st)
        return st.error();
    return r;
}

namespace {

bool offered(const std::vector<uint16_t> &ids, uint16_t id)
{
    return std::find(ids.begin(), ids.end(), id) != ids.end();
}

} // namespace

Status check_negotiate_choice(const Smb2NegotiateOptions &offer,
                              const Smb2NegotiateResponse &resp)
{
    if (!offered(offer.dialects, resp.dialect))
        return protocol_error("the server chose dialect " +
                              dialect_text(resp.dialect) +
                              ", which was not offered");
    if (resp.preauth_hash &&
        *resp.preauth_hash != SMB2_PREAUTH_INTEGRITY_SHA512)
        return protocol_error("the server chose preauth hash " +
                              hex(*resp.preauth_hash, 4) +
                              ", not the SHA-512 offered");
    // 0: no cipher in common, which the server may answer
    if (resp.cipher && *resp.cipher != 0 &&
        (*resp.cipher > SMB2_ENCRYPTION_AES256_GCM ||
         !offered(offer.ciphers, *resp.cipher)))
        return protocol_error("the server chose cipher " +
                              hex(*resp.cipher, 4) + ", which was not offered");
    if (resp.signing_algorithm &&
        (*resp.signing_algorithm > SMB2_SIGNING_AES128_GMAC ||
         !offered(offer.signing_algorithms, *resp.signing_algorithm)))
        return protocol_error("the server chose signing algorithm " +
                              hex(*resp.signing_algorithm, 4) +
                              ", which was not offered");
    return {};
}

std::vector<uint8_t> default_security_blob()
{
    // Signature, MessageType 1, NegotiateFlags (UNICODE, REQUEST_TARGET,
    // NTLM, ALWAYS_SIGN, EXTENDED_SESSIONSECURITY, 128, 56), empty
    // domain and workstation fields.
    std::vector<uint8_t> b{'N', 'T', 'L', 'M', 'S', 'S', 'P', 0};
    Writer w{b};
    w.le32(1);
    w.le32(0xA0088205u);
    for (int i = 0; i < 4; i++)
        w.le32(0);
    return b;
}

std::vector<uint8_t> build_smb2_session_setup(const SessionSetupOptions &opt)
{
    std::vector<uint8_t> b(SMB2_HDR_SIZE + SMB2_SETUP_REQ_BODY_SIZE, 0);
    smb2_hdr h = smb2_request_header(SMB2_SESSION_SETUP, opt.message_id);
    h.credit_charge = 1;
    h.credits = opt.credit_request;
    if (opt.binding) {
        // MS-SMB2 3.2.4.2.3.1: a binding request is signed; without the
        // session's keys the signature can only be a stand-in.
        h.session_id = opt.session_id;
        h.flags = SMB2_FLAGS_SIGNED;
        std::memset(h.signature, 0x5A, sizeof(h.signature));
    }
    smb2_hdr_build(&h, b.data());

    // Channel and PreviousSessionId 0
    uint8_t *body = &b[SMB2_HDR_SIZE];
    smbd_put_le16(body, SMB2_SETUP_REQ_BODY_SIZE + 1);
    body[SMB2_SETUP_REQ_FLAGS] = opt.binding ? SMB2_SESSION_FLAG_BINDING : 0;
    body[SMB2_SETUP_REQ_SECURITY_MODE] = opt.security_mode;
    smbd_put_le32(body + SMB2_SETUP_REQ_CAPABILITIES, opt.capabilities);
    smbd_put_le16(body + SMB2_SETUP_REQ_BUFFER_OFFSET,
                  SMB2_HDR_SIZE + SMB2_SETUP_REQ_BODY_SIZE);
    smbd_put_le16(body + SMB2_SETUP_REQ_BUFFER_LENGTH,
                  uint16_t(opt.security_blob.size()));
    b.insert(b.end(), opt.security_blob.begin(), opt.security_blob.end());
    return b;
}

Result<SessionSetupResponse>
parse_smb2_session_setup_response(std::span<const uint8_t> pdu)
{
    auto hdr = parse_smb2_response_header(pdu);
    if (!hdr)
        return hdr.error();
    if (hdr->command != SMB2_SESSION_SETUP)
        return protocol_error(
            "expected a SESSION_SETUP response, got command " +
            std::to_string(hdr->command));
    if (hdr->status != NT_STATUS_SUCCESS &&
        hdr->status != NT_STATUS_MORE_PROCESSING_REQUIRED)
        return make_error(Errc::smb2_status,
                          "the server answered SESSION_SETUP with " +
                              nt_status_text(hdr->status));
    if (pdu.size() < SMB2_HDR_SIZE + SESSION_SETUP_RESP_FIXED_SIZE)
        return protocol_error("SESSION_SETUP response of " +
                              std::to_string(pdu.size()) +
                              " bytes is truncated");
    const uint8_t *body = &pdu[SMB2_HDR_SIZE];
    if (smbd_get_le16(body) != SESSION_SETUP_RESP_FIXED_SIZE + 1)
        return protocol_error("SESSION_SETUP response StructureSize is not 9");

    SessionSetupResponse r;
    r.hdr = *hdr;
    r.session_flags = smbd_get_le16(body + 2);
    uint16_t off = smbd_get_le16(body + 4);
    uint16_t len = smbd_get_le16(body + 6);
    if (len) {
        if (off < SMB2_HDR_SIZE + SESSION_SETUP_RESP_FIXED_SIZE ||
            size_t(off) + len > pdu.size())
            return protocol_error("SESSION_SETUP response security buffer "
                                  "is out of range");
        r.security_blob.assign(&pdu[off], &pdu[off] + len);
    }
    return r;
}

uint16_t smb2_credit_charge(uint64_t size)
{
    return uint16_t(std::max<uint64_t>(1, (size + 65535) / 65536));
}

namespace {

void put_echo_header(const EchoSpec &spec, size_t size,
                     uint8_t out[SMB2_HDR_SIZE])
{
    smb2_hdr h = smb2_request_header(SMB2_IOCTL, spec.message_id);
    h.session_id = spec.session_id;
    h.credit_charge = smb2_credit_charge(size);
    h.credits = 32;
    smb2_hdr_build(&h, out);
}

size_t echo_size(const EchoSpec &spec)
{
    return std::max<size_t>(spec.size, SMB2_HDR_SIZE);
}

} // namespace

std::vector<uint8_t> build_echo_pdu(const EchoSpec &spec)
{
    std::vector<uint8_t> b(echo_size(spec));
    put_echo_header(spec, b.size(), b.data());
    fill_pattern(spec.message_id, std::span<uint8_t>(b).subspan(SMB2_HDR_SIZE));
    return b;
}

Status verify_echo(const EchoSpec &spec, std::span<const uint8_t> got)
{
    size_t size = echo_size(spec);
    std::string id = "echo of MessageId " + std::to_string(spec.message_id);
    if (got.size() != size)
        return make_error(Errc::mismatch,
                          id + ": " + std::to_string(got.size()) +
                              " bytes, sent " + std::to_string(size));

    uint8_t want[SMB2_HDR_SIZE];
    put_echo_header(spec, size, want);
    smbd_put_le32(want + SMB2_HDR_FLAGS, smbd_get_le32(want + SMB2_HDR_FLAGS) |
                                             SMB2_FLAGS_SERVER_TO_REDIR);
    std::optional<size_t> bad;
    for (size_t i = 0; i < SMB2_HDR_SIZE && !bad; i++)
        if (got[i] != want[i])
            bad = i;
    if (!bad) {
        if (auto off =
                pattern_mismatch(spec.message_id, got.subspan(SMB2_HDR_SIZE)))
            bad = SMB2_HDR_SIZE + *off;
    }
    if (!bad)
        return {};
    char buf[64];
    std::snprintf(buf, sizeof(buf), ": first difference at byte %zu (0x%02x)",
                  *bad, got[*bad]);
    return make_error(Errc::mismatch, id + buf);
}

} // namespace smbd::client
