// SPDX-License-Identifier: GPL-2.0-only
/*
 * A connection's life: resources and accept when the RDMA connect request
 * arrives, one timer for the negotiate, accept and keepalive deadlines, and
 * one teardown path for every failure. Teardown follows ksmbd's order:
 * disconnect, drain the QP (no completion runs after it), cancel the work,
 * end the RDMA operations that never completed, tell the owner, then
 * destroy QP, CQ, PD and the CM id.
 *
 * Every ib_post_* happens under conn->lock after checking that the QP is
 * usable (smbd_conn_qp_usable_locked()), and smbd_conn_fail() sets the
 * state under the same lock: nothing is posted once teardown has started,
 * so the drain covers everything.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/slab.h>
#include <rdma/rw.h>

#include "ird_ord.h"
#include "smbdirect.h"

DEFINE_XARRAY_ALLOC(smbd_conns);
static u32 smbd_next_conn_id;

/* Be generous to the peer's retransmits, never wait for its receives. */
#define SMBD_CM_RETRY 6
#define SMBD_CM_RNR_RETRY 0

void smbd_sockaddr_from(struct smbd_sockaddr *out, const struct sockaddr *sa)
{
	memset(out, 0, sizeof(*out));
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *sin = (const void *)sa;

		out->family = AF_INET;
		out->port = ntohs(sin->sin_port);
		memcpy(out->addr, &sin->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const void *)sa;

		out->family = AF_INET6;
		out->port = ntohs(sin6->sin6_port);
		out->scope_id = sin6->sin6_scope_id;
		memcpy(out->addr, &sin6->sin6_addr, 16);
	}
}

/* The fabric a CM id runs on, for the connection list. */
static const char *smbd_transport_name(struct rdma_cm_id *cm_id)
{
	if (rdma_protocol_iwarp(cm_id->device, cm_id->port_num))
		return "iwarp";
	if (rdma_protocol_roce(cm_id->device, cm_id->port_num))
		return "roce";
	return "ib";
}

static void smbd_conn_free_pools(struct smbd_conn *conn)
{
	struct ib_device *dev = conn->cm_id->device;
	u32 i;

	for (i = 0; conn->rx.ios && i < conn->rx.nr_ios; i++) {
		struct smbd_recv_io *io = &conn->rx.ios[i];

		if (io->dma)
			ib_dma_unmap_single(dev, io->dma,
					    conn->lp.max_receive_size,
					    DMA_FROM_DEVICE);
		kfree(io->buf);
	}
	kvfree(conn->rx.ios);
	conn->rx.ios = NULL;
	for (i = 0; conn->tx.ios && i < conn->tx.nr_ios; i++) {
		struct smbd_send_io *io = &conn->tx.ios[i];

		if (io->dma)
			ib_dma_unmap_single(dev, io->dma,
					    conn->lp.max_send_size,
					    DMA_TO_DEVICE);
		kfree(io->buf);
	}
	kvfree(conn->tx.ios);
	conn->tx.ios = NULL;
}

static int smbd_conn_alloc_pools(struct smbd_conn *conn)
{
	struct ib_device *dev = conn->cm_id->device;
	u32 i;

	conn->rx.ios = kvcalloc(conn->rx.nr_ios, sizeof(*conn->rx.ios),
				GFP_KERNEL);
	conn->tx.ios = kvcalloc(conn->tx.nr_ios, sizeof(*conn->tx.ios),
				GFP_KERNEL);
	if (!conn->rx.ios || !conn->tx.ios)
		return -ENOMEM;

	for (i = 0; i < conn->rx.nr_ios; i++) {
		struct smbd_recv_io *io = &conn->rx.ios[i];
		u64 dma;

		io->conn = conn;
		io->cqe.done = smbd_recv_done;
		io->buf = kmalloc(conn->lp.max_receive_size, GFP_KERNEL);
		if (!io->buf)
			return -ENOMEM;
		dma = ib_dma_map_single(dev, io->buf,
					conn->lp.max_receive_size,
					DMA_FROM_DEVICE);
		if (ib_dma_mapping_error(dev, dma))
			return -ENOMEM;
		io->dma = dma;
		list_add_tail(&io->node, &conn->rx.free);
	}
	for (i = 0; i < conn->tx.nr_ios; i++) {
		struct smbd_send_io *io = &conn->tx.ios[i];
		u64 dma;

		io->conn = conn;
		io->cqe.done = smbd_send_done;
		io->buf = kmalloc(conn->lp.max_send_size, GFP_KERNEL);
		if (!io->buf)
			return -ENOMEM;
		dma = ib_dma_map_single(dev, io->buf, conn->lp.max_send_size,
					DMA_TO_DEVICE);
		if (ib_dma_mapping_error(dev, dma))
			return -ENOMEM;
		io->dma = dma;
		list_add_tail(&io->node, &conn->tx.free);
	}
	return 0;
}

