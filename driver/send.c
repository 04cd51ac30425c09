// SPDX-License-Identifier: GPL-2.0-only
/*
 * The send side of the MS-SMBD engine. PDUs (SEND_PDU copies and the
 * driver's own SMB2 responses) queue per connection and one work item cuts
 * them into Data Transfer messages as send slots and credits allow, so the
 * fragments of one PDU never interleave with another's. Every message
 * carries the receive credits posted since the last one and, when a
 * keepalive is due, SMB_DIRECT_RESPONSE_REQUESTED.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/uaccess.h>

#include "smbdirect.h"

/*
 * Charged to the caller's memory cgroup: SEND_PDU's, for its copies (a
 * kworker's, for the driver's own responses, is not charged). Beyond the
 * cgroup's limit the copy fails with ENOMEM rather than wake its OOM
 * killer, which could pick the master smbd.
 */
#define SMBD_PDU_GFP (GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL)

struct smbd_pdu_out *smbd_pdu_out_alloc(u32 len)
{
	struct smbd_pdu_out *pdu = kzalloc(sizeof(*pdu), SMBD_PDU_GFP);

	if (!pdu)
		return NULL;
	pdu->data = kvmalloc(len, SMBD_PDU_GFP);
	if (!pdu->data) {
		kfree(pdu);
		return NULL;
	}
	pdu->len = len;
	return pdu;
}

void smbd_pdu_out_free(struct smbd_pdu_out *pdu)
{
	kvfree(pdu->data);
	kfree(pdu);
}

/*
 * SEND_PDU's copies and RDMA_RW's replies count against their
 * connection's SMBD_SEND_QUEUE_BYTES from the copy until their send
 * completes, as a socket's send buffer: beyond it -EAGAIN, and a
 * SEND_ROOM event once half of it is free. A connection that holds none
 * takes any PDU, so that every PDU can go.
 */
static int smbd_send_charge(struct smbd_conn *conn, u32 len)
{
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&conn->lock, flags);
	if (conn->state != SMBD_CONN_OWNED) {
		/* closing: no SEND_ROOM would come, DISCONNECTED will */
		ret = -ENOTCONN;
	} else if (conn->tx.charged &&
		   (u64)conn->tx.charged + len > SMBD_SEND_QUEUE_BYTES) {
		conn->tx.want_room = true;
		ret = -EAGAIN;
	} else {
		conn->tx.charged += len;
	}
	spin_unlock_irqrestore(&conn->lock, flags);
	if (ret == -EAGAIN)
		smbd_count(SMBD_CNT_SEND_QUEUE_FULL, 1);
	return ret;
}

/* The owner read or dropped the SEND_ROOM: the next may be queued. */
static void smbd_send_room_released(struct smbd_kevent *kev)
{
	struct smbd_conn *conn = kev->release_arg;
	unsigned long flags;

	spin_lock_irqsave(&conn->lock, flags);
	conn->tx.room_queued = false;
	spin_unlock_irqrestore(&conn->lock, flags);
	smbd_conn_put(conn);
}

/*
 * One SEND_ROOM at a time, the connection's own: it cannot fail to be
 * queued for want of memory. A caller refused while one is unread tries
 * again when it reads it. Queued under the lock teardown's state change
 * takes, so never after DISCONNECTED; false when the owner is closing.
 */
static bool smbd_send_room_locked(struct smbd_conn *conn)
{
	struct smbd_kevent *kev = &conn->tx.room_ev;

	lockdep_assert_held(&conn->lock);
	memset(kev, 0, sizeof(*kev));
	kev->ev.type = SMBD_EVENT_SEND_ROOM;
	kev->ev.conn_id = conn->id;
	kev->embedded = true;
	kev->release = smbd_send_room_released;
	kev->release_arg = conn;
	kref_get(&conn->ref);
	conn->tx.room_queued = !smbd_event_push(conn->route.owner, kev);
	return conn->tx.room_queued;
}

