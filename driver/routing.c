// SPDX-License-Identifier: GPL-2.0-only
/*
 * Who gets a connection. A file may listen for new sessions (LISTEN), the
 * master (params.c) as a rule; any file registers the SMB2 sessions it
 * owns. After the driver answered the SMB2 NEGOTIATE, the first
 * SESSION_SETUP decides: binding to a registered session goes to that
 * session's file (flow 1); a new session is offered to the listener, and
 * the file that ACCEPTs its token owns it (flow 2).
 *
 * Anyone may bind who read a SessionId off the wire, so a bound channel
 * stays one of the unauthenticated until its owner confirms it by sending
 * the answer that completes the binding (smb2_proves_session()): until
 * then it keeps its slot of admission.c, the setup limits and the setup
 * timer.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/hashtable.h>
#include <linux/random.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <crypto/algapi.h>

#include "smbdirect.h"

/* the roles, the session table and every connection's owner */
DEFINE_MUTEX(smbd_lock);

/* all under smbd_lock */
static struct smbd_file *smbd_listener;
static LIST_HEAD(smbd_offers);
static DEFINE_HASHTABLE(smbd_sessions, 8);

struct smbd_session_entry {
	struct hlist_node node;
	u64 id;
	struct smbd_file *file;
};

static struct smbd_session_entry *smbd_session_find(u64 id)
{
	struct smbd_session_entry *s;

	hash_for_each_possible(smbd_sessions, s, node, id)
		if (s->id == id)
			return s;
	return NULL;
}

/* debugfs sessions: the roles and each registered SessionId's owner. */
void smbd_sessions_show(struct seq_file *m)
{
	struct smbd_session_entry *s;
	u32 bkt;

	mutex_lock(&smbd_lock);
	seq_printf(m, "master_pid=%d listener_pid=%d\n",
		   smbd_params_master_tgid(),
		   smbd_listener ? smbd_listener->owner_tgid : 0);
	hash_for_each(smbd_sessions, bkt, s, node)
		seq_printf(m, "session=0x%llx owner_pid=%d\n", s->id,
			   s->file->owner_tgid);
	mutex_unlock(&smbd_lock);
}

/*
 * Give @conn to @file and tell it with a NEW_CHANNEL event carrying the
 * NEGOTIATE request, the driver's response and the SESSION_SETUP.
 */
static int smbd_adopt(struct smbd_conn *conn, struct smbd_file *file,
		      u32 channel_flags)
{
	bool bound = channel_flags & SMBD_CHANNEL_BOUND;
	struct smbd_kevent *kev;
	unsigned long flags;
	int ret;

	lockdep_assert_held(&smbd_lock);
	if (file->closing)
		return -ENOENT;
	kev = smbd_kevent_alloc(SMBD_EVENT_NEW_CHANNEL, conn->id, GFP_KERNEL);
	if (!kev)
		return -ENOMEM;
	if (!conn->route.disconnected_ev)
		conn->route.disconnected_ev =
			smbd_kevent_alloc(SMBD_EVENT_DISCONNECTED, conn->id,
					  GFP_KERNEL);
	if (!conn->route.disconnected_ev) {
		smbd_kevent_free(kev);
		return -ENOMEM;
	}
	kev->ev.flags = channel_flags;
	kev->ev.u.new_channel.session_id = conn->route.session_id;
	kev->ev.u.new_channel.negotiate_req_len = conn->route.neg_req_len;
	kev->ev.u.new_channel.negotiate_resp_len = conn->route.neg_resp_len;
	kev->ev.u.new_channel.session_setup_len = conn->route.setup_len;
	kev->ev.u.new_channel.dialect = conn->route.dialect;
	kev->ev.u.new_channel.local = conn->local;
	kev->ev.u.new_channel.remote = conn->remote;
	kev->ev.u.new_channel.max_pdu_size =
		min_t(u32, conn->cp.max_fragmented_send_size, SMBD_MAX_PDU_SIZE);
	kev->ev.data_len = conn->route.neg_req_len + conn->route.neg_resp_len +
			   conn->route.setup_len;

	kref_get(&conn->ref);
	ret = xa_insert(&file->conns, conn->id, conn, GFP_KERNEL);
	if (ret) {
		smbd_conn_put(conn);
		smbd_kevent_free(kev);
		return ret;
	}
	smbd_file_get(file);
	spin_lock_irqsave(&conn->lock, flags);
	/* before OWNED: no reader may see it owned and not yet unconfirmed */
	WRITE_ONCE(conn->route.unconfirmed, bound);
	if (!smbd_conn_enter_locked(conn, SMBD_CONN_OWNED)) {
		WRITE_ONCE(conn->route.unconfirmed, false);
		spin_unlock_irqrestore(&conn->lock, flags);
		xa_erase(&file->conns, conn->id);
		smbd_conn_put(conn);
		smbd_file_put(file);
		smbd_kevent_free(kev);
		return -ENOTCONN;
	}
	conn->route.owner = file;
	conn->keepalive = SMBD_KEEPALIVE_NONE;
	kev->data = conn->route.setup_bytes;
	conn->route.setup_bytes = NULL;
	/*
	 * Under the lock that made it OWNED: the NEW_CHANNEL goes before any
	 * PDU (the held ones follow from smb2_work, and the receive path
	 * waits for them), and a teardown starting later cancels the work.
	 * The push cannot fail: the file is not closing (smbd_lock) and
	 * NEW_CHANNEL is exempt from the queue bound.
	 */
	WARN_ON_ONCE(smbd_event_push(file, kev));
	queue_work(smbd_wq, &conn->route.smb2_work);
	smbd_conn_set_deadline_locked(conn, bound ?
				      conn->params->setup_timeout_ms :
				      conn->params->keepalive_interval_ms);
	spin_unlock_irqrestore(&conn->lock, flags);

	list_del_init(&conn->route.offer_node);
	return 0;
}

