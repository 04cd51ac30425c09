// SMB2 READ and WRITE over RDMA as a Windows client issues them: the client
// registers its memory, describes each transfer with Buffer Descriptor V1
// entries in the request (one or several, possibly longer than the data),
// and the server moves the data with RDMA WRITE (for READ) or RDMA READ (for
// WRITE) before it answers. With SMB2_CHANNEL_RDMA_V1_INVALIDATE every
// descriptor is lent for that one request, so that the server's send with
// invalidate can revoke it: as a type-2 memory window bound to the slot's
// memory where the device has windows (soft-RoCE cannot invalidate a user
// MR remotely), else as a memory registration of its own (soft-iWARP has no
// windows but invalidates any STag). Several transfers may be in flight,
// one per slot of the registered memory.
#ifndef SMBD_CLIENT_RDMA_IO_H
#define SMBD_CLIENT_RDMA_IO_H

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "client.h"
#include "smb2_rw.h"

struct ibv_mr;
struct ibv_mw;

namespace smbd::client {

// How RdmaIo's requests go out and their responses come in. Without one,
// straight on the client with MessageIds of its own, unsigned, in TreeId 1
// (the driver's test responder); a TreeIoPath runs them in an SMB2 session.
class IoPath {
  public:
    virtual ~IoPath() = default;
    // Fill in @pdu's SessionId, TreeId, MessageId and credits (its
    // CreditCharge is set), sign and send it; its MessageId.
    virtual Result<uint64_t> send_request(std::vector<uint8_t> &pdu) = 0;
    // The next final response, checked as the path checks responses.
    virtual Result<ReceivedPdu>
    next_response(std::chrono::milliseconds timeout) = 0;
};

struct IoOptions {
    uint16_t dialect = SMB2_DIALECT_311; // of the connection
    uint32_t channel = smb2rw::CHANNEL_RDMA_V1_INVALIDATE;
    uint32_t descriptors = 1;      // per transfer
    uint32_t descriptor_extra = 0; // bytes described beyond the data
    uint32_t slots = 1;            // transfers in flight at most
    uint32_t max_size = 1u << 20;  // bytes of the largest transfer
    uint64_t first_message_id = 2;
    smb2rw::FileId file_id{};
};

// The answer to one transfer.
struct IoCompletion {
    uint32_t slot = 0;
    bool write = false;
    uint64_t offset = 0;
    uint32_t size = 0;                   // asked for
    uint32_t status = 0;                 // of the response
    uint32_t bytes = 0;                  // WRITE: Count; READ: DataRemaining
    uint32_t first_token = 0;            // of the request's descriptors
    std::optional<uint32_t> invalidated; // by the response's receive
};

class RdmaIo {
  public:
    // Registers slots x (max_size + extra) bytes of memory on @client's
    // protection domain, which it holds (Client::hold_domain) until this
    // object goes; @client (and @path, if given) must outlive it.
    static Result<std::unique_ptr<RdmaIo>>
    create(Client &client, const IoOptions &opt, IoPath *path = nullptr);
    ~RdmaIo();
    RdmaIo(const RdmaIo &) = delete;
    RdmaIo &operator=(const RdmaIo &) = delete;

    const IoOptions &options() const { return opt_; }
    // How the INVALIDATE channel lends each descriptor's memory.
    enum class Lending { windows, registrations };
    Lending lending() const { return lending_; }
    // Whether responses must come with a send with invalidate: the
    // INVALIDATE channel on a dialect that has it.
    bool invalidation_expected() const;
    // Whether the receive completion shows each such invalidation: not
    // with registrations, which soft-iWARP takes and which it reports to
    // kernel CQs only (siw_cq.c); there a reused token shows it.
    bool invalidation_reported() const
    {
        return invalidation_expected() && lending_ == Lending::windows;
    }
    uint32_t in_flight() const { return uint32_t(in_flight_.size()); }
    std::optional<uint32_t> free_slot() const;

    // The memory a transfer of @size bytes in @slot moves, in file order:
    // the first @size bytes of the descriptors, descriptor by descriptor.
    std::vector<std::span<uint8_t>> data(uint32_t slot, uint32_t size);
    // Before a READ: every described byte poisoned, the gaps between the
    // descriptors' regions set to a guard byte.
    void poison(uint32_t slot, uint32_t size);
    // After a READ: the described bytes past the data still poisoned and
    // every guard intact, i.e. the server wrote nowhere but the data.
    Status check_untouched(uint32_t slot, uint32_t size) const;

    // Send the READ or WRITE request of @size bytes at file @offset for
    // @slot (its memory lent first, when the channel wants it).
    Status start(uint32_t slot, bool write, uint64_t offset, uint32_t size);
    // The Buffer Descriptor V1 entries start() would send for @size bytes
    // in @slot, memory lent: for a caller that builds (and breaks) its
    // own request, the fuzzer. The slot stays free.
    Result<std::vector<uint8_t>> describe(uint32_t slot, uint32_t size);
    // The next response, checked: a READ or WRITE response to a request in
    // flight, a READ with DataLength 0, the invalidation as the channel
    // asks. Windows the server did not invalidate are replaced before
    // their slot is free again; registrations stay until the slot is lent
    // again, so that a token the server invalidated stays invalid.
    Result<IoCompletion> finish(std::chrono::milliseconds timeout);

  private:
    struct Region {
        size_t offset; // in the slot
        uint32_t length;
    };
    struct Pending {
        uint32_t slot;
        bool write;
        uint64_t offset;
        uint32_t size;
        std::vector<uint32_t> tokens;
        bool lent; // per request, windows or registrations
    };

    RdmaIo(Client &client, const IoOptions &opt, IoPath *path);
    Status setup();
    std::vector<Region> layout(uint32_t size) const;
    uint8_t *slot_base(uint32_t slot) const { return mem_ + slot * stride_; }
    Status bind(uint32_t slot, const std::vector<Region> &regions,
                std::vector<uint32_t> &tokens);
    Status register_regions(uint32_t slot, const std::vector<Region> &regions,
                            std::vector<uint32_t> &tokens);
    void release_registrations(uint32_t slot);
    Status check_transfer(uint32_t slot, uint32_t size) const;
    // The descriptors of @size bytes in @slot; *tokens their keys.
    Result<std::vector<uint8_t>> descriptors(uint32_t slot, uint32_t size,
                                             std::vector<uint32_t> &tokens);

    Client &client_;
    IoOptions opt_;
    IoPath *path_;
    size_t stride_ = 0;
    size_t length_ = 0;
    uint8_t *mem_ = nullptr;
    ibv_mr *mr_ = nullptr;
    Lending lending_ = Lending::windows;
    // type-2 windows per slot and descriptor; null until needed
    std::vector<std::vector<ibv_mw *>> windows_;
    // or the registrations of the slot's request, one per descriptor
    std::vector<std::vector<ibv_mr *>> registrations_;
    std::vector<bool> busy_;
    std::map<uint64_t, Pending> in_flight_; // by MessageId
    uint64_t next_message_id_;
};

} // namespace smbd::client

#endif // SMBD_CLIENT_RDMA_IO_H
