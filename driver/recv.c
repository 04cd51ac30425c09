// SPDX-License-Identifier: GPL-2.0-only
/*
 * The receive side of the MS-SMBD engine: the negotiate request, then Data
 * Transfer messages validated by the protocol core, credited, and
 * reassembled into PDUs held in kernel memory. Receive buffers are reposted
 * as soon as their payload is copied, so credits keep flowing while smbd is
 * slow; only unread PDUs beyond SMBD_CONN_MAX_QUEUED stop the refill, which
 * is the backpressure a peer feels. This file alone counts the PDUs a
 * connection has queued: held before it has an owner (until the driver's
 * SMB2 takes them or they are handed over) and queued to the owner (until
 * their event is released).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>

#include "smbdirect.h"

static int smbd_post_recv_locked(struct smbd_conn *conn)
{
	struct smbd_recv_io *io;
	struct ib_sge sge;
	struct ib_recv_wr wr = {};
	int ret;

	lockdep_assert_held(&conn->lock);
	io = list_first_entry_or_null(&conn->rx.free, struct smbd_recv_io,
				      node);
	if (!io)
		return -ENOBUFS;
	sge.addr = io->dma;
	sge.length = conn->lp.max_receive_size;
	sge.lkey = conn->pd->local_dma_lkey;
	wr.wr_cqe = &io->cqe;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	ib_dma_sync_single_for_device(conn->cm_id->device, io->dma,
				      sge.length, DMA_FROM_DEVICE);
	ret = ib_post_recv(conn->cm_id->qp, &wr, NULL);
	if (!ret)
		list_del(&io->node);
	return ret;
}

int smbd_recv_post_first(struct smbd_conn *conn)
{
	unsigned long flags;
	int ret;

	spin_lock_irqsave(&conn->lock, flags);
	ret = smbd_post_recv_locked(conn);
	spin_unlock_irqrestore(&conn->lock, flags);
	return ret;
}

/* Unread PDUs stop new credits: the backpressure a peer feels. */
static bool smbd_recv_throttled(const struct smbd_conn *conn)
{
	u32 pdus = conn->rx.pdus_queued + conn->rx.nr_held;

	if (!conn->rx.to_owner || conn->route.unconfirmed)
		return pdus >= SMBD_MAX_SETUP_HELD;
	return pdus >= SMBD_CONN_MAX_QUEUED ||
	       conn->rx.queued_bytes >= 2ULL * conn->cp.max_fragmented_recv_size;
}

/*
 * Post receives up to the peer's target (unless its PDUs pile up unread),
 * plus one spare that is never granted: a peer sending without a credit
 * lands in it and is caught instead of stalling on RNR retries.
 */
static int smbd_recv_refill_locked(struct smbd_conn *conn)
{
	u32 n, i;
	int ret;

	lockdep_assert_held(&conn->lock);
	if (smbd_conn_state_in(conn->state, SMBD_CONN_BEFORE_NEGOTIATE) ||
	    !smbd_conn_qp_usable_locked(conn))
		return 0;
	if (!conn->rx.spare_posted) {
		ret = smbd_post_recv_locked(conn);
		if (ret)
			return ret;
		conn->rx.spare_posted = true;
	}
	if (smbd_recv_throttled(conn))
		return 0;
	n = smbd_credits_to_post(&conn->credits);
	for (i = 0; i < n; i++) {
		ret = smbd_post_recv_locked(conn);
		if (ret == -ENOBUFS)
			break;
		if (ret)
			return ret;
		smbd_credits_posted(&conn->credits, 1);
	}
	if (smbd_credits_grant_due(&conn->credits))
		conn->tx.message_due = true;
	return 0;
}

/* A receive beyond the target so the last send credit can grant one. */
int smbd_recv_post_extra_locked(struct smbd_conn *conn)
{
	int ret;

	lockdep_assert_held(&conn->lock);
	ret = smbd_post_recv_locked(conn);
	if (!ret)
		smbd_credits_posted(&conn->credits, 1);
	return ret;
}

