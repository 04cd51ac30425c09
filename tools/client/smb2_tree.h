// A share of an SMB2 session (TREE_CONNECT) and the files opened on it:
// CREATE, inline READ and WRITE, CLOSE, through any channel of the session.
// RDMA READ and WRITE go through RdmaIo with a TreeIoPath (rdma_io.h).
#ifndef SMBD_CLIENT_SMB2_TREE_H
#define SMBD_CLIENT_SMB2_TREE_H

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "rdma_io.h"
#include "smb2_ops.h"
#include "smb2_rw.h"
#include "smb2_session.h"

namespace smbd::client {

class Tree {
  public:
    // TREE_CONNECT to @unc ("\\server\share") on @conn, a channel of @s.
    static Result<Tree> connect(Session &s, Connection &conn,
                                std::string_view unc);
    // The same tree through another channel of the session.
    Tree on(Connection &conn) const { return Tree(*s_, conn, id_); }

    uint32_t id() const { return id_; }
    Session &session() const { return *s_; }
    Connection &connection() const { return *conn_; }
    // A request header of this tree: SessionId, TreeId, @command, charged
    // for @bytes (smb2_credit_charge); MessageId and credits come at send.
    smb2_hdr header(uint16_t command, uint64_t bytes = 0) const;
    // Send a request of this tree, and take its final response with the
    // status checked against @expect.
    Result<ReceivedPdu> call(std::vector<uint8_t> pdu,
                             uint32_t expect = NT_STATUS_SUCCESS);

    // @r.hdr is set here.
    Result<CreateResponse> create(CreateRequest r);
    Status close(const smb2rw::FileId &file);
    // Inline data, Channel NONE.
    Result<uint32_t> write(const smb2rw::FileId &file, uint64_t offset,
                           std::span<const uint8_t> data);
    Result<std::vector<uint8_t>> read(const smb2rw::FileId &file,
                                      uint64_t offset, uint32_t length);
    Status disconnect();

  private:
    Tree(Session &s, Connection &conn, uint32_t id)
        : s_(&s), conn_(&conn), id_(id)
    {
    }

    Session *s_;
    Connection *conn_;
    uint32_t id_;
};

// RdmaIo's requests in a tree: stamped with its SessionId and TreeId,
// signed and counted by its connection, responses verified.
class TreeIoPath final : public IoPath {
  public:
    explicit TreeIoPath(Tree tree) : tree_(tree) {}
    Result<uint64_t> send_request(std::vector<uint8_t> &pdu) override;
    Result<ReceivedPdu>
    next_response(std::chrono::milliseconds timeout) override;

  private:
    Tree tree_;
};

// The final response to @id, a @command request sent on @conn, its status
// @expect (with success, an error's ERROR body is checked and named).
Result<ReceivedPdu> final_response(Connection &conn, uint64_t id,
                                   uint16_t command,
                                   uint32_t expect = NT_STATUS_SUCCESS);

// LOGOFF of @s on @conn.
Status logoff(Session &s, Connection &conn);

} // namespace smbd::client

#endif // SMBD_CLIENT_SMB2_TREE_H
