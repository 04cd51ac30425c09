// One RC connection made through rdma_cm the way an SMB Direct client makes
// it, with its registered receive and send buffers. It knows nothing of
// MS-SMBD: the Client drives it.
#ifndef SMBD_CLIENT_RDMA_CONN_H
#define SMBD_CLIENT_RDMA_CONN_H

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "error.h"
#include "ird_ord.h"
#include "ports.h"

namespace smbd::client {

struct RdmaSetup {
    uint32_t recv_count = 1; // receive buffers (and receive WRs)
    uint32_t recv_size = 8192;
    uint32_t send_count = 32; // send buffers (and send WRs in flight)
    uint32_t send_size = 1364;
    uint32_t memory_ops = 64;         // send WRs for memory-window binds
    uint8_t responder_resources = 16; // lets the server RDMA READ from us
    // a client issues no RDMA READs: 0, as the Linux cifs client asks
    uint8_t initiator_depth = 0;
    std::chrono::milliseconds timeout{5000}; // resolve and connect each
    std::string source; // local address to connect from; "": the route's
};

struct CmEvent {
    rdma_cm_event_type type;
    int status;
    std::vector<uint8_t> private_data; // ESTABLISHED: the accept's
};

class RdmaConnection {
  public:
    // Resolve, create the QP, post receive buffer 0 (for the negotiate
    // response, which may arrive before ESTABLISHED is seen) and connect.
    static Result<std::unique_ptr<RdmaConnection>>
    connect(const std::string &addr, uint16_t port, const RdmaSetup &setup);

    ~RdmaConnection();
    RdmaConnection(const RdmaConnection &) = delete;
    RdmaConnection &operator=(const RdmaConnection &) = delete;

    uint8_t *recv_buf(uint32_t i)
    {
        return recv_mem_.data() + size_t(i) * setup_.recv_size;
    }
    uint8_t *send_buf(uint32_t i)
    {
        return send_mem_.data() + size_t(i) * setup_.send_size;
    }
    const RdmaSetup &setup() const { return setup_; }
    std::string device_name() const;
    uint8_t responder_resources() const { return responder_resources_; }
    uint8_t initiator_depth() const { return initiator_depth_; }
    bool iwarp() const { return iwarp_; }
    // The port connected to (the transport's when asked with 0).
    uint16_t port() const { return port_; }
    // iWARP: the IRD and ORD the server answered in its accept, if any.
    const std::optional<smbd_ird_ord> &server_ird_ord() const
    {
        return server_ird_ord_;
    }
    // Whether a receive completion invalidated an rkey. soft-RoCE hands
    // userspace the kernel's completion as is, and the kernel's
    // IB_WC_WITH_INVALIDATE (1 << 2) is not libibverbs' IBV_WC_WITH_INV
    // (1 << 3): 1 << 2 is IBV_WC_IP_CSUM_OK there.
    bool invalidated(const ibv_wc &wc) const;

    // wr_id is the buffer index; send completions get SEND_WR_BIT added,
    // memory operations MEMORY_WR_BIT.
    static constexpr uint64_t SEND_WR_BIT = 1ull << 63;
    static constexpr uint64_t MEMORY_WR_BIT = 1ull << 62;
    Status post_recv(uint32_t i);
    Status post_send(uint32_t i, uint32_t len);
    // A memory-window bind (signaled, MEMORY_WR_BIT added to wr_id).
    Status post_memory_op(ibv_send_wr &wr);
    ibv_pd *pd() const { return pd_; }

    int cm_fd() const;
    int cq_fd() const;
    // Non-blocking: the next CM event, if one is queued.
    std::optional<CmEvent> next_cm_event();
    // Non-blocking: completions, at most @n.
    int poll_cq(ibv_wc *wc, int n);
    // Consume a completion channel event (if any) and re-arm the CQ.
    Status rearm_cq();

    void disconnect();

  private:
    RdmaConnection() = default;
    Status create(const std::string &addr, uint16_t port);
    Result<CmEvent> wait_cm_event(rdma_cm_event_type want,
                                  const std::string &step);

    Status pick_port(const sockaddr_storage &dst, uint16_t &port);

    RdmaSetup setup_;
    uint8_t responder_resources_ = 0;
    uint8_t initiator_depth_ = 0;
    bool iwarp_ = false;
    uint16_t port_ = 0;
    std::optional<smbd_ird_ord> server_ird_ord_;
    bool kernel_wc_flags_ = false;
    std::vector<uint8_t> recv_mem_;
    std::vector<uint8_t> send_mem_;
    // in creation order; the destructor tears down in reverse
    rdma_event_channel *channel_ = nullptr;
    rdma_cm_id *id_ = nullptr;
    ibv_pd *pd_ = nullptr;
    ibv_comp_channel *comp_ = nullptr;
    ibv_cq *cq_ = nullptr;
    ibv_mr *recv_mr_ = nullptr;
    ibv_mr *send_mr_ = nullptr;
    bool qp_ = false;
    bool disconnected_ = false;
};

} // namespace smbd::client

#endif // SMBD_CLIENT_RDMA_CONN_H
