// The network fuzzer's judge; see fuzz_judge.h.
#include "fuzz_judge.h"

#include <algorithm>

#include "data_transfer.h"
#include "fuzz_mutate.h"
#include "hex.h"
#include "negotiate.h"
#include "smb2_rw.h"
#include "smb2_wire.h"

namespace smbd::client {

namespace {

namespace rw = smbd::smb2rw;
using fuzz::get16;
using fuzz::hex;

std::string bytes_hex(std::span<const uint8_t> b, size_t max)
{
    std::string s = smbd::hex_bytes(b.first(std::min(b.size(), max)));
    return b.size() > max ? s + "..." : s;
}

bool is_echo(std::span<const uint8_t> answer, std::span<const uint8_t> pdu)
{
    if (answer.size() != pdu.size())
        return false;
    for (size_t i = 0; i < pdu.size(); i++) {
        uint8_t want = pdu[i];
        if (i == SMB2_HDR_FLAGS && pdu.size() >= SMB2_HDR_FLAGS + 4)
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

} // namespace smbd::client