/* Send WRs (and completions, when flushed) the rdma_rw budget takes. */
static u32 smbd_conn_rw_wrs(struct smbd_conn *conn)
{
	return rdma_rw_max_send_wr(conn->cm_id->device, conn->cm_id->port_num,
				   conn->rw.ops_max, 0);
}

static int smbd_conn_create_qp(struct smbd_conn *conn)
{
	struct ib_device *dev = conn->cm_id->device;
	struct ib_qp_init_attr attr = {};
	int ret;

	conn->pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(conn->pd)) {
		ret = PTR_ERR(conn->pd);
		conn->pd = NULL;
		return ret;
	}
	/* +1 each for ib_drain_qp()'s marker requests */
	conn->cq = ib_alloc_cq(dev, conn,
			       conn->rx.nr_ios + conn->tx.nr_ios + 2 +
			       smbd_conn_rw_wrs(conn), 0, IB_POLL_WORKQUEUE);
	if (IS_ERR(conn->cq)) {
		ret = PTR_ERR(conn->cq);
		conn->cq = NULL;
		return ret;
	}
	attr.event_handler = NULL;
	attr.qp_context = conn;
	attr.send_cq = conn->cq;
	attr.recv_cq = conn->cq;
	attr.cap.max_send_wr = conn->tx.nr_ios + 1;
	attr.cap.max_recv_wr = conn->rx.nr_ios + 1;
	attr.cap.max_recv_sge = 1;
	/* rdma_create_qp() adds the send WRs of the rdma_rw budget */
	smbd_rw_init_qp_attr(conn, &attr);
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	attr.port_num = conn->cm_id->port_num;
	return rdma_create_qp(conn->cm_id, conn->pd, &attr);
}

static void smbd_conn_destroy_resources(struct smbd_conn *conn)
{
	if (conn->cm_id->qp)
		rdma_destroy_qp(conn->cm_id);
	if (conn->cq)
		ib_free_cq(conn->cq);
	smbd_conn_free_pools(conn);
	if (conn->pd)
		ib_dealloc_pd(conn->pd);
}

/*
 * A work request failed, or the QP refused a post: an RDMA error. On iWARP
 * it is also how a stream the peer closed shows (soft-iWARP completes a
 * send with LOC_QP_OP_ERR once its socket is gone, and refuses posts with
 * -ENOTCONN once its QP leaves RTS), and the CM's event that follows names
 * the cause (DISCONNECTED: the peer); so there it is one only without such
 * an event within SMBD_QP_FAILED_GRACE_MS. Callers log the details.
 */
void smbd_conn_qp_failed(struct smbd_conn *conn, const char *what)
{
	unsigned long flags;

	if (!conn->iwarp) {
		smbd_conn_fail(conn, SMBD_REASON_RDMA_ERROR);
		return;
	}
	spin_lock_irqsave(&conn->lock, flags);
	if (conn->state != SMBD_CONN_DISCONNECTING && !conn->qp_failed_since) {
		conn->qp_failed_since = jiffies ?: 1;
		conn->qp_failure = what;
		smbd_conn_rearm_locked(conn);
	}
	spin_unlock_irqrestore(&conn->lock, flags);
}

static void smbd_conn_timer(struct work_struct *work);
static void smbd_conn_teardown(struct work_struct *work);

/*
 * How many RDMA READs each side may have outstanding. The request's values
 * are from our side already: initiator_depth is the RDMA READs the peer
 * lets us have outstanding (its responder resources), responder_resources
 * what it may issue (0 for the Linux client). Crossed, an SMB2 WRITE's
 * RDMA READ stalls. On iWARP a peer may say it in the private data
 * instead (MPA v1 cannot), and is answered the same way in @blob.
 */