int smbd_route_binding(struct smbd_conn *conn, u64 session_id)
{
	struct smbd_session_entry *s;
	int ret = -ENOENT;

	mutex_lock(&smbd_lock);
	s = smbd_session_find(session_id);
	if (s)
		ret = smbd_adopt(conn, s->file, SMBD_CHANNEL_BOUND);
	mutex_unlock(&smbd_lock);
	return ret;
}

int smbd_route_offer(struct smbd_conn *conn)
{
	struct smbd_kevent *kev;
	unsigned long flags;
	int ret = -ENOENT;

	mutex_lock(&smbd_lock);
	if (!smbd_listener)
		goto out;
	ret = -ENOMEM;
	kev = smbd_kevent_alloc(SMBD_EVENT_NEW_CONNECTION, conn->id,
				GFP_KERNEL);
	if (!kev)
		goto out;
	get_random_bytes(conn->route.token, sizeof(conn->route.token));
	memcpy(kev->ev.u.new_connection.token, conn->route.token,
	       sizeof(conn->route.token));
	memcpy(kev->ev.u.new_connection.client_guid, conn->route.client_guid,
	       sizeof(conn->route.client_guid));
	kev->ev.u.new_connection.local = conn->local;
	kev->ev.u.new_connection.remote = conn->remote;

	spin_lock_irqsave(&conn->lock, flags);
	if (!smbd_conn_enter_locked(conn, SMBD_CONN_OFFERED)) {
		spin_unlock_irqrestore(&conn->lock, flags);
		smbd_kevent_free(kev);
		ret = -ENOTCONN;
		goto out;
	}
	spin_unlock_irqrestore(&conn->lock, flags);
	list_add_tail(&conn->route.offer_node, &smbd_offers);
	smbd_conn_arm_timer(conn, conn->params->accept_timeout_ms);
	if (smbd_event_push(smbd_listener, kev)) {
		smbd_kevent_free(kev);
		smbd_conn_fail(conn, SMBD_REASON_NO_MEMORY);
	}
	ret = 0;
out:
	mutex_unlock(&smbd_lock);
	return ret;
}

/*
 * The owner sends @pdu on @conn: if it completes the binding, the channel
 * is one of the unauthenticated no more. Called before the PDU is queued,
 * so that the peer's next PDU finds the limits lifted.
 */
void smbd_route_confirm(struct smbd_conn *conn, const u8 *pdu, u32 len)
{
	unsigned long flags;
	bool confirmed = false;

	if (!READ_ONCE(conn->route.unconfirmed) ||
	    !smb2_proves_session(pdu, len, conn->route.session_id))
		return;
	spin_lock_irqsave(&conn->lock, flags);
	if (conn->route.unconfirmed &&
	    smbd_conn_state_in(conn->state, SMBD_CONN_HAS_OWNER)) {
		WRITE_ONCE(conn->route.unconfirmed, false);
		smbd_setup_leave(conn);
		conn->keepalive = SMBD_KEEPALIVE_NONE;
		smbd_conn_set_deadline_locked(conn,
					      conn->params->keepalive_interval_ms);
		confirmed = true;
	}
	spin_unlock_irqrestore(&conn->lock, flags);
	/* the owned limits: the credits held back may go now */
	if (confirmed)
		smbd_recv_refill(conn);
}

/* Teardown: the connection is no longer offered. */
void smbd_route_forget(struct smbd_conn *conn)
{
	mutex_lock(&smbd_lock);
	list_del_init(&conn->route.offer_node);
	mutex_unlock(&smbd_lock);
}

