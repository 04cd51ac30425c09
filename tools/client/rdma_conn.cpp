#include "rdma_conn.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>

namespace smbd::client {

namespace {

// rxe's vendor id (drivers/infiniband/sw/rxe/rxe_param.h)
constexpr uint32_t rxe_vendor_id = 0xFFFFFF;
constexpr unsigned kernel_wc_with_invalidate = 1u << 2;

Error sys_error(Errc e, const std::string &what, int err = errno)
{
    return make_error(e, what + ": " + std::strerror(err));
}

void set_port(sockaddr_storage &ss, uint16_t port)
{
    if (ss.ss_family == AF_INET6)
        reinterpret_cast<sockaddr_in6 &>(ss).sin6_port = htons(port);
    else
        reinterpret_cast<sockaddr_in &>(ss).sin_port = htons(port);
}

Status set_nonblocking(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
        return sys_error(Errc::rdma,
                         "cannot make an RDMA channel non-blocking");
    return {};
}

} // namespace

Result<std::unique_ptr<RdmaConnection>>
RdmaConnection::connect(const std::string &addr, uint16_t port,
                        const RdmaSetup &setup)
{
    if (setup.recv_count == 0 || setup.send_count == 0)
        return make_error(Errc::invalid_argument, "need at least one receive "
                                                  "and one send buffer");
    std::unique_ptr<RdmaConnection> c(new RdmaConnection);
    c->setup_ = setup;
    auto st = c->create(addr, port);
    if (!st)
        return st.error();
    return c;
}

Result<CmEvent> RdmaConnection::wait_cm_event(rdma_cm_event_type want,
                                              const std::string &step)
{
    auto deadline = std::chrono::steady_clock::now() + setup_.timeout;
    for (;;) {
        if (auto ev = next_cm_event()) {
            if (ev->type == want)
                return *ev;
            std::string msg = step + " failed: " + rdma_event_str(ev->type);
            if (ev->type == RDMA_CM_EVENT_REJECTED)
                msg += " (nothing listening on that port, or the driver has "
                       "no SET_PARAMS yet)";
            if (ev->status)
                msg += ", status " + std::to_string(ev->status);
            return make_error(Errc::unreachable, msg);
        }
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0)
            return make_error(Errc::timeout,
                              step + ": no answer in " +
                                  std::to_string(setup_.timeout.count()) +
                                  " ms");
        pollfd p{channel_->fd, POLLIN, 0};
        if (poll(&p, 1, int(left.count())) < 0 && errno != EINTR)
            return sys_error(Errc::rdma, "poll on the rdma_cm channel");
    }
}

// The device the route to @dst takes, resolved on an id of its own (its
// port is not known before), decides the port.
Status RdmaConnection::pick_port(const sockaddr_storage &dst, uint16_t &port)
{
    rdma_cm_id *probe = nullptr;
    if (rdma_create_id(nullptr, &probe, nullptr, RDMA_PS_TCP))
        return sys_error(Errc::rdma, "rdma_create_id");
    sockaddr_storage to = dst;
    int rc =
        rdma_resolve_addr(probe, nullptr, reinterpret_cast<sockaddr *>(&to),
                          int(setup_.timeout.count()));
    int err = errno;
    bool iwarp = rc == 0 && probe->verbs &&
                 probe->verbs->device->transport_type == IBV_TRANSPORT_IWARP;
    rdma_destroy_id(probe);
    if (rc)
        return sys_error(Errc::unreachable,
                         "resolving the address (is an RDMA device bound to "
                         "the route to it?)",
                         err);
    port = iwarp ? kIwarpPort : kIbPort;
    return {};
}

