// SESSION_SETUP responses and echoes; see reply.h.
#include "reply.h"

#include "proto_types.h"
#include "smb2.h"
#include "smb2_rw.h"

#include <algorithm>
#include <cstdio>
#include <iterator>

namespace smbd::responder {

namespace {

// MS-SMB2 2.2.6: StructureSize 9, SessionFlags, SecurityBufferOffset/Length
constexpr size_t session_setup_resp_fixed = 8;

const char *const command_names[] = {
    "NEGOTIATE",
    "SESSION_SETUP",
    "LOGOFF",
    "TREE_CONNECT",
    "TREE_DISCONNECT",
    "CREATE",
    "CLOSE",
    "FLUSH",
    "READ",
    "WRITE",
    "LOCK",
    "IOCTL",
    "CANCEL",
    "ECHO",
    "QUERY_DIRECTORY",
    "CHANGE_NOTIFY",
    "QUERY_INFO",
    "SET_INFO",
    "OPLOCK_BREAK",
};

} // namespace

const std::vector<uint8_t> accept_completed_blob = {
    0xa1, 0x07, 0x30, 0x05, 0xa0, 0x03, 0x0a, 0x01, 0x00,
};

std::vector<uint8_t> session_setup_response(std::span<const uint8_t> request,
                                            uint64_t session_id,
                                            std::string *why)
{
    smb2_session_setup_req req;
    enum smbd_proto_error err =
        smb2_session_setup_parse(request.data(), request.size(), &req);
    if (err != SMBD_E_OK) {
        if (why)
            *why = smbd_proto_error_name(err);
        return {};
    }

    const auto &blob = accept_completed_blob;
    std::vector<uint8_t> out(SMB2_HDR_SIZE + session_setup_resp_fixed +
                             blob.size());
    smb2_hdr h = req.hdr;
    h.session_id = session_id;
    // grant what the client asked for, at least one credit, as smbd does
    smb2rw::put_response_header(h, NT_STATUS_SUCCESS,
                                smb2rw::credit_response(req.hdr), out.data());
    // smbd signs the answer that completes a binding, and the driver lifts
    // the channel's setup limits on that flag (the signature itself only
    // the client checks; there is no key here)
    if (req.flags & SMB2_SESSION_FLAG_BINDING)
        smbd_put_le32(out.data() + SMB2_HDR_FLAGS,
                      smbd_get_le32(out.data() + SMB2_HDR_FLAGS) |
                          SMB2_FLAGS_SIGNED);
    uint8_t *body = out.data() + SMB2_HDR_SIZE;
    smbd_put_le16(body, 9);
    smbd_put_le16(body + 2, 0);
    smbd_put_le16(body + 4, SMB2_HDR_SIZE + session_setup_resp_fixed);
    smbd_put_le16(body + 6, static_cast<uint16_t>(blob.size()));
    std::copy(blob.begin(), blob.end(), body + session_setup_resp_fixed);
    return out;
}

std::vector<uint8_t> echo_response(std::span<const uint8_t> pdu)
{
    std::vector<uint8_t> out(pdu.begin(), pdu.end());
    if (out.size() >= SMB2_HDR_FLAGS + 4)
        out[SMB2_HDR_FLAGS] |= SMB2_FLAGS_SERVER_TO_REDIR;
    return out;
}

std::string describe_pdu(std::span<const uint8_t> pdu)
{
    if (pdu.size() < SMB2_HDR_SIZE ||
        !std::equal(smb2_protocol_id, smb2_protocol_id + SMB2_PROTOCOL_ID_SIZE,
                    pdu.begin() + SMB2_HDR_PROTOCOL_ID))
        return "not SMB2";
    uint16_t command = smbd_get_le16(pdu.data() + SMB2_HDR_COMMAND);
    char buf[96];
    if (command < std::size(command_names))
        std::snprintf(buf, sizeof(buf), "%s", command_names[command]);
    else
        std::snprintf(buf, sizeof(buf), "command 0x%04x", command);
    std::string s = buf;
    std::snprintf(buf, sizeof(buf), " mid %llu session 0x%llx",
                  static_cast<unsigned long long>(
                      smbd_get_le64(pdu.data() + SMB2_HDR_MESSAGE_ID)),
                  static_cast<unsigned long long>(
                      smbd_get_le64(pdu.data() + SMB2_HDR_SESSION_ID)));
    return s + buf;
}

} // namespace smbd::responder