static void smbd_conn_rd_atomic(struct smbd_conn *conn,
				const struct rdma_conn_param *req,
				struct rdma_conn_param *param,
				u8 blob[SMBD_IRD_ORD_SIZE])
{
	const struct ib_device_attr *attrs = &conn->cm_id->device->attrs;
	struct smbd_ird_ord peer = {
		.ird = req->initiator_depth,
		.ord = req->responder_resources,
	}, ours;
	bool legacy = conn->iwarp &&
		      smbd_ird_ord_parse(req->private_data,
					 req->private_data_len, &peer);

	param->initiator_depth = min_t(u32, peer.ird,
				       attrs->max_qp_init_rd_atom);
	param->responder_resources = min_t(u32, peer.ord,
					   attrs->max_qp_rd_atom);
	if (!legacy)
		return;
	ours.ird = param->responder_resources;
	ours.ord = param->initiator_depth;
	smbd_ird_ord_build(blob, &ours);
	param->private_data = blob;
	param->private_data_len = SMBD_IRD_ORD_SIZE;
}

/*
 * From the CM connect request: QP, buffers, the negotiate receive, accept.
 * On failure nothing is left and the caller rejects the request.
 */
int smbd_conn_create(struct rdma_cm_id *cm_id, struct smbd_params *params,
		     struct rdma_conn_param *req)
{
	const struct ib_device_attr *attrs = &cm_id->device->attrs;
	struct rdma_conn_param param = {};
	u8 ird_ord[SMBD_IRD_ORD_SIZE];
	struct smbd_conn *conn;
	u32 id, depth;
	int ret;

	conn = kzalloc(sizeof(*conn), GFP_KERNEL);
	if (!conn)
		return -ENOMEM;
	kref_init(&conn->ref);
	conn->cm_id = cm_id;
	conn->params = params;
	WRITE_ONCE(conn->state, SMBD_CONN_ACCEPTING);
	spin_lock_init(&conn->lock);
	init_waitqueue_head(&conn->tx.wait);
	INIT_LIST_HEAD(&conn->rx.free);
	INIT_LIST_HEAD(&conn->tx.free);
	INIT_LIST_HEAD(&conn->tx.queue);
	INIT_LIST_HEAD(&conn->rx.held);
	INIT_LIST_HEAD(&conn->route.offer_node);
	INIT_LIST_HEAD(&conn->setup.node);
	INIT_WORK(&conn->tx.work, smbd_send_work);
	INIT_WORK(&conn->route.smb2_work, smbd_smb2_work);
	INIT_WORK(&conn->rw.work, smbd_rw_work);
	init_rwsem(&conn->rw.sem);
	INIT_LIST_HEAD(&conn->rw.pending);
	INIT_LIST_HEAD(&conn->rw.posted);
	INIT_WORK(&conn->disconnect_work, smbd_conn_teardown);
	INIT_DELAYED_WORK(&conn->timer_work, smbd_conn_timer);
	init_completion(&conn->done);
	conn->iwarp = rdma_protocol_iwarp(cm_id->device, cm_id->port_num);
	conn->transport = smbd_transport_name(cm_id);
	smbd_sockaddr_from(&conn->local, (void *)&cm_id->route.addr.src_addr);
	smbd_sockaddr_from(&conn->remote, (void *)&cm_id->route.addr.dst_addr);

	/*
	 * What the device holds: receives are the credits plus the spare, the
	 * last-credit extra and the drain marker; sends the credits plus the
	 * negotiate response and the drain marker; the CQ takes both and
	 * every RDMA work request, which all complete when flushed.
	 */
	conn->lp = params->local;
	smbd_rw_size(conn);
	depth = min_t(u32, attrs->max_qp_wr - smbd_conn_rw_wrs(conn),
		      (attrs->max_cqe - smbd_conn_rw_wrs(conn)) / 2);
	if (!conn->rw.ops_max || depth < SMBD_MIN_QUEUE_DEPTH) {
		kfree(conn);
		return -EOPNOTSUPP;
	}
	conn->lp.receive_credit_max = min_t(u32, conn->lp.receive_credit_max,
					    depth - 3);
	conn->lp.send_credit_target = min_t(u32, conn->lp.send_credit_target,
					    depth - 2);
	conn->rx.nr_ios = conn->lp.receive_credit_max + 2;
	conn->tx.nr_ios = conn->lp.send_credit_target + 1;

