// SMB2 READ and WRITE against the responder's file, as pure logic: what a
// request asks for (an answer now, or an RDMA transfer first), the file's
// bytes into pool memory before an RDMA WRITE, and the answer once the
// transfer is done. The event loop (responder.cpp) owns the device side.
#ifndef SMBD_TOOLS_RESPONDER_FILE_SERVER_H
#define SMBD_TOOLS_RESPONDER_FILE_SERVER_H

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "smb2_rw.h"
#include "store.h"

namespace smbd::responder {

struct Limits {
    // largest READ/WRITE: SET_PARAMS' max read/write size, capped by
    // what the pool can hold at once
    uint32_t max_io = 0;
    // most descriptors in one RDMA operation (GET_INFO)
    uint32_t max_descriptors = 0;
};

// The RDMA transfer a request needs before it can be answered.
struct Transfer {
    smb2_hdr hdr{};      // the request's, for the answer
    bool write = false;  // SMB2 WRITE: RDMA READ from the peer
    uint64_t offset = 0; // in the file
    uint32_t bytes = 0;  // what the pool slices hold
    std::vector<uint8_t> descriptors;
};

// What to do with one READ or WRITE request.
struct Decision {
    std::vector<uint8_t> response;    // answer now, if not empty
    std::optional<Transfer> transfer; // else move data first
    // every answer to an RDMA_V1_INVALIDATE request goes out with a send
    // with invalidate of its first descriptor's token
    std::optional<uint32_t> invalidate;
    std::string note; // what was decided, for the log
};

class FileServer {
  public:
    FileServer(uint64_t file_size, Limits limits);

    // Whether @pdu is an SMB2 READ or WRITE request (anything else is not
    // this server's business).
    static bool handles(std::span<const uint8_t> pdu);
    Decision request(std::span<const uint8_t> pdu, uint16_t dialect);
    // READ: the file's bytes into @memory (the pool slices, in order)
    // before the RDMA WRITE.
    void fill(const Transfer &t,
              std::span<const std::span<uint8_t>> memory) const;
    // The answer after the transfer moved @moved bytes; a WRITE first
    // copies them from @memory into the file.
    std::vector<uint8_t> complete(const Transfer &t, uint32_t moved,
                                  std::span<const std::span<uint8_t>> memory);

    const Store &store() const { return store_; }
    const Limits &limits() const { return limits_; }

  private:
    Decision read(std::span<const uint8_t> pdu, uint16_t dialect);
    Decision write(std::span<const uint8_t> pdu, uint16_t dialect);

    Store store_;
    Limits limits_;
};

} // namespace smbd::responder

#endif // SMBD_TOOLS_RESPONDER_FILE_SERVER_H
