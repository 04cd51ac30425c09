// SPDX-License-Identifier: GPL-2.0-only
/*
 * Each file's event queue (after ucma.c): a list and a wait queue, bounded
 * where each event comes from (smbd_event_droppable()). SEND_DONE and
 * NEW_CONNECTION beyond the queue's length are dropped and counted; the
 * next GET_EVENTS starts with an OVERFLOW record, so loss is never silent.
 * The others are never dropped: without them the owner could not read its
 * PDUs, know its connections or reuse its buffers. GET_EVENTS copies event
 * records and their data (PDUs, NEGOTIATE bytes) to the caller's buffers.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "smbdirect.h"

struct smbd_kevent *smbd_kevent_alloc(u32 type, u32 conn_id, gfp_t gfp)
{
	struct smbd_kevent *kev = kzalloc(sizeof(*kev), gfp);

	if (!kev)
		return NULL;
	kev->ev.type = type;
	kev->ev.conn_id = conn_id;
	return kev;
}

void smbd_kevent_free(struct smbd_kevent *kev)
{
	/* the release may free what an embedded event is part of */
	bool embedded = kev->embedded;

	if (kev->release)
		kev->release(kev);
	if (embedded)
		return;
	kvfree(kev->data);
	kfree(kev);
}

/*
 * Whether the queue's length bounds @type. The others are bounded where they
 * come from and never dropped, so that a full queue cannot cost a healthy
 * connection anything: a connection's unread PDUs (recv.c), the RDMA_DONEs
 * of a file's operations (rw_outstanding), one NEW_CHANNEL, one SEND_ROOM
 * at a time and one DISCONNECTED per connection. SEND_DONEs and NEW_CONNECTIONs beyond the
 * length are dropped and counted.
 */
static bool smbd_event_droppable(u32 type)
{
	return type == SMBD_EVENT_SEND_DONE ||
	       type == SMBD_EVENT_NEW_CONNECTION;
}

/*
 * Queue @kev on @file: 0, or -ESHUTDOWN when the file is closing, or
 * -ENOSPC when a droppable event finds the queue full (counted as lost).
 * On error the caller still owns @kev.
 */
int smbd_event_push(struct smbd_file *file, struct smbd_kevent *kev)
{
	bool droppable = smbd_event_droppable(kev->ev.type);
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&file->lock, flags);
	if (file->closing) {
		ret = -ESHUTDOWN;
	} else if (droppable && file->nr_droppable >= SMBD_EVENT_QUEUE_LEN) {
		file->lost++;
		ret = -ENOSPC;
	} else {
		list_add_tail(&kev->node, &file->events);
		file->nr_events++;
		file->nr_droppable += droppable;
	}
	spin_unlock_irqrestore(&file->lock, flags);
	if (!ret)
		wake_up_interruptible(&file->wait);
	return ret;
}

/* A connection's event could not be queued: it cannot go on without it. */
u32 smbd_event_lost_reason(int err)
{
	return err == -ESHUTDOWN ? SMBD_REASON_OWNER_CLOSED :
				   SMBD_REASON_NO_MEMORY;
}

static bool smbd_events_ready(struct smbd_file *file)
{
	unsigned long flags;
	bool ready;

	spin_lock_irqsave(&file->lock, flags);
	ready = file->nr_events || file->lost;
	spin_unlock_irqrestore(&file->lock, flags);
	return ready;
}

__poll_t smbd_events_poll(struct smbd_file *file, struct file *filp,
			  poll_table *wait)
{
	poll_wait(filp, &file->wait, wait);
	return smbd_events_ready(file) ? EPOLLIN | EPOLLRDNORM : 0;
}

/* Copy one record; the caller's record may be longer or (v1) shorter. */
static int smbd_copy_event(void __user *dst, u32 event_size,
			   const struct smbd_event *ev)
{
	size_t n = min_t(size_t, event_size, sizeof(*ev));

	if (copy_to_user(dst, ev, n))
		return -EFAULT;
	if (event_size > n && clear_user(dst + n, event_size - n))
		return -EFAULT;
	return 0;
}

static int smbd_get_events_validate(const struct smbd_get_events *ge)
{
	if (ge->flags || ge->__reserved)
		return -EINVAL;
	if (ge->max_events < 1 || ge->max_events > SMBD_MAX_BATCH)
		return -EINVAL;
	if (ge->event_size < SMBD_EVENT_SIZE_V1 ||
	    ge->event_size > SMBD_MAX_ELEMENT_SIZE)
		return -EINVAL;
	return 0;
}