	/* a slot of the unauthenticated, perhaps another's: last of the checks */
	ret = smbd_setup_admit(conn);
	if (ret) {
		kfree(conn);
		return ret;
	}
	/*
	 * The id is reserved now and the connection stored under it once
	 * accepted: a lookup by id (CONN_STATS) takes a reference, and the
	 * failure below frees the connection without looking at any.
	 */
	ret = xa_alloc_cyclic(&smbd_conns, &id, NULL, XA_LIMIT(1, U32_MAX),
			      &smbd_next_conn_id, GFP_KERNEL);
	if (ret < 0) {
		smbd_setup_leave(conn);
		kfree(conn);
		return ret;
	}
	conn->id = id;
	ret = smbd_conn_alloc_pools(conn);
	if (!ret)
		ret = smbd_conn_create_qp(conn);
	if (!ret)
		ret = smbd_recv_post_first(conn);
	if (ret)
		goto fail;

	smbd_conn_rd_atomic(conn, req, &param, ird_ord);
	param.retry_count = SMBD_CM_RETRY;
	param.rnr_retry_count = SMBD_CM_RNR_RETRY;
	cm_id->context = conn;
	ret = rdma_accept(cm_id, &param);
	if (ret)
		goto fail;

	/*
	 * Found by its id from now on (module unload finds it here once the
	 * listener is gone); the reserved slot needs no memory.
	 */
	xa_store(&smbd_conns, conn->id, conn, GFP_KERNEL);
	smbd_count(SMBD_CNT_CONN_ACTIVE, 1);
	smbd_setup_ready(conn);
	smbd_conn_arm_timer(conn, params->negotiate_timeout_ms);
	return 0;

fail:
	cm_id->context = NULL;
	smbd_setup_leave(conn);
	smbd_conn_destroy_resources(conn);
	xa_erase(&smbd_conns, conn->id);
	kfree(conn);
	return ret;
}

static void smbd_conn_release(struct kref *ref)
{
	struct smbd_conn *conn = container_of(ref, struct smbd_conn, ref);
	struct smbd_kevent *kev, *tmp;

	list_for_each_entry_safe(kev, tmp, &conn->rx.held, node)
		smbd_kevent_free(kev);
	kvfree(conn->rx.pdu);
	kvfree(conn->route.neg_req);
	kvfree(conn->route.neg_resp);
	kvfree(conn->route.setup_bytes);
	if (conn->route.disconnected_ev)
		smbd_kevent_free(conn->route.disconnected_ev);
	if (conn->route.owner)
		smbd_file_put(conn->route.owner);
	smbd_params_put(conn->params);
	kfree(conn);
}

void smbd_conn_put(struct smbd_conn *conn)
{
	kref_put(&conn->ref, smbd_conn_release);
}

/* @next, or the end of a condition begun at @since (0: none) if earlier. */
static unsigned long smbd_since_earlier(unsigned long next,
					unsigned long since, u32 ms)
{
	unsigned long end = since + msecs_to_jiffies(ms);

	return since && time_before(end, next) ? end : next;
}

static bool smbd_since_expired(unsigned long since, u32 ms, unsigned long now)
{
	return since && time_after_eq(now, since + msecs_to_jiffies(ms));
}

/*
 * Run the timer at the earliest deadline: phase or keepalive, credits (a
 * send waiting, the first PDU queued too long), QP.
 */
void smbd_conn_rearm_locked(struct smbd_conn *conn)
{
	unsigned long next = conn->deadline, now = jiffies;

	lockdep_assert_held(&conn->lock);
	if (conn->state == SMBD_CONN_DISCONNECTING)
		return;
	next = smbd_since_earlier(next, conn->tx.stall_since,
				  conn->params->credit_timeout_ms);
	next = smbd_since_earlier(next, conn->tx.head_since,
				  conn->params->credit_timeout_ms);
	next = smbd_since_earlier(next, conn->qp_failed_since,
				  SMBD_QP_FAILED_GRACE_MS);
	mod_delayed_work(smbd_wq, &conn->timer_work,
			 time_after(next, now) ? next - now : 0);
}

void smbd_conn_set_deadline_locked(struct smbd_conn *conn, u32 ms)
{
	lockdep_assert_held(&conn->lock);
	conn->deadline = jiffies + msecs_to_jiffies(ms);
	smbd_conn_rearm_locked(conn);
}

void smbd_conn_arm_timer(struct smbd_conn *conn, u32 ms)
{
	unsigned long flags;

	spin_lock_irqsave(&conn->lock, flags);
	smbd_conn_set_deadline_locked(conn, ms);
	spin_unlock_irqrestore(&conn->lock, flags);
}

