// SPDX-License-Identifier: GPL-2.0-only
/*
 * SMBD_IOC_RDMA_RW: RDMA WRITE (serves an SMB2 READ) and RDMA READ (serves
 * an SMB2 WRITE) between the owner's pool pages and the client memory an
 * SMB2 request describes with Buffer Descriptor V1 entries.
 *
 * Each operation becomes one rdma_rw context per descriptor (the rdma_rw
 * API registers memory where the device needs it, as iWARP does, so a
 * context covers page-aligned pieces only), chained and posted together;
 * only the last work request is signaled, and since a send queue completes
 * in order its completion ends the operation. The QP has room for
 * rw_ops_max rdma_rw operations (a WR, or a registration cycle); an
 * operation waits in rw.pending until its share is free, so a burst of
 * requests queues instead of failing. One poster at a time takes them, so
 * that they are posted, and complete, in the order they were submitted.
 *
 * The QP outside conn->lock: rdma_rw_ctx_init() allocates and maps, so the
 * submitter holds rw.sem for reading; teardown takes it for writing after
 * the drain, when nothing can be posted any more, before it destroys the
 * QP. Every operation ends with one RDMA_DONE, before DISCONNECTED.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ktime.h>
#include <linux/log2.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/uaccess.h>
#include <rdma/rw.h>

#include "buffer_desc.h"
#include "smbdirect.h"

struct smbd_rw_ctx {
	struct rdma_rw_ctx rw;
	struct scatterlist *sg;
	u32 nents;
	u32 len;
	bool ready;		/* rdma_rw_ctx_init() succeeded */
	u64 remote_addr;
	u32 rkey;
};

struct smbd_rw_req {
	struct list_head node;		/* conn->rw.pending or rw.posted */
	struct ib_cqe cqe;		/* the last, signaled work request */
	struct ib_cqe err_cqe;		/* the others: only errors complete */
	bool failed;			/* one of those failed */
	struct smbd_conn *conn;		/* a reference */
	struct smbd_kevent *done_ev;	/* RDMA_DONE, allocated up front */
	struct smbd_pdu_out *reply;	/* sent once the WRs are posted */
	enum dma_data_direction dir;
	u32 cost;			/* rdma_rw operations reserved */
	u64 bytes;
	ktime_t start;
	struct scatterlist *sgl;	/* all contexts' entries */
	u32 nr_ctx;
	struct smbd_rw_ctx ctx[];
};

static const char *smbd_rw_dir_name(const struct smbd_rw_req *req)
{
	return req->dir == DMA_TO_DEVICE ? "write" : "read";
}

/* Check the slices against the pool: inside a buffer, none overlapping. */
static int smbd_slice_cmp(const void *a, const void *b)
{
	const struct smbd_slice *x = a, *y = b;

	if (x->buffer != y->buffer)
		return x->buffer < y->buffer ? -1 : 1;
	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return 0;
}

static int smbd_rw_check_slices(const struct smbd_slice *s, u32 n,
				u32 buffers, u64 *total)
{
	struct smbd_slice *sorted;
	u32 i;
	int ret = 0;

	*total = 0;
	for (i = 0; i < n; i++) {
		if (s[i].__reserved || !s[i].length ||
		    s[i].buffer >= buffers ||
		    s[i].offset >= smbd_buffer_size ||
		    s[i].length > smbd_buffer_size - s[i].offset)
			return -EINVAL;
		*total += s[i].length;
	}
	/* DMA into one page twice in an operation is never meant */
	if (n == 1)
		return 0;
	sorted = kmemdup(s, n * sizeof(*s), GFP_KERNEL);
	if (!sorted)
		return -ENOMEM;
	sort(sorted, n, sizeof(*sorted), smbd_slice_cmp, NULL);
	for (i = 1; i < n; i++) {
		if (sorted[i].buffer == sorted[i - 1].buffer &&
		    sorted[i].offset < sorted[i - 1].offset +
				       sorted[i - 1].length) {
			ret = -EINVAL;
			break;
		}
	}
	kfree(sorted);
	return ret;
}

/* Walks the slices as the pool pages they name. */
struct smbd_slice_pos {
	const struct smbd_slice *s;
	u32 off;			/* into *s */
};