static void smbd_send_uncharge(struct smbd_conn *conn, u32 len)
{
	unsigned long flags;
	bool unqueued = false;

	if (!len)
		return;
	spin_lock_irqsave(&conn->lock, flags);
	conn->tx.charged -= len;
	/* none once closing: nothing more may be sent, DISCONNECTED is due */
	if (conn->tx.want_room && !conn->tx.room_queued &&
	    conn->tx.charged <= SMBD_SEND_QUEUE_BYTES / 2 &&
	    conn->state == SMBD_CONN_OWNED) {
		conn->tx.want_room = false;
		unqueued = !smbd_send_room_locked(conn);
	}
	spin_unlock_irqrestore(&conn->lock, flags);
	if (unqueued)
		smbd_conn_put(conn);
}

/* Free @pdu of @conn, which gives back what it holds of the bound. */
void smbd_send_pdu_free(struct smbd_conn *conn, struct smbd_pdu_out *pdu)
{
	u32 charged = pdu->charged;

	smbd_pdu_out_free(pdu);
	smbd_send_uncharge(conn, charged);
}

static int smbd_post_send_locked(struct smbd_conn *conn,
				 struct smbd_send_io *io, u32 len,
				 bool invalidate, u32 token)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;
	int ret;

	lockdep_assert_held(&conn->lock);
	sge.addr = io->dma;
	sge.length = len;
	sge.lkey = conn->pd->local_dma_lkey;
	wr.wr_cqe = &io->cqe;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IB_SEND_SIGNALED;
	if (invalidate) {
		wr.opcode = IB_WR_SEND_WITH_INV;
		wr.ex.invalidate_rkey = token;
	} else {
		wr.opcode = IB_WR_SEND;
	}
	ib_dma_sync_single_for_device(conn->cm_id->device, io->dma, len,
				      DMA_TO_DEVICE);
	ret = ib_post_send(conn->cm_id->qp, &wr, NULL);
	if (ret) {
		list_add(&io->node, &conn->tx.free);
		return ret;
	}
	conn->tx.posted++;
	return 0;
}

/* A message outside the credit scheme: the negotiate response. */
int smbd_send_raw_locked(struct smbd_conn *conn, const void *buf, size_t len)
{
	struct smbd_send_io *io;

	lockdep_assert_held(&conn->lock);
	io = list_first_entry_or_null(&conn->tx.free, struct smbd_send_io,
				      node);
	if (!io || len > conn->lp.max_send_size)
		return -ENOBUFS;
	list_del(&io->node);
	io->pdu = NULL;
	memcpy(io->buf, buf, len);
	return smbd_post_send_locked(conn, io, len, false, 0);
}

/*
 * Run the send work if it has something to send: every receive and send
 * completion asks, so an idle wake-up per message would be the common case.
 * Not after teardown began (it cancels the work only once), nor while a
 * failed QP waits for it.
 */
void smbd_send_kick_locked(struct smbd_conn *conn)
{
	lockdep_assert_held(&conn->lock);
	if (!smbd_conn_qp_usable_locked(conn))
		return;
	if (conn->tx.message_due || !list_empty(&conn->tx.queue) ||
	    smbd_credits_grant_due(&conn->credits))
		queue_work(smbd_wq, &conn->tx.work);
}

void smbd_send_kick(struct smbd_conn *conn)
{
	unsigned long flags;

	spin_lock_irqsave(&conn->lock, flags);
	smbd_send_kick_locked(conn);
	spin_unlock_irqrestore(&conn->lock, flags);
}

/* Cut @pdu into @conn's messages: EMSGSIZE when it does not fit them. */
static int smbd_send_plan(struct smbd_conn *conn, struct smbd_pdu_out *pdu)
{
	if (smbd_frag_plan_make(pdu->len, conn->cp.max_send_size,
				conn->cp.max_fragmented_send_size, &pdu->plan))
		return -EMSGSIZE;
	return 0;
}

/*
 * The PDU at the head of the queue must go whole within the credit
 * timeout of getting there: a peer that grants a credit now and then
 * keeps no PDU, and no connection, waiting for ever.
 */
static void smbd_send_head_changed_locked(struct smbd_conn *conn, bool some)
{
	lockdep_assert_held(&conn->lock);
	/*
	 * No timer here, on the path of every response: a PDU held up waits
	 * for credits first, and that stall arms the timer, which then
	 * honours this deadline too (smbd_conn_rearm_locked()).
	 */
	conn->tx.head_since = some ? jiffies ?: 1 : 0;
}

