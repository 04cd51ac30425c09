// SPDX-License-Identifier: GPL-2.0-only
/*
 * One open /dev/smbd: its event queue and the connections it owns. Closing
 * it gives up its roles and sessions, then disconnects its connections and
 * waits until their queue pairs are drained, so nothing the file handed to
 * the hardware outlives it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "smbdirect.h"

struct smbd_file *smbd_file_alloc(void)
{
	struct smbd_file *file = kzalloc(sizeof(*file), GFP_KERNEL);

	if (!file)
		return NULL;
	kref_init(&file->ref);
	file->owner = current_euid();
	file->owner_tgid = task_tgid_nr(current);
	/* held as a struct only, so that no later process can reuse it */
	file->mm = current->mm;
	mmgrab(file->mm);
	mutex_init(&file->read_mutex);
	mutex_init(&file->pool_lock);
	spin_lock_init(&file->lock);
	INIT_LIST_HEAD(&file->events);
	init_waitqueue_head(&file->wait);
	xa_init(&file->conns);
	return file;
}

void smbd_file_get(struct smbd_file *file)
{
	kref_get(&file->ref);
}

static void smbd_file_free(struct kref *ref)
{
	struct smbd_file *file = container_of(ref, struct smbd_file, ref);

	WARN_ON(!xa_empty(&file->conns));
	xa_destroy(&file->conns);
	/* last: every connection that could move data into it is gone */
	smbd_pool_free(file);
	mmdrop(file->mm);
	kfree(file);
}

void smbd_file_put(struct smbd_file *file)
{
	kref_put(&file->ref, smbd_file_free);
}

/* The connection @conn_id if this file owns it, with a reference. */
struct smbd_conn *smbd_file_conn(struct smbd_file *file, u64 conn_id)
{
	return smbd_conns_get(&file->conns, conn_id);
}

void smbd_file_release(struct smbd_file *file)
{
	struct smbd_conn *conn;
	unsigned long flags;
	unsigned long id;
	bool was_master;

	/* no new connection, session or role reaches this file from now */
	mutex_lock(&smbd_lock);
	spin_lock_irqsave(&file->lock, flags);
	file->closing = true;
	spin_unlock_irqrestore(&file->lock, flags);
	was_master = smbd_params_file_closed(file);
	smbd_route_file_closed(file);
	mutex_unlock(&smbd_lock);
	/* RDMA ports are free for another server once this returns */
	if (was_master)
		smbd_listeners_update(NULL);

	/* a connection whose teardown erased its entry is drained already */
	xa_for_each(&file->conns, id, conn) {
		/* whoever erases the entry owns the file's reference */
		if (xa_cmpxchg(&file->conns, id, conn, NULL, 0) != conn)
			continue;
		smbd_conn_fail(conn, SMBD_REASON_OWNER_CLOSED);
		wait_for_completion(&conn->done);
		smbd_conn_put(conn);
	}
	smbd_events_drain(file);
	smbd_file_put(file);
}