/*
 * Cut the data into rdma_rw contexts and, with @req, fill them: one per
 * descriptor share, and a new one wherever a page is not used to its end
 * or from its start. rdma_rw may register the memory (iWARP, devices with
 * max_sgl_rd, ib_core's force_mr), and a registration maps whole pages
 * only; slices of whole buffers, as smbd uses them, never split. Returns
 * the contexts, *nents the scatterlist entries.
 */
static u32 smbd_rw_layout(struct smbd_file *file,
			  const struct smbd_slice *slices, const u8 *descs,
			  u32 desc_count, u64 total, struct smbd_rw_req *req,
			  u32 *nents)
{
	u32 pages_per_buf = smbd_buffer_size >> PAGE_SHIFT;
	struct smbd_slice_pos pos = { .s = slices };
	struct smbd_rw_ctx *c = NULL;
	struct smbd_buffer_desc d;
	u32 i, nctx = 0, n = 0;
	bool page_end = true;

	for (i = 0; i < desc_count && total; i++) {
		u64 len, done = 0;

		smbd_buffer_desc_get(descs, i, &d);
		len = min_t(u64, total, d.length);
		total -= len;
		while (done < len) {
			u32 at = pos.s->offset + pos.off;
			u32 in_page = offset_in_page(at);
			u32 chunk = min_t(u64, len - done,
					  min_t(u32, PAGE_SIZE - in_page,
						pos.s->length - pos.off));

			if (!done || in_page || !page_end) {
				c = req ? &req->ctx[nctx] : NULL;
				if (c) {
					c->sg = &req->sgl[n];
					c->remote_addr = d.offset + done;
					c->rkey = d.token;
				}
				nctx++;
			}
			if (c) {
				u32 page = pos.s->buffer * pages_per_buf +
					   (at >> PAGE_SHIFT);

				sg_set_page(&req->sgl[n], file->pool_pages[page],
					    chunk, in_page);
				c->nents++;
				c->len += chunk;
			}
			n++;
			done += chunk;
			page_end = in_page + chunk == PAGE_SIZE;
			pos.off += chunk;
			if (pos.off == pos.s->length) {
				pos.s++;
				pos.off = 0;
			}
		}
	}
	*nents = n;
	return nctx;
}

/*
 * rdma_rw operations (WRs or registrations) a context may take, at most:
 * a registration per rw_mr_pages pages where rdma_rw may register, else a
 * WR per SGE limit. With ib_core's force_mr every operation registers, at
 * most 256 pages each, which the SGE count (at most 32) never undercounts.
 */
static u32 smbd_rw_cost(const struct smbd_conn *conn, bool write, u32 nents)
{
	u32 mr = conn->rw.mr_pages ? DIV_ROUND_UP(nents, conn->rw.mr_pages) : 0;

	if (!write && conn->iwarp)
		return mr;
	return max(mr, DIV_ROUND_UP(nents, write ? conn->rw.write_sge :
						   conn->rw.read_sge));
}

static void smbd_rw_req_free(struct smbd_rw_req *req)
{
	if (req->done_ev)
		smbd_kevent_free(req->done_ev);
	if (req->reply)
		smbd_send_pdu_free(req->conn, req->reply);
	kvfree(req->sgl);
	smbd_conn_put(req->conn);
	kvfree(req);
}

/*
 * The request of one op moving @bytes (the lesser of the slices' and the
 * descriptors' totals): its contexts, scatterlists and RDMA_DONE event.
 * Descriptors past the data get no context.
 */