/* Queue planned @pdu behind the others; 0, or ENOTCONN once closing. */
int smbd_send_enqueue_locked(struct smbd_conn *conn, struct smbd_pdu_out *pdu)
{
	lockdep_assert_held(&conn->lock);
	if (conn->state == SMBD_CONN_DISCONNECTING ||
	    conn->state == SMBD_CONN_CLOSING)
		return -ENOTCONN;
	if (list_empty(&conn->tx.queue))
		smbd_send_head_changed_locked(conn, true);
	list_add_tail(&pdu->node, &conn->tx.queue);
	return 0;
}

/*
 * Make the last queued PDU the connection's last: once it is sent, the
 * connection ends with @reason. False when nothing is queued.
 */
bool smbd_send_last_locked(struct smbd_conn *conn, u32 reason)
{
	struct smbd_pdu_out *last;

	lockdep_assert_held(&conn->lock);
	if (list_empty(&conn->tx.queue))
		return false;
	last = list_last_entry(&conn->tx.queue, struct smbd_pdu_out, node);
	last->final_reason = reason;
	queue_work(smbd_wq, &conn->tx.work);
	return true;
}

int smbd_send_queue_pdu(struct smbd_conn *conn, struct smbd_pdu_out *pdu)
{
	unsigned long flags;
	int ret = smbd_send_plan(conn, pdu);

	if (ret)
		return ret;
	spin_lock_irqsave(&conn->lock, flags);
	ret = smbd_send_enqueue_locked(conn, pdu);
	if (!ret)
		smbd_send_kick_locked(conn);
	spin_unlock_irqrestore(&conn->lock, flags);
	return ret;
}

enum smbd_send_step {
	SMBD_STEP_SENT,
	SMBD_STEP_IDLE,		/* nothing to send, or waiting */
	SMBD_STEP_FINAL,	/* sent a connection's last PDU */
	SMBD_STEP_ERROR,
};

static void smbd_send_stall_locked(struct smbd_conn *conn)
{
	lockdep_assert_held(&conn->lock);
	if (conn->tx.stall_since)
		return;
	conn->tx.stall_since = jiffies ?: 1;
	conn->stats.credit_stalls++;
	smbd_count(SMBD_CNT_CREDIT_STALLS, 1);
	smbd_conn_rearm_locked(conn);
}

