// SPDX-License-Identifier: GPL-2.0-only
/*
 * The receive side of the MS-SMBD engine: the negotiate request, then Data
 * Transfer messages validated by the protocol core, credited, and
 * reassembled into PDUs held in kernel memory. Receive buffers are reposted
 * as soon as their payload is copied, so credits keep flowing while smbd is
 * slow; only unread PDUs beyond SMBD_CONN_MAX_QUEUED stop the refill, which
 * is the backpressure a peer feels.
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

	io = list_first_entry_or_null(&conn->recv_free, struct smbd_recv_io,
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
	u32 pdus = conn->pdus_queued + conn->nr_held;

	if (!conn->direct)
		return pdus >= SMBD_MAX_SETUP_HELD;
	return pdus >= SMBD_CONN_MAX_QUEUED ||
	       conn->queued_bytes >= 2ULL * conn->cp.max_fragmented_recv_size;
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

	if (conn->state == SMBD_CONN_NEGOTIATE ||
	    !smbd_conn_qp_usable_locked(conn))
		return 0;
	if (!conn->spare_posted) {
		ret = smbd_post_recv_locked(conn);
		if (ret)
			return ret;
		conn->spare_posted = true;
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
		conn->immediate = true;
	return 0;
}

/* A receive beyond the target so the last send credit can grant one. */
int smbd_recv_post_extra_locked(struct smbd_conn *conn)
{
	int ret = smbd_post_recv_locked(conn);

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
	list_add(&io->node, &conn->recv_free);
	spin_unlock_irqrestore(&conn->lock, flags);
}

void smbd_conn_pdu_consumed(struct smbd_conn *conn, u32 len)
{
	unsigned long flags;

	spin_lock_irqsave(&conn->lock, flags);
	conn->pdus_queued--;
	conn->queued_bytes -= len;
	spin_unlock_irqrestore(&conn->lock, flags);
	smbd_recv_refill(conn);
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
	list_add(&io->node, &conn->recv_free);
	if (err == SMBD_E_VERSION) {
		/* MS-SMBD 3.1.5.6: answer STATUS_NOT_SUPPORTED, then go */
		smbd_negotiate_resp_failure(&resp);
		smbd_negotiate_resp_build(&resp, out);
		if (!smbd_send_raw_locked(conn, out, sizeof(out)))
			conn->linger = true;
	}
	if (err != SMBD_E_OK) {
		spin_unlock_irqrestore(&conn->lock, flags);
		pr_info_ratelimited("connection %u: negotiate: %s\n", conn->id,
				    smbd_proto_error_text(err));
		smbd_conn_fail(conn, SMBD_REASON_BAD_NEGOTIATE);
		return;
	}

	smbd_negotiate_server_params(&conn->lp, &req, &conn->cp);
	smbd_credits_init(&conn->credits, &conn->cp, 0);
	smbd_reassembly_init(&conn->reasm, conn->cp.max_fragmented_recv_size);
	conn->state = SMBD_CONN_SMB2_NEGOTIATE;
	/* one deadline for the SMB2 NEGOTIATE and the first SESSION_SETUP */
	smbd_conn_set_deadline_locked(conn, conn->params->setup_timeout_ms);
	ret = smbd_recv_refill_locked(conn);
	if (!ret) {
		conn->immediate = false;
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
	pr_debug("connection %u: negotiated\n", conn->id);
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
	int ret;

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
	conn->queued_bytes += len;
	if (conn->direct) {
		owner = conn->owner;
		conn->pdus_queued++;
		kref_get(&conn->ref);
		kev->pdu_conn = conn;
	} else {
		list_add_tail(&kev->node, &conn->held);
		conn->nr_held++;
		if (conn->state != SMBD_CONN_DISCONNECTING)
			queue_work(smbd_wq, &conn->smb2_work);
	}
	spin_unlock_irqrestore(&conn->lock, flags);

	if (!owner)
		return;
	ret = smbd_event_push(owner, kev);
	if (ret) {
		smbd_kevent_free(kev);
		smbd_conn_fail(conn, smbd_event_lost_reason(ret));
	}
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
			conn->immediate = true;
		if (conn->state == SMBD_CONN_OWNED) {
			/* the peer is alive: the idle interval starts over */
			conn->keepalive = SMBD_KEEPALIVE_NONE;
			smbd_conn_set_deadline_locked(conn,
						      conn->params->keepalive_interval_ms);
		}
	}
	spin_unlock_irqrestore(&conn->lock, flags);
	if (err)
		goto bad;

	err = smbd_reassembly_add(&conn->reasm, &hdr, &offset, &total,
				  &complete);
	if (err)
		goto bad;
	if (hdr.data_length) {
		if (offset == 0) {
			if (total > SMBD_MAX_SETUP_PDU &&
			    READ_ONCE(conn->state) < SMBD_CONN_OWNED)
				return SMBD_REASON_BAD_SMB2;
			conn->rx_pdu = kvmalloc(total, GFP_KERNEL);
			if (!conn->rx_pdu)
				return SMBD_REASON_NO_MEMORY;
		}
		memcpy(conn->rx_pdu + offset, io->buf + hdr.data_offset,
		       hdr.data_length);
		if (complete) {
			smbd_recv_deliver(conn, conn->rx_pdu, total);
			conn->rx_pdu = NULL;
		}
	}
	return 0;
bad:
	pr_info_ratelimited("connection %u: %s\n", conn->id,
			    smbd_proto_error_text(err));
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
			pr_info_ratelimited("connection %u: receive failed: %s\n",
					    conn->id,
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
	if (state == SMBD_CONN_NEGOTIATE && !conn->established) {
		conn->early_negotiate = io;
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