static int smbd_rw_build(struct smbd_file *file, struct smbd_conn *conn,
			 const struct smbd_rw_op *op,
			 const struct smbd_slice *slices, u64 bytes,
			 const u8 *descs, struct smbd_rw_req **out)
{
	struct smbd_rw_req *req;
	u32 i, nctx, nents;

	nctx = smbd_rw_layout(file, slices, descs, op->desc_count, bytes, NULL,
			      &nents);
	req = kvzalloc(struct_size(req, ctx, nctx), GFP_KERNEL_ACCOUNT);
	if (!req)
		return -ENOMEM;
	req->nr_ctx = nctx;
	req->conn = conn;
	kref_get(&conn->ref);
	req->dir = op->direction == SMBD_RW_WRITE_TO_PEER ? DMA_TO_DEVICE :
							    DMA_FROM_DEVICE;
	req->bytes = bytes;
	req->done_ev = smbd_kevent_alloc(SMBD_EVENT_RDMA_DONE, conn->id,
					 GFP_KERNEL_ACCOUNT);
	req->sgl = kvcalloc(nents, sizeof(*req->sgl), GFP_KERNEL_ACCOUNT);
	if (!req->done_ev || !req->sgl) {
		smbd_rw_req_free(req);
		return -ENOMEM;
	}
	req->done_ev->ev.user_data = op->user_data;
	sg_init_table(req->sgl, nents);
	smbd_rw_layout(file, slices, descs, op->desc_count, bytes, req, &nents);
	for (i = 0; i < nctx; i++) {
		sg_mark_end(&req->ctx[i].sg[req->ctx[i].nents - 1]);
		req->cost += smbd_rw_cost(conn, req->dir == DMA_TO_DEVICE,
					  req->ctx[i].nents);
	}
	if (req->cost > conn->rw.ops_max) {
		smbd_rw_req_free(req);
		return -EMSGSIZE;
	}
	*out = req;
	return 0;
}

static void smbd_rw_destroy_ctxs(struct smbd_rw_req *req)
{
	struct smbd_conn *conn = req->conn;
	u32 i;

	for (i = 0; i < req->nr_ctx; i++) {
		struct smbd_rw_ctx *c = &req->ctx[i];

		if (c->ready)
			rdma_rw_ctx_destroy(&c->rw, conn->cm_id->qp,
					    conn->cm_id->port_num, c->sg,
					    c->nents, req->dir);
		c->ready = false;
	}
}

static u32 smbd_lat_bucket(s64 us)
{
	if (us < 16)
		return 0;
	return min_t(u32, ilog2(us) - 3, SMBD_LAT_BUCKETS - 1);
}

/*
 * The operation is over (@status 0 or -errno, its contexts destroyed):
 * account it and tell the owner. A file that is closing drops the event.
 */
static void smbd_rw_finish(struct smbd_rw_req *req, int status)
{
	struct smbd_conn *conn = req->conn;
	bool write = req->dir == DMA_TO_DEVICE;
	u64 bytes = status ? 0 : req->bytes;
	u32 bucket = smbd_lat_bucket(ktime_us_delta(ktime_get(), req->start));
	struct smbd_kevent *kev = req->done_ev;
	unsigned long flags;

	spin_lock_irqsave(&conn->lock, flags);
	conn->stats.rdma_inflight--;
	if (status) {
		conn->stats.rdma_errors++;
	} else if (write) {
		conn->stats.rdma_writes++;
		conn->stats.rdma_write_bytes += bytes;
	} else {
		conn->stats.rdma_reads++;
		conn->stats.rdma_read_bytes += bytes;
	}
	conn->stats.rdma_lat[bucket]++;
	spin_unlock_irqrestore(&conn->lock, flags);
	smbd_count_rdma(write, status, bytes, bucket);

	kev->ev.status = status;
	kev->ev.u.rdma_done.bytes = bytes;
	req->done_ev = NULL;
	if (smbd_event_push(conn->route.owner, kev))
		smbd_kevent_free(kev);
	smbd_rw_req_free(req);
}

/*
 * Give back an operation's budget; a waiting operation may go now, unless
 * @qp_ok is false: after a failed or flushed completion the QP is in error
 * even if nobody has failed the connection yet. Waiting operations of a QP
 * that is not usable end in the teardown.
 */
static void smbd_rw_release(struct smbd_conn *conn, u32 cost, bool qp_ok)
{
	unsigned long flags;

	spin_lock_irqsave(&conn->lock, flags);
	conn->rw.ops_free += cost;
	if (qp_ok && !list_empty(&conn->rw.pending) &&
	    smbd_conn_qp_usable_locked(conn))
		queue_work(smbd_wq, &conn->rw.work);
	spin_unlock_irqrestore(&conn->lock, flags);
}

/*
 * Map, register and post one operation whose budget is reserved, then
 * queue its reply, which the QP delivers after the WRITEs posted before it.
 */