/* Fill the caller's arrays from the head of the queue (read_mutex held). */
static int smbd_events_copy_out(struct smbd_file *file,
				struct smbd_get_events *ge)
{
	void __user *events = u64_to_user_ptr(ge->events_ptr);
	u8 __user *data = u64_to_user_ptr(ge->data_ptr);
	struct smbd_kevent *kev;
	unsigned long flags;
	u32 used = 0;
	u64 lost;
	int ret;

	ge->out_count = 0;
	spin_lock_irqsave(&file->lock, flags);
	lost = file->lost;
	spin_unlock_irqrestore(&file->lock, flags);
	if (lost) {
		struct smbd_event ev;

		memset(&ev, 0, sizeof(ev));
		ev.type = SMBD_EVENT_OVERFLOW;
		ev.u.overflow.lost = lost;
		ret = smbd_copy_event(events, ge->event_size, &ev);
		if (ret)
			return ret;
		spin_lock_irqsave(&file->lock, flags);
		file->lost -= lost;
		spin_unlock_irqrestore(&file->lock, flags);
		ge->out_count++;
	}

	while (ge->out_count < ge->max_events) {
		u32 need;

		/* only this reader removes entries: the head stays put */
		spin_lock_irqsave(&file->lock, flags);
		kev = list_first_entry_or_null(&file->events,
					       struct smbd_kevent, node);
		spin_unlock_irqrestore(&file->lock, flags);
		if (!kev)
			break;

		need = ALIGN(kev->ev.data_len, 8);
		if (kev->ev.data_len > ge->data_len - used) {
			if (ge->out_count)
				break;
			ge->out_data_used = kev->ev.data_len;
			return -EMSGSIZE;
		}
		kev->ev.data_offset = used;
		if (kev->ev.data_len &&
		    copy_to_user(data + used, kev->data, kev->ev.data_len))
			return ge->out_count ? 0 : -EFAULT;
		ret = smbd_copy_event(events + (size_t)ge->out_count *
					       ge->event_size,
				      ge->event_size, &kev->ev);
		if (ret)
			return ge->out_count ? 0 : ret;

		used = min_t(u32, used + need, ge->data_len);
		ge->out_count++;
		spin_lock_irqsave(&file->lock, flags);
		list_del(&kev->node);
		file->nr_events--;
		file->nr_droppable -= smbd_event_droppable(kev->ev.type);
		spin_unlock_irqrestore(&file->lock, flags);
		if (kev->ev.type == SMBD_EVENT_RDMA_DONE)
			atomic_dec(&file->rw_outstanding);
		smbd_kevent_free(kev);
	}
	ge->out_data_used = used;
	return 0;
}

int smbd_ioctl_get_events(struct file *filp, void *cmd)
{
	bool nonblock = filp->f_flags & O_NONBLOCK;
	struct smbd_file *file = filp->private_data;
	struct smbd_get_events *ge = cmd;
	int ret;

	ret = smbd_get_events_validate(ge);
	if (ret)
		return ret;

	/*
	 * Nothing is taken before a wait ends: a signal restarts the call
	 * where the handler asks for it (SA_RESTART), as read() does.
	 */
	for (;;) {
		if (!nonblock) {
			ret = wait_event_interruptible(file->wait,
						       smbd_events_ready(file));
			if (ret)
				return ret;
		}
		if (mutex_lock_interruptible(&file->read_mutex))
			return -ERESTARTSYS;
		ret = smbd_events_copy_out(file, ge);
		mutex_unlock(&file->read_mutex);
		if (ret || ge->out_count)
			return ret;
		/* another reader took them */
		if (nonblock)
			return -EAGAIN;
	}
}

void smbd_events_drain(struct smbd_file *file)
{
	struct smbd_kevent *kev, *tmp;
	unsigned long flags;
	LIST_HEAD(list);

	spin_lock_irqsave(&file->lock, flags);
	list_splice_init(&file->events, &list);
	file->nr_events = 0;
	file->nr_droppable = 0;
	spin_unlock_irqrestore(&file->lock, flags);
	list_for_each_entry_safe(kev, tmp, &list, node)
		smbd_kevent_free(kev);
}