Status RdmaConnection::create(const std::string &addr, uint16_t port)
{
    addrinfo hints{}, *ai = nullptr;
    hints.ai_socktype = SOCK_STREAM;
    std::string service = std::to_string(port);
    int rc = getaddrinfo(addr.c_str(), service.c_str(), &hints, &ai);
    if (rc != 0)
        return make_error(Errc::invalid_argument, "cannot resolve address '" +
                                                      addr +
                                                      "': " + gai_strerror(rc));
    sockaddr_storage dst{};
    std::memcpy(&dst, ai->ai_addr, ai->ai_addrlen);
    freeaddrinfo(ai);
    if (port == kPortByTransport) {
        if (auto st = pick_port(dst, port); !st)
            return st;
        set_port(dst, port);
    }
    port_ = port;

    channel_ = rdma_create_event_channel();
    if (!channel_)
        return sys_error(Errc::rdma,
                         "rdma_create_event_channel (is the rdma_ucm "
                         "module loaded?)");
    if (auto st = set_nonblocking(channel_->fd); !st)
        return st;
    if (rdma_create_id(channel_, &id_, nullptr, RDMA_PS_TCP))
        return sys_error(Errc::rdma, "rdma_create_id");

    sockaddr_storage src{};
    if (!setup_.source.empty()) {
        addrinfo shints{}, *sai = nullptr;
        shints.ai_flags = AI_NUMERICHOST;
        shints.ai_family = dst.ss_family;
        if (int src_rc =
                getaddrinfo(setup_.source.c_str(), nullptr, &shints, &sai);
            src_rc != 0)
            return make_error(Errc::invalid_argument,
                              "source address '" + setup_.source +
                                  "': " + gai_strerror(src_rc));
        std::memcpy(&src, sai->ai_addr, sai->ai_addrlen);
        freeaddrinfo(sai);
    }
    int ms = int(setup_.timeout.count());
    if (rdma_resolve_addr(id_,
                          setup_.source.empty()
                              ? nullptr
                              : reinterpret_cast<sockaddr *>(&src),
                          reinterpret_cast<sockaddr *>(&dst), ms))
        return sys_error(Errc::unreachable, "rdma_resolve_addr " + addr);
    if (auto ev = wait_cm_event(RDMA_CM_EVENT_ADDR_RESOLVED,
                                "resolving the address (is an RDMA device "
                                "bound to the route to it?)");
        !ev)
        return ev.error();
    if (rdma_resolve_route(id_, ms))
        return sys_error(Errc::unreachable, "rdma_resolve_route");
    if (auto ev =
            wait_cm_event(RDMA_CM_EVENT_ROUTE_RESOLVED, "resolving the route");
        !ev)
        return ev.error();

    ibv_device_attr attr{};
    if (ibv_query_device(id_->verbs, &attr))
        return sys_error(Errc::rdma, "ibv_query_device");
    uint32_t max_wr = uint32_t(attr.max_qp_wr);
    uint32_t sq = setup_.send_count + setup_.memory_ops;
    if (setup_.recv_count > max_wr || sq > max_wr ||
        setup_.recv_count + sq > uint32_t(attr.max_cqe))
        return make_error(Errc::invalid_argument,
                          "the device allows " + std::to_string(max_wr) +
                              " work requests per queue and " +
                              std::to_string(attr.max_cqe) +
                              " completions; ask for fewer receive credits");
    kernel_wc_flags_ = attr.vendor_id == rxe_vendor_id;
    iwarp_ = id_->verbs->device->transport_type == IBV_TRANSPORT_IWARP;
    responder_resources_ =
        uint8_t(std::min<int>(setup_.responder_resources, attr.max_qp_rd_atom));
    initiator_depth_ = uint8_t(
        std::min<int>(setup_.initiator_depth, attr.max_qp_init_rd_atom));

    pd_ = ibv_alloc_pd(id_->verbs);
    if (!pd_)
        return sys_error(Errc::rdma, "ibv_alloc_pd");
    comp_ = ibv_create_comp_channel(id_->verbs);
    if (!comp_)
        return sys_error(Errc::rdma, "ibv_create_comp_channel");
    if (auto st = set_nonblocking(comp_->fd); !st)
        return st;
    int cqe = int(setup_.recv_count + sq);
    cq_ = ibv_create_cq(id_->verbs, cqe, nullptr, comp_, 0);
    if (!cq_)
        return sys_error(Errc::rdma, "ibv_create_cq");
    if (ibv_req_notify_cq(cq_, 0))
        return sys_error(Errc::rdma, "ibv_req_notify_cq");

    recv_mem_.assign(size_t(setup_.recv_count) * setup_.recv_size, 0);
    send_mem_.assign(size_t(setup_.send_count) * setup_.send_size, 0);
    recv_mr_ = ibv_reg_mr(pd_, recv_mem_.data(), recv_mem_.size(),
                          IBV_ACCESS_LOCAL_WRITE);
    send_mr_ = ibv_reg_mr(pd_, send_mem_.data(), send_mem_.size(), 0);
    if (!recv_mr_ || !send_mr_)
        return sys_error(Errc::rdma, "ibv_reg_mr");

    ibv_qp_init_attr qa{};
    qa.send_cq = cq_;
    qa.recv_cq = cq_;
    qa.qp_type = IBV_QPT_RC;
    qa.cap.max_send_wr = sq;
    qa.cap.max_recv_wr = setup_.recv_count;
    qa.cap.max_send_sge = 1;
    qa.cap.max_recv_sge = 1;
    if (rdma_create_qp(id_, pd_, &qa))
        return sys_error(Errc::rdma, "rdma_create_qp");
    qp_ = true;

    if (auto st = post_recv(0); !st)
        return st;

    rdma_conn_param cp{};
    cp.responder_resources = responder_resources_;
    cp.initiator_depth = initiator_depth_;
    cp.retry_count = 6;
    cp.rnr_retry_count = 0; // as the Linux peers: an RNR is a credit bug
    // iWARP: IRD and ORD in the private data too, as Windows sends them
    uint8_t ird_ord[SMBD_IRD_ORD_SIZE];
    if (iwarp_) {
        smbd_ird_ord ours{responder_resources_, initiator_depth_};
        smbd_ird_ord_build(ird_ord, &ours);
        cp.private_data = ird_ord;
        cp.private_data_len = sizeof(ird_ord);
    }
    if (rdma_connect(id_, &cp))
        return sys_error(Errc::unreachable, "rdma_connect");
    auto ev = wait_cm_event(RDMA_CM_EVENT_ESTABLISHED,
                            "connecting to " + addr + " port " +
                                std::to_string(port));
    if (!ev)
        return ev.error();
    smbd_ird_ord theirs{};
    if (iwarp_ &&
        smbd_ird_ord_parse(ev->private_data.data(),
                           uint32_t(ev->private_data.size()), &theirs))
        server_ird_ord_ = theirs;
    return {};
}