/* Send one message if there is something to send and it may go. */
static enum smbd_send_step smbd_send_one_locked(struct smbd_conn *conn,
						u32 *final_reason)
{
	struct smbd_fragment frag = {};
	struct smbd_data_hdr hdr = {};
	enum smbd_send_verdict verdict;
	struct smbd_pdu_out *pdu;
	struct smbd_send_io *io;
	bool invalidate = false;
	size_t len;
	u16 grant;

	lockdep_assert_held(&conn->lock);
	if (smbd_conn_state_in(conn->state, SMBD_CONN_BEFORE_NEGOTIATE) ||
	    !smbd_conn_qp_usable_locked(conn))
		return SMBD_STEP_IDLE;
	pdu = list_first_entry_or_null(&conn->tx.queue, struct smbd_pdu_out,
				       node);
	if (!pdu && !conn->tx.message_due &&
	    !smbd_credits_grant_due(&conn->credits))
		return SMBD_STEP_IDLE;
	if (list_empty(&conn->tx.free))
		return SMBD_STEP_IDLE;	/* a send completion kicks again */

	if (conn->keepalive == SMBD_KEEPALIVE_PENDING &&
	    conn->credits.recv_posted == 0) {
		/*
		 * Throttled while smbd is slow, the peer may hold no credit to
		 * answer the keepalive with: grant it one receive, or an idle
		 * but live peer would be dropped for smbd's slowness.
		 */
		int ret = smbd_recv_post_extra_locked(conn);

		if (ret && ret != -ENOBUFS)
			return SMBD_STEP_ERROR;
	}

	verdict = smbd_credits_send(&conn->credits, &grant);
	if (verdict == SMBD_SEND_NEED_GRANT) {
		/* MS-SMBD 3.1.5.9: post one more receive, then grant it */
		int ret = smbd_recv_post_extra_locked(conn);

		if (ret && ret != -ENOBUFS)
			return SMBD_STEP_ERROR;
		/* every receive is out: wait for the peer like for a credit */
		if (!ret)
			verdict = smbd_credits_send(&conn->credits, &grant);
	}
	if (verdict != SMBD_SEND_OK) {
		if (pdu || conn->tx.message_due)
			smbd_send_stall_locked(conn);
		return SMBD_STEP_IDLE;
	}
	conn->tx.stall_since = 0;

	io = list_first_entry(&conn->tx.free, struct smbd_send_io, node);
	list_del(&io->node);
	io->pdu = NULL;
	io->keepalive = conn->keepalive == SMBD_KEEPALIVE_PENDING;
	hdr.credits_requested = conn->cp.send_credit_target;
	hdr.credits_granted = grant;
	if (io->keepalive) {
		hdr.flags = SMBD_FLAG_RESPONSE_REQUESTED;
		conn->keepalive = SMBD_KEEPALIVE_SENT;
		conn->stats.keepalives_sent++;
		smbd_count(SMBD_CNT_KEEPALIVES_SENT, 1);
	}
	conn->tx.message_due = false;

	if (pdu) {
		smbd_frag_get(&pdu->plan, pdu->next_frag, &frag);
		hdr.data_length = frag.length;
		hdr.remaining_data_length = frag.remaining;
		invalidate = pdu->next_frag == 0 &&
			     (pdu->flags & SMBD_SEND_INVALIDATE);
		if (++pdu->next_frag == pdu->plan.count) {
			list_del(&pdu->node);
			io->pdu = pdu;
			smbd_send_head_changed_locked(conn,
						      !list_empty(&conn->tx.queue));
		}
	}
	len = smbd_data_build(&hdr, io->buf);
	if (pdu) {
		memcpy(io->buf + len, pdu->data + frag.offset, frag.length);
		len += frag.length;
	}
	if (smbd_post_send_locked(conn, io, len, invalidate,
				  pdu ? pdu->invalidate_token : 0)) {
		if (io->pdu)
			list_add(&pdu->node, &conn->tx.queue);
		io->pdu = NULL;
		return SMBD_STEP_ERROR;
	}
	if (io->pdu && pdu->final_reason) {
		*final_reason = pdu->final_reason;
		return SMBD_STEP_FINAL;
	}
	return SMBD_STEP_SENT;
}

/*
 * Send messages while there are any and they may go; the send work, or the
 * SEND_PDU ioctl itself, which saves the work's wake-up on the request
 * path. Each message is taken and posted under conn->lock, so concurrent
 * callers keep the fragments in order.
 */
void smbd_send_pump(struct smbd_conn *conn)
{
	enum smbd_send_step step;
	unsigned long flags;
	u32 final_reason = 0;

	do {
		spin_lock_irqsave(&conn->lock, flags);
		step = smbd_send_one_locked(conn, &final_reason);
		if (step == SMBD_STEP_FINAL)
			conn->let_sends_finish = true;
		spin_unlock_irqrestore(&conn->lock, flags);
	} while (step == SMBD_STEP_SENT);

	if (step == SMBD_STEP_ERROR)
		smbd_conn_qp_failed(conn, "posting a send failed");
	else if (step == SMBD_STEP_FINAL)
		smbd_conn_fail(conn, final_reason);
}

void smbd_send_work(struct work_struct *work)
{
	smbd_send_pump(container_of(work, struct smbd_conn, tx.work));
}

static void smbd_send_notify(struct smbd_conn *conn, struct smbd_pdu_out *pdu,
			     int status)
{
	struct smbd_kevent *kev;

	if (!(pdu->flags & SMBD_SEND_NOTIFY) || !conn->route.owner)
		return;
	kev = smbd_kevent_alloc(SMBD_EVENT_SEND_DONE, conn->id, GFP_KERNEL);
	if (!kev)
		return;
	kev->ev.user_data = pdu->user_data;
	kev->ev.status = status;
	if (smbd_event_push(conn->route.owner, kev))
		smbd_kevent_free(kev);
}