void smbd_recv_refill(struct smbd_conn *conn)
{
	unsigned long flags;
	int ret;

	spin_lock_irqsave(&conn->lock, flags);
	ret = smbd_recv_refill_locked(conn);
	/* grants to carry, or credits that unblock queued PDUs */
	if (!ret)
		smbd_send_kick_locked(conn);
	spin_unlock_irqrestore(&conn->lock, flags);
	if (ret)
		smbd_conn_qp_failed(conn, "posting a receive failed");
}

static void smbd_recv_recycle(struct smbd_conn *conn, struct smbd_recv_io *io)
{
	unsigned long flags;

	spin_lock_irqsave(&conn->lock, flags);
	list_add(&io->node, &conn->rx.free);
	spin_unlock_irqrestore(&conn->lock, flags);
}

/* A PDU event was read or dropped: its room is free again. */
static void smbd_recv_pdu_released(struct smbd_kevent *kev)
{
	struct smbd_conn *conn = kev->release_arg;
	unsigned long flags;

	spin_lock_irqsave(&conn->lock, flags);
	conn->rx.pdus_queued--;
	conn->rx.queued_bytes -= kev->ev.data_len;
	spin_unlock_irqrestore(&conn->lock, flags);
	smbd_recv_refill(conn);
	smbd_conn_put(conn);
}

/* @kev goes to the owner: unread, it counts against the connection. */
static void smbd_recv_charge_locked(struct smbd_conn *conn,
				    struct smbd_kevent *kev)
{
	lockdep_assert_held(&conn->lock);
	conn->rx.pdus_queued++;
	kref_get(&conn->ref);
	kev->release = smbd_recv_pdu_released;
	kev->release_arg = conn;
}

static int smbd_recv_push(struct smbd_conn *conn, struct smbd_file *owner,
			  struct smbd_kevent *kev)
{
	int ret = smbd_event_push(owner, kev);

	if (ret) {
		smbd_kevent_free(kev);
		smbd_conn_fail(conn, smbd_event_lost_reason(ret));
	}
	return ret;
}

void smbd_recv_negotiate(struct smbd_conn *conn, struct smbd_recv_io *io)
{
	struct smbd_negotiate_resp resp;
	struct smbd_negotiate_req req;
	u8 out[SMBD_NEGOTIATE_RESP_SIZE];
	enum smbd_proto_error err;
	unsigned long flags;
	int ret = 0;

	/* under the lock teardown's state change takes: no buffer freed */
	spin_lock_irqsave(&conn->lock, flags);
	if (conn->state != SMBD_CONN_NEGOTIATE) {
		spin_unlock_irqrestore(&conn->lock, flags);
		return;
	}
	err = smbd_negotiate_req_parse(io->buf, io->len, &req);
	list_add(&io->node, &conn->rx.free);
	if (err == SMBD_E_VERSION) {
		/* MS-SMBD 3.1.5.6: answer STATUS_NOT_SUPPORTED, then go */
		smbd_negotiate_resp_failure(&resp);
		smbd_negotiate_resp_build(&resp, out);
		if (!smbd_send_raw_locked(conn, out, sizeof(out)))
			conn->let_sends_finish = true;
	}
	if (err != SMBD_E_OK) {
		spin_unlock_irqrestore(&conn->lock, flags);
		smbd_conn_info(conn, "negotiate: %s\n",
			       smbd_proto_error_text(err));
		smbd_conn_fail(conn, SMBD_REASON_BAD_NEGOTIATE);
		return;
	}

	smbd_negotiate_server_params(&conn->lp, &req, &conn->cp);
	smbd_credits_init(&conn->credits, &conn->cp, 0);
	smbd_reassembly_init(&conn->rx.reasm, conn->cp.max_fragmented_recv_size);
	smbd_conn_enter_locked(conn, SMBD_CONN_SMB2_NEGOTIATE);
	/* one deadline for the SMB2 NEGOTIATE and the first SESSION_SETUP */
	smbd_conn_set_deadline_locked(conn, conn->params->setup_timeout_ms);
	ret = smbd_recv_refill_locked(conn);
	if (!ret) {
		conn->tx.message_due = false;
		smbd_negotiate_resp_success(&conn->cp,
					    smbd_credits_take_grant(&conn->credits),
					    &resp);
		smbd_negotiate_resp_build(&resp, out);
		ret = smbd_send_raw_locked(conn, out, sizeof(out));
	}
	spin_unlock_irqrestore(&conn->lock, flags);
	if (ret) {
		smbd_conn_qp_failed(conn, "posting a send failed");
		return;
	}
	smbd_count(SMBD_CNT_NEGOTIATED, 1);
	smbd_conn_dbg(conn, "negotiated\n");
}