RdmaConnection::~RdmaConnection()
{
    if (id_ && qp_ && !disconnected_)
        rdma_disconnect(id_);
    if (qp_)
        rdma_destroy_qp(id_);
    if (send_mr_)
        ibv_dereg_mr(send_mr_);
    if (recv_mr_)
        ibv_dereg_mr(recv_mr_);
    if (cq_)
        ibv_destroy_cq(cq_);
    if (comp_)
        ibv_destroy_comp_channel(comp_);
    if (pd_)
        ibv_dealloc_pd(pd_);
    if (id_)
        rdma_destroy_id(id_);
    if (channel_)
        rdma_destroy_event_channel(channel_);
}

std::string RdmaConnection::device_name() const
{
    return id_ && id_->verbs ? ibv_get_device_name(id_->verbs->device) : "";
}

Status RdmaConnection::post_recv(uint32_t i)
{
    ibv_sge sge{};
    sge.addr = reinterpret_cast<uintptr_t>(recv_buf(i));
    sge.length = setup_.recv_size;
    sge.lkey = recv_mr_->lkey;
    ibv_recv_wr wr{}, *bad = nullptr;
    wr.wr_id = i;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    if (int rc = ibv_post_recv(id_->qp, &wr, &bad))
        return sys_error(Errc::rdma, "ibv_post_recv", rc);
    return {};
}

Status RdmaConnection::post_send(uint32_t i, uint32_t len)
{
    ibv_sge sge{};
    sge.addr = reinterpret_cast<uintptr_t>(send_buf(i));
    sge.length = len;
    sge.lkey = send_mr_->lkey;
    ibv_send_wr wr{}, *bad = nullptr;
    wr.wr_id = SEND_WR_BIT | i;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    if (int rc = ibv_post_send(id_->qp, &wr, &bad))
        return sys_error(Errc::rdma, "ibv_post_send", rc);
    return {};
}

Status RdmaConnection::post_memory_op(ibv_send_wr &wr)
{
    ibv_send_wr *bad = nullptr;
    wr.wr_id |= MEMORY_WR_BIT;
    wr.send_flags |= IBV_SEND_SIGNALED;
    wr.next = nullptr;
    if (int rc = ibv_post_send(id_->qp, &wr, &bad))
        return sys_error(Errc::rdma, "ibv_post_send of a memory operation", rc);
    return {};
}

bool RdmaConnection::invalidated(const ibv_wc &wc) const
{
    unsigned flag = kernel_wc_flags_ ? kernel_wc_with_invalidate
                                     : unsigned(IBV_WC_WITH_INV);
    return wc.wc_flags & flag;
}

int RdmaConnection::cm_fd() const { return channel_->fd; }
int RdmaConnection::cq_fd() const { return comp_->fd; }

std::optional<CmEvent> RdmaConnection::next_cm_event()
{
    rdma_cm_event *ev = nullptr;
    if (rdma_get_cm_event(channel_, &ev))
        return std::nullopt;
    CmEvent out{ev->event, ev->status, {}};
    const uint8_t *pd =
        static_cast<const uint8_t *>(ev->param.conn.private_data);
    if (ev->event == RDMA_CM_EVENT_ESTABLISHED && pd)
        out.private_data.assign(pd, pd + ev->param.conn.private_data_len);
    rdma_ack_cm_event(ev);
    return out;
}

int RdmaConnection::poll_cq(ibv_wc *wc, int n)
{
    return ibv_poll_cq(cq_, n, wc);
}

Status RdmaConnection::rearm_cq()
{
    ibv_cq *cq = nullptr;
    void *ctx = nullptr;
    if (ibv_get_cq_event(comp_, &cq, &ctx) == 0)
        ibv_ack_cq_events(cq, 1);
    else if (errno != EAGAIN)
        return sys_error(Errc::rdma, "ibv_get_cq_event");
    if (ibv_req_notify_cq(cq_, 0))
        return sys_error(Errc::rdma, "ibv_req_notify_cq");
    return {};
}

void RdmaConnection::disconnect()
{
    if (!disconnected_ && id_)
        rdma_disconnect(id_);
    disconnected_ = true;
}

} // namespace smbd::client