void smbd_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct smbd_send_io *io = container_of(wc->wr_cqe, struct smbd_send_io,
					       cqe);
	struct smbd_conn *conn = io->conn;
	struct smbd_pdu_out *pdu;
	unsigned long flags;
	bool idle;

	spin_lock_irqsave(&conn->lock, flags);
	pdu = io->pdu;
	io->pdu = NULL;
	list_add(&io->node, &conn->tx.free);
	idle = --conn->tx.posted == 0;
	if (pdu && wc->status == IB_WC_SUCCESS) {
		conn->stats.pdus_sent++;
		conn->stats.bytes_sent += pdu->len;
	}
	/*
	 * The keepalive request reached the peer only now: RDMA READs and
	 * WRITEs ahead of it on the send queue may have held it back for
	 * longer than the peer's time to answer, which starts here.
	 */
	if (io->keepalive && wc->status == IB_WC_SUCCESS &&
	    conn->keepalive == SMBD_KEEPALIVE_SENT)
		smbd_conn_set_deadline_locked(conn,
					      conn->params->keepalive_timeout_ms);
	io->keepalive = false;
	/* a send slot is free again */
	smbd_send_kick_locked(conn);
	spin_unlock_irqrestore(&conn->lock, flags);

	if (wc->status != IB_WC_SUCCESS && wc->status != IB_WC_WR_FLUSH_ERR) {
		smbd_conn_info(conn, "send failed: %s\n",
			       ib_wc_status_msg(wc->status));
		smbd_conn_qp_failed(conn, "a send failed");
	}
	if (pdu) {
		if (wc->status == IB_WC_SUCCESS) {
			smbd_count(SMBD_CNT_PDUS_SENT, 1);
			smbd_count(SMBD_CNT_BYTES_SENT, pdu->len);
		}
		smbd_send_notify(conn, pdu,
				 wc->status == IB_WC_SUCCESS ? 0 : -ECONNRESET);
		smbd_send_pdu_free(conn, pdu);
	}
	if (idle)
		wake_up(&conn->tx.wait);
}

/* Teardown, after the drain: what never went out is reported and freed. */
void smbd_send_flush(struct smbd_conn *conn)
{
	struct smbd_pdu_out *pdu, *tmp;
	unsigned long flags;
	LIST_HEAD(list);

	spin_lock_irqsave(&conn->lock, flags);
	list_splice_init(&conn->tx.queue, &list);
	spin_unlock_irqrestore(&conn->lock, flags);
	list_for_each_entry_safe(pdu, tmp, &list, node) {
		smbd_send_notify(conn, pdu, -ENOTCONN);
		smbd_send_pdu_free(conn, pdu);
	}
}

static int smbd_send_entry_validate(const struct smbd_send_entry *e)
{
	if (e->flags & ~(SMBD_SEND_NOTIFY | SMBD_SEND_INVALIDATE))
		return -EINVAL;
	if (e->__reserved)
		return -EINVAL;
	if (e->invalidate_token && !(e->flags & SMBD_SEND_INVALIDATE))
		return -EINVAL;
	if (e->iov_count < 1 || e->iov_count > SMBD_MAX_IOVS)
		return -EINVAL;
	return 0;
}

/*
 * What needs no connection: the entry's fields, its iovecs and the PDU
 * length they make (1..SMBD_MAX_PDU_SIZE).
 */
int smbd_send_entry_check(struct smbd_send_req *r)
{
	const struct smbd_send_entry *e = &r->entry;
	u32 i;
	int ret;

	ret = smbd_send_entry_validate(e);
	if (ret)
		return ret;
	if (copy_from_user(r->iov, u64_to_user_ptr(e->iov_ptr),
			   e->iov_count * sizeof(r->iov[0])))
		return -EFAULT;
	r->total = 0;
	for (i = 0; i < e->iov_count; i++) {
		if (r->iov[i].len > SMBD_MAX_PDU_SIZE)
			return -EMSGSIZE;
		r->total += r->iov[i].len;
	}
	if (r->total == 0)
		return -EINVAL;
	return r->total > SMBD_MAX_PDU_SIZE ? -EMSGSIZE : 0;
}