static u32 smbd_data_error_reason(enum smbd_proto_error err)
{
	switch (err) {
	case SMBD_E_FRAGMENT_TOO_LARGE:
	case SMBD_E_REASSEMBLY_MISMATCH:
		return SMBD_REASON_BAD_REASSEMBLY;
	case SMBD_E_NO_RECEIVE_CREDIT:
	case SMBD_E_SEND_CREDIT_OVERFLOW:
		return SMBD_REASON_CREDIT_VIOLATION;
	default:
		return SMBD_REASON_BAD_MESSAGE;
	}
}

/* A whole PDU: to the owner, or held until there is one. */
static void smbd_recv_deliver(struct smbd_conn *conn, u8 *data, u32 len)
{
	struct smbd_kevent *kev;
	struct smbd_file *owner = NULL;
	unsigned long flags;

	kev = smbd_kevent_alloc(SMBD_EVENT_PDU_RECEIVED, conn->id, GFP_KERNEL);
	if (!kev) {
		kvfree(data);
		smbd_conn_fail(conn, SMBD_REASON_NO_MEMORY);
		return;
	}
	kev->data = data;
	kev->ev.data_len = len;
	smbd_count(SMBD_CNT_PDUS_RECEIVED, 1);
	smbd_count(SMBD_CNT_BYTES_RECEIVED, len);

	spin_lock_irqsave(&conn->lock, flags);
	conn->stats.pdus_received++;
	conn->stats.bytes_received += len;
	conn->rx.queued_bytes += len;
	if (conn->rx.to_owner) {
		owner = conn->route.owner;
		smbd_recv_charge_locked(conn, kev);
	} else {
		list_add_tail(&kev->node, &conn->rx.held);
		conn->rx.nr_held++;
		if (conn->state != SMBD_CONN_DISCONNECTING)
			queue_work(smbd_wq, &conn->route.smb2_work);
	}
	spin_unlock_irqrestore(&conn->lock, flags);

	if (owner)
		smbd_recv_push(conn, owner, kev);
}

/*
 * The next PDU held for the driver's own SMB2 (the SMB2 NEGOTIATE, the
 * first SESSION_SETUP), or NULL when none is held or the connection is past
 * those; @state is the state seen.
 */
struct smbd_kevent *smbd_recv_take_held(struct smbd_conn *conn,
					enum smbd_conn_state *state)
{
	struct smbd_kevent *kev = NULL;
	unsigned long flags;

	spin_lock_irqsave(&conn->lock, flags);
	*state = conn->state;
	if (*state == SMBD_CONN_SMB2_NEGOTIATE ||
	    *state == SMBD_CONN_SESSION_SETUP) {
		kev = list_first_entry_or_null(&conn->rx.held,
					       struct smbd_kevent, node);
		if (kev) {
			list_del(&kev->node);
			conn->rx.nr_held--;
			conn->rx.queued_bytes -= kev->ev.data_len;
		}
	}
	spin_unlock_irqrestore(&conn->lock, flags);
	return kev;
}

/* Owned: hand over what was held; false once there is nothing left. */
static bool smbd_recv_hand_over_one(struct smbd_conn *conn)
{
	struct smbd_kevent *kev;
	unsigned long flags;

	spin_lock_irqsave(&conn->lock, flags);
	kev = list_first_entry_or_null(&conn->rx.held, struct smbd_kevent, node);
	if (!kev || !smbd_conn_state_in(conn->state, SMBD_CONN_HAS_OWNER)) {
		/* from now on the receive path delivers directly */
		if (smbd_conn_state_in(conn->state, SMBD_CONN_HAS_OWNER))
			conn->rx.to_owner = true;
		spin_unlock_irqrestore(&conn->lock, flags);
		return false;
	}
	list_del(&kev->node);
	conn->rx.nr_held--;
	smbd_recv_charge_locked(conn, kev);
	spin_unlock_irqrestore(&conn->lock, flags);

	return !smbd_recv_push(conn, conn->route.owner, kev);
}