static void smbd_rw_start(struct smbd_rw_req *req)
{
	struct smbd_conn *conn = req->conn;
	struct rdma_cm_id *id = conn->cm_id;
	const struct ib_send_wr *bad = NULL;
	struct ib_send_wr *first = NULL, *wr;
	struct smbd_pdu_out *reply;
	unsigned long flags;
	bool queued;
	int ret = 0;
	u32 i;

	for (i = 0; i < req->nr_ctx; i++) {
		struct smbd_rw_ctx *c = &req->ctx[i];

		ret = rdma_rw_ctx_init(&c->rw, id->qp, id->port_num, c->sg,
				       c->nents, 0, c->remote_addr, c->rkey,
				       req->dir);
		if (ret < 0)
			break;
		c->ready = true;
	}
	if (ret < 0) {
		smbd_conn_warn(conn, "RDMA %s setup: %pe\n",
			       smbd_rw_dir_name(req), ERR_PTR(ret));
		/* the connection stays: EIO would say it goes */
		if (ret != -EINVAL)
			ret = -ENOMEM;
		goto end;
	}
	/*
	 * Only the last work request signals: the send queue completes in
	 * order. The others (RDMA, registration, invalidation) complete
	 * only in error, and then say which operation failed.
	 */
	for (i = req->nr_ctx; i-- > 0;)
		first = rdma_rw_ctx_wrs(&req->ctx[i].rw, id->qp, id->port_num,
					&req->cqe, first);
	for (wr = first; wr; wr = wr->next)
		if (!wr->wr_cqe)
			wr->wr_cqe = &req->err_cqe;

	spin_lock_irqsave(&conn->lock, flags);
	if (!smbd_conn_qp_usable_locked(conn)) {
		spin_unlock_irqrestore(&conn->lock, flags);
		ret = -ENOTCONN;
		goto end;
	}
	list_add_tail(&req->node, &conn->rw.posted);
	/* once posted, the completion may free @req */
	reply = req->reply;
	req->reply = NULL;
	ret = ib_post_send(id->qp, first, &bad);
	/* nothing posted: nothing completes; else teardown ends it */
	if (ret && bad == first)
		list_del(&req->node);
	/*
	 * Under the lock the completion takes before RDMA_DONE: the reply is
	 * queued before anyone can see that. A connection already ending
	 * sends nothing more.
	 */
	queued = !ret && reply && !smbd_send_enqueue_locked(conn, reply);
	spin_unlock_irqrestore(&conn->lock, flags);
	if (queued) {
		smbd_count(SMBD_CNT_RDMA_REPLIES, 1);
		smbd_send_pump(conn);
	} else if (reply) {
		smbd_send_pdu_free(conn, reply);
	}
	if (!ret)
		return;
	smbd_conn_warn(conn, "posting RDMA: %pe\n", ERR_PTR(ret));
	smbd_conn_qp_failed(conn, "posting RDMA failed");
	if (bad != first) {
		/* partly posted: teardown ends it once the QP is drained */
		req->failed = true;
		return;
	}
	ret = -EIO;
end:
	smbd_rw_destroy_ctxs(req);
	smbd_rw_release(conn, req->cost, true);
	smbd_rw_finish(req, ret);
}

/* An unsignaled work request of @req completed: only errors do. */
static void smbd_rw_error(struct ib_cq *cq, struct ib_wc *wc)
{
	struct smbd_rw_req *req = container_of(wc->wr_cqe, struct smbd_rw_req,
					       err_cqe);

	if (wc->status == IB_WC_SUCCESS || wc->status == IB_WC_WR_FLUSH_ERR)
		return;
	smbd_conn_info(req->conn, "RDMA %s failed: %s\n",
		       smbd_rw_dir_name(req), ib_wc_status_msg(wc->status));
	req->failed = true;
	smbd_conn_qp_failed(req->conn, "an RDMA read or write failed");
}

static void smbd_rw_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct smbd_rw_req *req = container_of(wc->wr_cqe, struct smbd_rw_req,
					       cqe);
	struct smbd_conn *conn = req->conn;
	unsigned long flags;
	int status = 0;

	if (wc->status != IB_WC_SUCCESS && wc->status != IB_WC_WR_FLUSH_ERR) {
		smbd_conn_info(conn, "RDMA %s failed: %s\n",
			       smbd_rw_dir_name(req),
			       ib_wc_status_msg(wc->status));
		req->failed = true;
	}
	if (req->failed)
		status = -EIO;
	else if (wc->status == IB_WC_WR_FLUSH_ERR)
		status = -ENOTCONN;
	/* the QP is in error now: the spec ends the connection */
	if (req->failed)
		smbd_conn_qp_failed(conn, "an RDMA read or write failed");

	spin_lock_irqsave(&conn->lock, flags);
	list_del(&req->node);
	spin_unlock_irqrestore(&conn->lock, flags);
	smbd_rw_destroy_ctxs(req);
	smbd_rw_release(conn, req->cost, wc->status == IB_WC_SUCCESS);
	/* a teardown that lets sends finish waits for these too */
	wake_up_all(&conn->tx.wait);
	smbd_rw_finish(req, status);
}