/*
 * Copy the checked PDU into kernel memory for @conn and cut it into its
 * messages (not queued yet): the caller may reuse its buffers.
 */
int smbd_send_entry_copy(struct smbd_conn *conn,
			 const struct smbd_send_req *r,
			 struct smbd_pdu_out **out)
{
	const struct smbd_send_entry *e = &r->entry;
	struct smbd_pdu_out *pdu;
	u32 i, off = 0;
	int ret;

	if (r->total > conn->cp.max_fragmented_send_size)
		return -EMSGSIZE;
	ret = smbd_send_charge(conn, r->total);
	if (ret)
		return ret;
	pdu = smbd_pdu_out_alloc(r->total);
	if (!pdu) {
		smbd_send_uncharge(conn, r->total);
		return -ENOMEM;
	}
	pdu->charged = r->total;
	for (i = 0; i < e->iov_count; i++) {
		if (copy_from_user(pdu->data + off,
				   u64_to_user_ptr(r->iov[i].base),
				   r->iov[i].len)) {
			smbd_send_pdu_free(conn, pdu);
			return -EFAULT;
		}
		off += r->iov[i].len;
	}
	pdu->flags = e->flags;
	pdu->invalidate_token = e->invalidate_token;
	pdu->user_data = e->user_data;
	if (smbd_send_plan(conn, pdu)) {
		smbd_send_pdu_free(conn, pdu);
		return -EMSGSIZE;
	}
	*out = pdu;
	return 0;
}

/*
 * Queue a copied @pdu and send what may go now, in the caller's context:
 * that saves the send work's wake-up on the request path. On error the
 * caller still owns @pdu.
 */
static int smbd_send_submit(struct smbd_conn *conn, struct smbd_pdu_out *pdu)
{
	unsigned long flags;
	int ret;

	spin_lock_irqsave(&conn->lock, flags);
	ret = smbd_send_enqueue_locked(conn, pdu);
	spin_unlock_irqrestore(&conn->lock, flags);
	if (!ret)
		smbd_send_pump(conn);
	return ret;
}

static int smbd_send_entry(struct smbd_file *file, struct smbd_send_req *r)
{
	struct smbd_pdu_out *pdu;
	struct smbd_conn *conn;
	int ret;

	ret = smbd_send_entry_check(r);
	if (ret)
		return ret;
	conn = smbd_file_conn(file, r->entry.conn_id);
	if (!conn)
		return -ENOENT;
	ret = smbd_send_entry_copy(conn, r, &pdu);
	if (!ret) {
		smbd_route_confirm(conn, pdu->data, pdu->len);
		ret = smbd_send_submit(conn, pdu);
		if (ret)
			smbd_send_pdu_free(conn, pdu);
	}
	smbd_conn_put(conn);
	return ret;
}

int smbd_ioctl_send_pdu(struct file *filp, void *cmd)
{
	struct smbd_file *file = filp->private_data;
	struct smbd_send_pdu *sp = cmd;
	u8 __user *entries = u64_to_user_ptr(sp->entries_ptr);
	struct smbd_send_req r;
	u32 i;
	int ret;

	if (sp->flags || sp->__reserved)
		return -EINVAL;
	if (sp->count < 1 || sp->count > SMBD_MAX_BATCH)
		return -EINVAL;
	if (sp->entry_size < SMBD_SEND_ENTRY_SIZE_V1 ||
	    sp->entry_size > SMBD_MAX_ELEMENT_SIZE)
		return -EINVAL;

	for (i = 0; i < sp->count; i++) {
		ret = copy_struct_from_user(&r.entry, sizeof(r.entry),
					    entries + (size_t)i * sp->entry_size,
					    sp->entry_size);
		if (!ret)
			ret = smbd_send_entry(file, &r);
		if (ret) {
			sp->out_done = i;
			return i ? 0 : ret;
		}
	}
	sp->out_done = sp->count;
	return 0;
}