/*
 * Adopted: the PDUs that came before the owner go to it first, in order,
 * then the receive path delivers directly.
 */
void smbd_recv_hand_over(struct smbd_conn *conn)
{
	while (smbd_recv_hand_over_one(conn))
		;
}

static u32 smbd_recv_data(struct smbd_conn *conn, struct smbd_recv_io *io)
{
	struct smbd_data_hdr hdr;
	enum smbd_proto_error err;
	unsigned long flags;
	u32 offset, total;
	bool complete;

	err = smbd_data_parse(io->buf, io->len, conn->cp.max_receive_size,
			      conn->cp.max_fragmented_recv_size, &hdr);
	if (err)
		goto bad;

	spin_lock_irqsave(&conn->lock, flags);
	err = smbd_credits_received(&conn->credits, &hdr);
	if (!err) {
		if (hdr.flags & SMBD_FLAG_RESPONSE_REQUESTED)
			conn->tx.message_due = true;
		if (smbd_conn_state_in(conn->state, SMBD_CONN_HAS_OWNER) &&
		    !conn->route.unconfirmed) {
			/* the peer is alive: the idle interval starts over */
			conn->keepalive = SMBD_KEEPALIVE_NONE;
			smbd_conn_set_deadline_locked(conn,
						      conn->params->keepalive_interval_ms);
		}
	}
	spin_unlock_irqrestore(&conn->lock, flags);
	if (err)
		goto bad;

	err = smbd_reassembly_add(&conn->rx.reasm, &hdr, &offset, &total,
				  &complete);
	if (err)
		goto bad;
	if (hdr.data_length) {
		if (offset == 0) {
			if (total > SMBD_MAX_SETUP_PDU &&
			    (smbd_conn_state_in(READ_ONCE(conn->state),
						SMBD_CONN_UNOWNED) ||
			     READ_ONCE(conn->route.unconfirmed)))
				return SMBD_REASON_BAD_SMB2;
			conn->rx.pdu = kvmalloc(total, GFP_KERNEL);
			if (!conn->rx.pdu)
				return SMBD_REASON_NO_MEMORY;
		}
		memcpy(conn->rx.pdu + offset, io->buf + hdr.data_offset,
		       hdr.data_length);
		if (complete) {
			smbd_recv_deliver(conn, conn->rx.pdu, total);
			conn->rx.pdu = NULL;
		}
	}
	return 0;
bad:
	smbd_conn_info(conn, "%s\n", smbd_proto_error_text(err));
	return smbd_data_error_reason(err);
}

void smbd_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct smbd_recv_io *io = container_of(wc->wr_cqe, struct smbd_recv_io,
					       cqe);
	struct smbd_conn *conn = io->conn;
	enum smbd_conn_state state;
	unsigned long flags;
	u32 reason;

	if (wc->status != IB_WC_SUCCESS) {
		smbd_recv_recycle(conn, io);
		/* a flush follows a disconnect the CM reports with its cause */
		if (wc->status != IB_WC_WR_FLUSH_ERR) {
			smbd_conn_info(conn, "receive failed: %s\n",
				       ib_wc_status_msg(wc->status));
			smbd_conn_qp_failed(conn, "a receive failed");
		}
		return;
	}
	ib_dma_sync_single_for_cpu(cq->device, io->dma,
				   conn->lp.max_receive_size, DMA_FROM_DEVICE);
	io->len = wc->byte_len;

	spin_lock_irqsave(&conn->lock, flags);
	state = conn->state;
	if (state == SMBD_CONN_ACCEPTING) {
		conn->rx.early_negotiate = io;
		spin_unlock_irqrestore(&conn->lock, flags);
		return;
	}
	spin_unlock_irqrestore(&conn->lock, flags);

	if (state == SMBD_CONN_NEGOTIATE) {
		smbd_recv_negotiate(conn, io);
		return;
	}
	if (state == SMBD_CONN_DISCONNECTING) {
		smbd_recv_recycle(conn, io);
		return;
	}
	reason = smbd_recv_data(conn, io);
	smbd_recv_recycle(conn, io);
	if (reason)
		smbd_conn_fail(conn, reason);
	else
		smbd_recv_refill(conn);
}
