#include "smb2_tree.h"

namespace smbd::client {

using namespace smbd::smb2rw;

Result<ReceivedPdu> final_response(Connection &conn, uint64_t id,
                                   uint16_t command, uint32_t expect)
{
    auto got = conn.response(id);
    if (!got)
        return got.error();
    if (expect == NT_STATUS_SUCCESS) {
        if (auto st = smb2_check_status(got->bytes, command); !st)
            return st.error();
        return got;
    }
    uint32_t status = smbd_get_le32(&got->bytes[SMB2_HDR_STATUS]);
    if (status != expect)
        return make_error(Errc::smb2_status,
                          smb2_command_text(command) + " answered " +
                              nt_status_text(status) + ", expected " +
                              nt_status_text(expect));
    return got;
}

namespace {

// Send @pdu on @conn and check its final response's status.
Result<ReceivedPdu> call_on(Connection &conn, std::vector<uint8_t> &pdu,
                            uint32_t expect)
{
    auto id = conn.send(pdu);
    if (!id)
        return id.error();
    return final_response(conn, *id, smbd_get_le16(&pdu[SMB2_HDR_COMMAND]),
                          expect);
}

} // namespace

Result<Tree> Tree::connect(Session &s, Connection &conn, std::string_view unc)
{
    smb2_hdr h{};
    h.session_id = s.id();
    h.process_id = 0xFEFF;
    auto pdu = build_tree_connect(h, unc);
    if (!pdu)
        return pdu.error();
    auto got = call_on(conn, *pdu, NT_STATUS_SUCCESS);
    if (!got)
        return got.error();
    auto r = parse_tree_connect_response(got->bytes);
    if (!r)
        return r.error();
    return Tree(s, conn, r->hdr.tree_id);
}

smb2_hdr Tree::header(uint16_t command, uint64_t bytes) const
{
    smb2_hdr h{};
    h.command = command;
    h.credit_charge = smb2_credit_charge(bytes);
    h.process_id = 0xFEFF;
    h.tree_id = id_;
    h.session_id = s_->id();
    return h;
}

Result<ReceivedPdu> Tree::call(std::vector<uint8_t> pdu, uint32_t expect)
{
    return call_on(*conn_, pdu, expect);
}

Result<CreateResponse> Tree::create(CreateRequest r)
{
    r.hdr = header(SMB2_CREATE);
    auto pdu = build_create(r);
    if (!pdu)
        return pdu.error();
    auto got = call(std::move(*pdu));
    if (!got)
        return got.error();
    return parse_create_response(got->bytes);
}

Status Tree::close(const FileId &file)
{
    auto got = call(build_close(header(SMB2_CLOSE), file));
    if (!got)
        return got.error();
    return {};
}

Result<uint32_t> Tree::write(const FileId &file, uint64_t offset,
                             std::span<const uint8_t> data)
{
    WriteRequest w;
    w.hdr = header(SMB2_WRITE, data.size());
    w.length = uint32_t(data.size());
    w.offset = offset;
    w.file_id = file;
    w.data = data;
    auto got = call(build_write_request(w));
    if (!got)
        return got.error();
    WriteResponse r;
    if (Rule rule = parse_write_response(got->bytes, r); rule != Rule::ok)
        return make_error(Errc::protocol,
                          std::string("WRITE response: ") + rule_text(rule));
    return r.count;
}

Result<std::vector<uint8_t>> Tree::read(const FileId &file, uint64_t offset,
                                        uint32_t length)
{
    ReadRequest q;
    q.hdr = header(SMB2_READ, length);
    q.length = length;
    q.offset = offset;
    q.file_id = file;
    auto got = call(build_read_request(q));
    if (!got)
        return got.error();
    ReadResponse r;
    if (Rule rule = parse_read_response(got->bytes, r); rule != Rule::ok)
        return make_error(Errc::protocol,
                          std::string("READ response: ") + rule_text(rule));
    return std::vector<uint8_t>(r.data.begin(), r.data.end());
}

Status Tree::disconnect()
{
    auto got = call(build_tree_disconnect(header(SMB2_TREE_DISCONNECT)));
    if (!got)
        return got.error();
    return {};
}

Result<uint64_t> TreeIoPath::send_request(std::vector<uint8_t> &pdu)
{
    smbd_put_le32(&pdu[SMB2_HDR_TREE_ID], tree_.id());
    smbd_put_le64(&pdu[SMB2_HDR_SESSION_ID], tree_.session().id());
    return tree_.connection().send(pdu);
}

Result<ReceivedPdu> TreeIoPath::next_response(std::chrono::milliseconds timeout)
{
    return tree_.connection().next_response(timeout);
}

Status logoff(Session &s, Connection &conn)
{
    smb2_hdr h{};
    h.session_id = s.id();
    h.process_id = 0xFEFF;
    std::vector<uint8_t> pdu = build_logoff(h);
    auto got = call_on(conn, pdu, NT_STATUS_SUCCESS);
    if (!got)
        return got.error();
    return {};
}

} // namespace smbd::client