/* The states each state may follow. */
static const u32 smbd_conn_follows[SMBD_CONN_NR_STATES] = {
	[SMBD_CONN_NEGOTIATE] = BIT(SMBD_CONN_ACCEPTING),
	[SMBD_CONN_SMB2_NEGOTIATE] = BIT(SMBD_CONN_NEGOTIATE),
	[SMBD_CONN_SESSION_SETUP] = BIT(SMBD_CONN_SMB2_NEGOTIATE),
	[SMBD_CONN_REFUSED] = BIT(SMBD_CONN_SMB2_NEGOTIATE) |
			      BIT(SMBD_CONN_SESSION_SETUP),
	[SMBD_CONN_OFFERED] = BIT(SMBD_CONN_SESSION_SETUP),
	/* binding (flow 1) or ACCEPT (flow 2) */
	[SMBD_CONN_OWNED] = BIT(SMBD_CONN_SESSION_SETUP) |
			    BIT(SMBD_CONN_OFFERED),
	[SMBD_CONN_CLOSING] = BIT(SMBD_CONN_OWNED),
	[SMBD_CONN_DISCONNECTING] = SMBD_CONN_UNOWNED | SMBD_CONN_HAS_OWNER,
};

/*
 * The one place a connection's state changes. Returns false, changing
 * nothing, when @to may not follow the current state: once teardown began
 * that is a race lost to it; before, a bug. A connection leaving the
 * unowned states is no longer one of the unauthenticated ones, unless it
 * is a binding its owner has not confirmed (routing.c) and goes on.
 */
bool smbd_conn_enter_locked(struct smbd_conn *conn, enum smbd_conn_state to)
{
	enum smbd_conn_state from = conn->state;

	lockdep_assert_held(&conn->lock);
	if (!smbd_conn_state_in(from, smbd_conn_follows[to])) {
		WARN_ONCE(from != SMBD_CONN_DISCONNECTING,
			  "smbdirect: connection %u: state %d after %d\n",
			  conn->id, to, from);
		return false;
	}
	if (!smbd_conn_state_in(to, SMBD_CONN_UNOWNED) &&
	    (to == SMBD_CONN_DISCONNECTING || !conn->route.unconfirmed))
		smbd_setup_leave(conn);
	/* admission.c reads it without the lock */
	WRITE_ONCE(conn->state, to);
	return true;
}

/* Record the first reason and start the teardown; any context. */
static void smbd_conn_fail_if(struct smbd_conn *conn, u32 reason,
			      bool (*still)(struct smbd_conn *conn))
{
	unsigned long flags;
	bool first;

	spin_lock_irqsave(&conn->lock, flags);
	first = (!still || still(conn)) &&
		smbd_conn_enter_locked(conn, SMBD_CONN_DISCONNECTING);
	if (first)
		conn->reason = reason;
	spin_unlock_irqrestore(&conn->lock, flags);
	if (!first)
		return;

	smbd_count_disconnect(reason);
	if (reason != SMBD_REASON_PEER && reason != SMBD_REASON_LOCAL &&
	    reason != SMBD_REASON_OWNER_CLOSED)
		smbd_conn_info(conn, "disconnecting: %s\n",
			       smbd_reason_name(reason));
	queue_work(smbd_wq, &conn->disconnect_work);
}

void smbd_conn_fail(struct smbd_conn *conn, u32 reason)
{
	smbd_conn_fail_if(conn, reason, NULL);
}

/*
 * Evicted, unless it got an owner or its binding was confirmed since it
 * was picked: under its lock, which both of those take.
 */
void smbd_conn_evict(struct smbd_conn *conn)
{
	smbd_conn_fail_if(conn, SMBD_REASON_EVICTED, smbd_setup_holds);
}