/* Take the first waiting operation if its budget is free. */
static struct smbd_rw_req *smbd_rw_next_locked(struct smbd_conn *conn)
{
	struct smbd_rw_req *req;

	lockdep_assert_held(&conn->lock);
	if (!smbd_conn_qp_usable_locked(conn))
		return NULL;
	req = list_first_entry_or_null(&conn->rw.pending, struct smbd_rw_req,
				       node);
	if (!req || req->cost > conn->rw.ops_free)
		return NULL;
	list_del(&req->node);
	conn->rw.ops_free -= req->cost;
	return req;
}

/*
 * Post the waiting operations, in order, while their budget is free. The
 * submitter and rw.work would otherwise each take one and could post them
 * the other way round: a submitter finding a poster at work leaves its
 * operation to it, which takes it under the lock before it stops.
 */
static void smbd_rw_pump(struct smbd_conn *conn)
{
	struct smbd_rw_req *req;
	unsigned long flags;

	spin_lock_irqsave(&conn->lock, flags);
	if (conn->rw.posting) {
		spin_unlock_irqrestore(&conn->lock, flags);
		return;
	}
	conn->rw.posting = true;
	while ((req = smbd_rw_next_locked(conn))) {
		spin_unlock_irqrestore(&conn->lock, flags);
		smbd_rw_start(req);
		spin_lock_irqsave(&conn->lock, flags);
	}
	conn->rw.posting = false;
	spin_unlock_irqrestore(&conn->lock, flags);
}

void smbd_rw_work(struct work_struct *work)
{
	struct smbd_conn *conn = container_of(work, struct smbd_conn, rw.work);

	down_read(&conn->rw.sem);
	smbd_rw_pump(conn);
	up_read(&conn->rw.sem);
}

/* Queue @req behind the waiting ones and start what can go. */
static int smbd_rw_submit(struct smbd_conn *conn, struct smbd_rw_req *req)
{
	unsigned long flags;
	int ret = 0;

	down_read(&conn->rw.sem);
	spin_lock_irqsave(&conn->lock, flags);
	if (conn->state != SMBD_CONN_OWNED) {
		ret = -ENOTCONN;
	} else {
		req->cqe.done = smbd_rw_done;
		req->err_cqe.done = smbd_rw_error;
		req->start = ktime_get();
		conn->stats.rdma_inflight++;
		smbd_count(SMBD_CNT_RDMA_INFLIGHT, 1);
		list_add_tail(&req->node, &conn->rw.pending);
	}
	spin_unlock_irqrestore(&conn->lock, flags);
	if (!ret)
		smbd_rw_pump(conn);
	up_read(&conn->rw.sem);
	return ret;
}

/*
 * Teardown, after the drain: no completion runs any more and nothing is
 * posted; wait out a submitter still using the QP, then end what never
 * completed: operations still waiting, and any whose post failed.
 */
void smbd_rw_shutdown(struct smbd_conn *conn)
{
	struct smbd_rw_req *req, *tmp;
	unsigned long flags;
	LIST_HEAD(ended);

	cancel_work_sync(&conn->rw.work);
	down_write(&conn->rw.sem);
	up_write(&conn->rw.sem);

	spin_lock_irqsave(&conn->lock, flags);
	list_splice_init(&conn->rw.posted, &ended);
	list_splice_tail_init(&conn->rw.pending, &ended);
	spin_unlock_irqrestore(&conn->lock, flags);
	list_for_each_entry_safe(req, tmp, &ended, node) {
		list_del(&req->node);
		smbd_rw_destroy_ctxs(req);
		smbd_rw_finish(req, req->failed ? -EIO : -ENOTCONN);
	}
}