/* @file closes: it gives up the listener role and its sessions. */
void smbd_route_file_closed(struct smbd_file *file)
{
	struct smbd_session_entry *s;
	struct hlist_node *tmp;
	struct smbd_conn *conn, *next;
	int bkt;

	lockdep_assert_held(&smbd_lock);
	if (smbd_listener == file) {
		smbd_listener = NULL;
		list_for_each_entry_safe(conn, next, &smbd_offers,
					 route.offer_node) {
			list_del_init(&conn->route.offer_node);
			smbd_conn_fail(conn, SMBD_REASON_NO_LISTENER);
		}
	}
	if (!file->nr_sessions)
		return;
	hash_for_each_safe(smbd_sessions, bkt, tmp, s, node) {
		if (s->file != file)
			continue;
		hash_del(&s->node);
		kfree(s);
	}
	file->nr_sessions = 0;
}

int smbd_ioctl_listen(struct file *filp, void *cmd)
{
	struct smbd_file *file = filp->private_data;
	struct smbd_listen *l = cmd;
	int ret = 0;

	if (l->flags)
		return -EINVAL;
	if (!capable(CAP_NET_ADMIN))
		return -EPERM;
	mutex_lock(&smbd_lock);
	if (smbd_listener && smbd_listener != file)
		ret = -EBUSY;
	else
		smbd_listener = file;
	mutex_unlock(&smbd_lock);
	return ret;
}

int smbd_ioctl_accept(struct file *filp, void *cmd)
{
	struct smbd_file *file = filp->private_data;
	struct smbd_accept *a = cmd;
	struct smbd_conn *conn, *found = NULL;
	int ret;

	if (a->flags)
		return -EINVAL;
	mutex_lock(&smbd_lock);
	/* permission before existence: others cannot probe for tokens */
	if (smbd_listener && !uid_eq(current_euid(), smbd_listener->owner)) {
		ret = -EPERM;
		goto out;
	}
	list_for_each_entry(conn, &smbd_offers, route.offer_node) {
		if (!crypto_memneq(conn->route.token, a->token, sizeof(a->token))) {
			found = conn;
			break;
		}
	}
	ret = -ENOENT;
	if (found) {
		ret = smbd_adopt(found, file, SMBD_CHANNEL_ACCEPTED);
		if (!ret)
			a->out_conn_id = found->id;
	}
out:
	mutex_unlock(&smbd_lock);
	return ret;
}

/*
 * A registered session's binding channels go to the file that registered
 * it, so only smbd may: processes of the master's user, or an
 * administrator. Checked before the table is looked at, so that nobody
 * else can probe it for SessionIds.
 */
static bool smbd_may_register(void)
{
	lockdep_assert_held(&smbd_lock);
	/* the user first: capable() audits a refusal */
	return smbd_params_master_user(current_euid()) ||
	       capable(CAP_NET_ADMIN);
}

int smbd_ioctl_register_session(struct file *filp, void *cmd)
{
	struct smbd_file *file = filp->private_data;
	struct smbd_session *req = cmd;
	struct smbd_session_entry *s;
	int ret = 0;

	if (req->flags || req->session_id == 0)
		return -EINVAL;
	mutex_lock(&smbd_lock);
	if (!smbd_may_register()) {
		ret = -EPERM;
		goto out;
	}
	s = smbd_session_find(req->session_id);
	if (s) {
		if (s->file != file)
			ret = -EBUSY;
		goto out;
	}
	/* the table is walked under smbd_lock: each file holds a share */
	if (file->nr_sessions >= SMBD_MAX_SESSIONS) {
		ret = -ENOSPC;
		goto out;
	}
	s = kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);
	if (!s) {
		ret = -ENOMEM;
		goto out;
	}
	s->id = req->session_id;
	s->file = file;
	hash_add(smbd_sessions, &s->node, s->id);
	file->nr_sessions++;
out:
	mutex_unlock(&smbd_lock);
	return ret;
}

int smbd_ioctl_unregister_session(struct file *filp, void *cmd)
{
	struct smbd_file *file = filp->private_data;
	struct smbd_session *req = cmd;
	struct smbd_session_entry *s;
	int ret = 0;

	if (req->flags || req->session_id == 0)
		return -EINVAL;
	mutex_lock(&smbd_lock);
	s = smbd_session_find(req->session_id);
	if (!s || s->file != file) {
		ret = -ENOENT;
	} else {
		hash_del(&s->node);
		kfree(s);
		file->nr_sessions--;
	}
	mutex_unlock(&smbd_lock);
	return ret;
}