static void smbd_conn_timer(struct work_struct *work)
{
	struct smbd_conn *conn = container_of(to_delayed_work(work),
					      struct smbd_conn, timer_work);
	const struct smbd_params *p = conn->params;
	unsigned long flags, now = jiffies;
	bool expired;
	u32 reason = 0;

	spin_lock_irqsave(&conn->lock, flags);
	expired = time_after_eq(now, conn->deadline);
	if (conn->state == SMBD_CONN_DISCONNECTING) {
		spin_unlock_irqrestore(&conn->lock, flags);
		return;
	}
	if (smbd_since_expired(conn->qp_failed_since, SMBD_QP_FAILED_GRACE_MS,
			       now)) {
		smbd_conn_info(conn, "%s, and no CM event\n",
			       conn->qp_failure);
		reason = SMBD_REASON_RDMA_ERROR;
	} else if (smbd_since_expired(conn->tx.stall_since, p->credit_timeout_ms,
				      now) ||
		   smbd_since_expired(conn->tx.head_since, p->credit_timeout_ms,
				      now)) {
		/* a send waits, or a PDU crawls, for credits the peer holds back */
		reason = SMBD_REASON_CREDIT_TIMEOUT;
	} else if (!expired) {
		smbd_conn_rearm_locked(conn);
	} else if (conn->state == SMBD_CONN_OFFERED) {
		reason = SMBD_REASON_ACCEPT_TIMEOUT;
	} else if (smbd_conn_state_in(conn->state,
				      SMBD_CONN_BEFORE_NEGOTIATE)) {
		reason = SMBD_REASON_NEGOTIATE_TIMEOUT;
	} else if (smbd_conn_state_in(conn->state, SMBD_CONN_UNOWNED) ||
		   conn->route.unconfirmed) {
		reason = SMBD_REASON_SETUP_TIMEOUT;
	} else if (conn->keepalive != SMBD_KEEPALIVE_NONE) {
		reason = SMBD_REASON_KEEPALIVE_TIMEOUT;
	} else {
		/* idle: the next message asks for a response */
		conn->keepalive = SMBD_KEEPALIVE_PENDING;
		conn->tx.message_due = true;
		smbd_conn_set_deadline_locked(conn, p->keepalive_timeout_ms);
		queue_work(smbd_wq, &conn->tx.work);
	}
	spin_unlock_irqrestore(&conn->lock, flags);
	if (reason)
		smbd_conn_fail(conn, reason);
}

void smbd_conn_established(struct smbd_conn *conn)
{
	struct smbd_recv_io *io;
	unsigned long flags;

	spin_lock_irqsave(&conn->lock, flags);
	io = NULL;
	if (smbd_conn_enter_locked(conn, SMBD_CONN_NEGOTIATE)) {
		io = conn->rx.early_negotiate;
		conn->rx.early_negotiate = NULL;
	}
	spin_unlock_irqrestore(&conn->lock, flags);
	/* the negotiate request overtook the CM's ESTABLISHED event */
	if (io)
		smbd_recv_negotiate(conn, io);
}

/* The owner learns what is lost, then that the connection is gone. */
static void smbd_conn_notify_owner(struct smbd_conn *conn)
{
	struct smbd_file *owner = conn->route.owner;
	struct smbd_kevent *kev = conn->route.disconnected_ev;

	smbd_send_flush(conn);
	if (!owner)
		return;
	/* allocated at adoption: the owner always learns the end */
	conn->route.disconnected_ev = NULL;
	kev->ev.u.disconnected.reason = conn->reason;
	/* the id is unknown to the owner by the time it reads the event */
	if (xa_cmpxchg(&owner->conns, conn->id, conn, NULL, 0) == conn)
		smbd_conn_put(conn);
	if (smbd_event_push(owner, kev))
		smbd_kevent_free(kev);
}

static bool smbd_conn_quiet(struct smbd_conn *conn)
{
	unsigned long flags;
	bool quiet;

	spin_lock_irqsave(&conn->lock, flags);
	quiet = !conn->tx.posted && list_empty(&conn->rw.posted);
	spin_unlock_irqrestore(&conn->lock, flags);
	return quiet;
}

static void smbd_conn_teardown(struct work_struct *work)
{
	struct smbd_conn *conn = container_of(work, struct smbd_conn,
					      disconnect_work);

	/*
	 * A final response (negotiate failure, SMB2 error) goes out first,
	 * and DISCONNECT lets posted RDMA operations finish.
	 */
	if (conn->let_sends_finish)
		wait_event_timeout(conn->tx.wait, smbd_conn_quiet(conn), HZ);
	rdma_disconnect(conn->cm_id);
	ib_drain_qp(conn->cm_id->qp);
	cancel_work_sync(&conn->route.smb2_work);
	cancel_delayed_work_sync(&conn->timer_work);
	cancel_work_sync(&conn->tx.work);
	/* RDMA_DONE for every operation, before DISCONNECTED */
	smbd_rw_shutdown(conn);

	smbd_route_forget(conn);
	smbd_conn_notify_owner(conn);
	smbd_conn_destroy_resources(conn);
	rdma_destroy_id(conn->cm_id);

	xa_erase(&smbd_conns, conn->id);
	smbd_count(SMBD_CNT_CONN_ACTIVE, -1);
	complete_all(&conn->done);
	smbd_conn_put(conn);
}