/*
 * The most a transfer of @bytes in page-aligned pool memory costs, cut by
 * up to SMBD_MAX_DESCRIPTORS descriptors: each cut starts a context, which
 * may end in a part-used WR and begin with a part-used page.
 */
static u32 smbd_rw_largest_cost(const struct smbd_conn *conn, u32 bytes)
{
	u32 nents = DIV_ROUND_UP(bytes, PAGE_SIZE) + SMBD_MAX_DESCRIPTORS;

	return max(smbd_rw_cost(conn, true, nents),
		   smbd_rw_cost(conn, false, nents)) + SMBD_MAX_DESCRIPTORS;
}

/*
 * What rdma_rw makes of an operation on this device (the QP takes
 * rw_write_sge SGEs; ib_core gives RDMA READ the lesser of that and
 * max_sge_rd), and the budget of a new connection, before its QP: at least
 * SMBD_RW_OPS_BUDGET and one transfer of max_read_write_size (an 8 MiB
 * RDMA WRITE on soft-iWARP's 6 SGEs is 342 WRs), within half of what the
 * device holds. Where even that does not fit, the connection offers a
 * smaller max_read_write_size, so that every transfer it allows can run.
 */
void smbd_rw_size(struct smbd_conn *conn)
{
	struct ib_device *dev = conn->cm_id->device;
	const struct ib_device_attr *attrs = &dev->attrs;
	u32 per_op = rdma_rw_max_send_wr(dev, conn->cm_id->port_num, 1, 0);
	u32 *rw_size = &conn->lp.max_read_write_size;
	u32 n;

	conn->rw.write_sge = clamp_t(u32, attrs->max_send_sge, 1, 32);
	conn->rw.read_sge = clamp_t(u32, attrs->max_sge_rd, 1,
				    conn->rw.write_sge);
	/* iWARP registers every RDMA READ's sink */
	if (conn->iwarp || attrs->max_sgl_rd)
		conn->rw.mr_pages = min_t(u32,
					  attrs->max_fast_reg_page_list_len,
					  256);

	n = max_t(u32, SMBD_RW_OPS_BUDGET,
		  smbd_rw_largest_cost(conn, *rw_size));
	n = min_t(u32, n, attrs->max_qp_wr / 2 / per_op);
	n = min_t(u32, n, attrs->max_cqe / 4 / per_op);
	while (*rw_size > PAGE_SIZE && smbd_rw_largest_cost(conn, *rw_size) > n)
		*rw_size /= 2;
	conn->rw.ops_max = n;
	conn->rw.ops_free = n;
}

/* Budget and scatter/gather limits of a new QP (conn.c). */
void smbd_rw_init_qp_attr(struct smbd_conn *conn, struct ib_qp_init_attr *attr)
{
	attr->cap.max_send_sge = conn->rw.write_sge;
	attr->cap.max_rdma_ctxs = conn->rw.ops_max;
}

static int smbd_rw_op_validate(const struct smbd_rw_op *op)
{
	if (op->__reserved || op->__reserved2)
		return -EINVAL;
	if (!op->reply_ptr != !op->reply_size)
		return -EINVAL;
	if (op->reply_ptr &&
	    (op->direction != SMBD_RW_WRITE_TO_PEER ||
	     op->reply_size < SMBD_SEND_ENTRY_SIZE_V1 ||
	     op->reply_size > SMBD_MAX_ELEMENT_SIZE))
		return -EINVAL;
	if (op->direction != SMBD_RW_WRITE_TO_PEER &&
	    op->direction != SMBD_RW_READ_FROM_PEER)
		return -EINVAL;
	if (op->slice_count < 1 || op->slice_count > SMBD_MAX_SLICES)
		return -EINVAL;
	if (op->desc_count < 1 || op->desc_count > SMBD_MAX_DESCRIPTORS)
		return -EINVAL;
	return 0;
}

/* The op's reply entry, checked as SEND_PDU checks one, for its connection. */
static int smbd_rw_reply_check(const struct smbd_rw_op *op,
			       struct smbd_send_req *reply)
{
	int ret;

	ret = copy_struct_from_user(&reply->entry, sizeof(reply->entry),
				    u64_to_user_ptr(op->reply_ptr),
				    op->reply_size);
	if (ret)
		return ret;
	/* RDMA_DONE already tells whether it went */
	if (reply->entry.conn_id != op->conn_id ||
	    reply->entry.flags & SMBD_SEND_NOTIFY)
		return -EINVAL;
	return smbd_send_entry_check(reply);
}

/* One op: copy and check what userspace named, then build and submit. */
static int smbd_rw_op(struct smbd_file *file, const struct smbd_rw_op *op,
		      struct smbd_slice *slices, u8 *descs,
		      struct smbd_send_req *reply)
{
	u32 desc_len = op->desc_count * SMBD_BUFFER_DESC_SIZE;
	struct smbd_rw_req *req;
	struct smbd_conn *conn;
	u32 buffers = smbd_pool_count(file);
	u64 total, desc_total;
	u32 count;
	int ret;

	ret = smbd_rw_op_validate(op);
	if (ret)
		return ret;
	if (copy_from_user(slices, u64_to_user_ptr(op->slices_ptr),
			   op->slice_count * sizeof(*slices)) ||
	    copy_from_user(descs, u64_to_user_ptr(op->descs_ptr), desc_len))
		return -EFAULT;
	ret = smbd_rw_check_slices(slices, op->slice_count, buffers, &total);
	if (ret)
		return ret;
	if (smbd_buffer_desc_validate(descs, desc_len, SMBD_MAX_DESCRIPTORS,
				      U64_MAX, &count, &desc_total))
		return -EINVAL;
	if (op->reply_ptr) {
		ret = smbd_rw_reply_check(op, reply);
		if (ret)
			return ret;
	}
	/* -EBUSY only if a first GET_MEM_PARAMS chose another count meanwhile */
	ret = smbd_pool_get(file, buffers);
	if (ret)
		return ret;

	conn = smbd_file_conn(file, op->conn_id);
	if (!conn)
		return -ENOENT;
	if (total > conn->cp.max_read_write_size) {
		ret = -EMSGSIZE;
	} else {
		ret = smbd_rw_build(file, conn, op, slices,
				    min(total, desc_total), descs, &req);
		if (!ret && op->reply_ptr) {
			ret = smbd_send_entry_copy(conn, reply, &req->reply);
			/* EAGAIN says the file has too many operations */
			if (ret == -EAGAIN)
				ret = -ENOBUFS;
			if (ret)
				smbd_rw_req_free(req);
		}
		if (!ret) {
			ret = smbd_rw_submit(conn, req);
			if (ret)
				smbd_rw_req_free(req);
		}
	}
	smbd_conn_put(conn);
	return ret;
}

int smbd_ioctl_rdma_rw(struct file *filp, void *cmd)
{
	struct smbd_file *file = filp->private_data;
	struct smbd_rdma_rw *rw = cmd;
	u8 __user *ops = u64_to_user_ptr(rw->ops_ptr);
	struct smbd_send_req reply;	/* an op's, one at a time */
	struct smbd_slice *slices;
	struct smbd_rw_op op;
	u8 *descs;
	u32 i;
	int ret = 0;

	if (rw->flags || rw->__reserved)
		return -EINVAL;
	if (rw->count < 1 || rw->count > SMBD_MAX_BATCH)
		return -EINVAL;
	if (rw->op_size < SMBD_RW_OP_SIZE_V1 ||
	    rw->op_size > SMBD_MAX_ELEMENT_SIZE)
		return -EINVAL;

	slices = kvmalloc_array(SMBD_MAX_SLICES, sizeof(*slices), GFP_KERNEL);
	descs = kmalloc_array(SMBD_MAX_DESCRIPTORS, SMBD_BUFFER_DESC_SIZE,
			      GFP_KERNEL);
	if (!slices || !descs) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < rw->count; i++) {
		ret = copy_struct_from_user(&op, sizeof(op),
					    ops + (size_t)i * rw->op_size,
					    rw->op_size);
		if (ret)
			break;
		/* RDMA_DONE is never dropped: bound what may be unread */
		if (atomic_inc_return(&file->rw_outstanding) >
		    SMBD_EVENT_QUEUE_LEN)
			ret = -EAGAIN;
		else
			ret = smbd_rw_op(file, &op, slices, descs, &reply);
		if (ret) {
			atomic_dec(&file->rw_outstanding);
			break;
		}
	}
	rw->out_done = i;
	if (i)
		ret = 0;
out:
	kvfree(slices);
	kfree(descs);
	return ret;
}