/*
 * DISCONNECT, like closing a TCP socket: what was queued goes out first,
 * then the connection ends with SMBD_REASON_LOCAL.
 */
static void smbd_conn_close(struct smbd_conn *conn)
{
	unsigned long flags;
	bool now = true;

	spin_lock_irqsave(&conn->lock, flags);
	if (conn->state == SMBD_CONN_CLOSING) {
		/* the first DISCONNECT's close is under way */
		now = false;
	} else if (conn->state == SMBD_CONN_OWNED) {
		smbd_conn_enter_locked(conn, SMBD_CONN_CLOSING);
		now = !smbd_send_last_locked(conn, SMBD_REASON_LOCAL);
	}
	/* posted messages complete before the QP goes to error */
	conn->let_sends_finish = true;
	spin_unlock_irqrestore(&conn->lock, flags);
	if (now)
		smbd_conn_fail(conn, SMBD_REASON_LOCAL);
}

/* Any live connection by its id, with a reference; NULL if none. */
struct smbd_conn *smbd_conn_get(u64 conn_id)
{
	return smbd_conns_get(&smbd_conns, conn_id);
}

int smbd_ioctl_disconnect(struct file *filp, void *cmd)
{
	struct smbd_file *file = filp->private_data;
	struct smbd_disconnect *d = cmd;
	struct smbd_conn *conn;

	if (d->flags)
		return -EINVAL;
	conn = smbd_file_conn(file, d->conn_id);
	if (!conn)
		return -ENOENT;
	smbd_conn_close(conn);
	smbd_conn_put(conn);
	return 0;
}

int smbd_ioctl_conn_stats(struct file *filp, void *cmd)
{
	struct smbd_file *file = filp->private_data;
	struct smbd_conn_stats *st = cmd;
	struct smbd_conn *conn;
	unsigned long flags;
	bool theirs = false;

	if (st->flags)
		return -EINVAL;
	conn = smbd_file_conn(file, st->conn_id);
	if (!conn) {
		/* another file's connection: what smbdctl would show root */
		conn = smbd_conn_get(st->conn_id);
		if (!conn)
			return -ENOENT;
		theirs = true;
		if (!capable(CAP_NET_ADMIN)) {
			smbd_conn_put(conn);
			return -ENOENT;
		}
	}
	spin_lock_irqsave(&conn->lock, flags);
	/* to its owner a connection is gone once its DISCONNECTED is queued */
	if (theirs && conn->route.owner == file) {
		spin_unlock_irqrestore(&conn->lock, flags);
		smbd_conn_put(conn);
		return -ENOENT;
	}
	st->out_pdus_received = conn->stats.pdus_received;
	st->out_bytes_received = conn->stats.bytes_received;
	st->out_pdus_sent = conn->stats.pdus_sent;
	st->out_bytes_sent = conn->stats.bytes_sent;
	st->out_keepalives_sent = conn->stats.keepalives_sent;
	st->out_credit_stalls = conn->stats.credit_stalls;
	st->out_rdma_reads = conn->stats.rdma_reads;
	st->out_rdma_writes = conn->stats.rdma_writes;
	st->out_rdma_read_bytes = conn->stats.rdma_read_bytes;
	st->out_rdma_write_bytes = conn->stats.rdma_write_bytes;
	st->out_rdma_errors = conn->stats.rdma_errors;
	spin_unlock_irqrestore(&conn->lock, flags);
	smbd_conn_put(conn);
	return 0;
}

/* Module unload: no file is open, so only unowned connections remain. */
void smbd_conns_shutdown(void)
{
	struct smbd_conn *conn;
	unsigned long id = 0;

	for (;;) {
		/* the array's reference is dropped only after the erase */
		xa_lock(&smbd_conns);
		conn = xa_find(&smbd_conns, &id, ULONG_MAX, XA_PRESENT);
		if (conn)
			kref_get(&conn->ref);
		xa_unlock(&smbd_conns);
		if (!conn)
			break;
		smbd_conn_fail(conn, SMBD_REASON_LOCAL);
		wait_for_completion(&conn->done);
		smbd_conn_put(conn);
		id++;
	}
	flush_workqueue(smbd_wq);
}
