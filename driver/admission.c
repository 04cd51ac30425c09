// SPDX-License-Identifier: GPL-2.0-only
/*
 * Admission: a connection whose peer nobody authenticated yet (it has no
 * owner, or it is a binding its owner has not confirmed) holds one of
 * SMBD_MAX_SETUP_CONNS slots, and one remote address holds at
 * most SMBD_MAX_SETUP_PER_SOURCE of them. When every slot is taken, a new
 * connection takes the oldest slot of the address that holds the most,
 * if that address holds more than the newcomer's does: one address, or a
 * few, that flood keep a legitimate client out no longer than it takes
 * to connect, and a flooder cannot evict those that hold as little as it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/spinlock.h>
#include <linux/string.h>

#include "smbdirect.h"

/* taken inside a connection's lock (conn.c), never around it */
static DEFINE_SPINLOCK(smbd_setup_lock);
static LIST_HEAD(smbd_setup_list);	/* oldest first */
static unsigned int smbd_setup_nr;

static bool smbd_same_source(const struct smbd_sockaddr *a,
			     const struct smbd_sockaddr *b)
{
	return a->family == b->family && !memcmp(a->addr, b->addr,
						 sizeof(a->addr));
}

static unsigned int smbd_source_slots(const struct smbd_sockaddr *src)
{
	struct smbd_conn *c;
	unsigned int n = 0;

	lockdep_assert_held(&smbd_setup_lock);
	list_for_each_entry(c, &smbd_setup_list, setup.node)
		n += smbd_same_source(&c->remote, src);
	return n;
}

/*
 * The oldest connection, ready to be torn down, of the address that holds
 * the most slots, if that is more than @mine; with a reference.
 */
static struct smbd_conn *smbd_setup_victim(unsigned int mine)
{
	struct smbd_conn *c, *victim = NULL;
	unsigned int most = mine, n;

	lockdep_assert_held(&smbd_setup_lock);
	list_for_each_entry(c, &smbd_setup_list, setup.node) {
		if (!c->setup.ready)
			continue;
		n = smbd_source_slots(&c->remote);
		if (n > most) {
			most = n;
			victim = c;
		}
	}
	if (victim)
		kref_get(&victim->ref);
	return victim;
}

int smbd_setup_admit(struct smbd_conn *conn)
{
	struct smbd_conn *victim;
	unsigned long flags;
	unsigned int mine;
	int tries;

	/* each eviction frees a slot, unless another request took it first */
	for (tries = 0; tries < 4; tries++) {
		spin_lock_irqsave(&smbd_setup_lock, flags);
		mine = smbd_source_slots(&conn->remote);
		if (mine >= SMBD_MAX_SETUP_PER_SOURCE) {
			spin_unlock_irqrestore(&smbd_setup_lock, flags);
			smbd_count(SMBD_CNT_CONN_REJECTED_SOURCE, 1);
			return -EBUSY;
		}
		if (smbd_setup_nr < SMBD_MAX_SETUP_CONNS) {
			list_add_tail(&conn->setup.node, &smbd_setup_list);
			smbd_setup_nr++;
			spin_unlock_irqrestore(&smbd_setup_lock, flags);
			return 0;
		}
		victim = smbd_setup_victim(mine);
		spin_unlock_irqrestore(&smbd_setup_lock, flags);
		if (!victim)
			return -EBUSY;
		/* leaving the unowned states gives its slot back, now */
		smbd_conn_evict(victim);
		smbd_conn_put(victim);
	}
	return -EBUSY;
}

void smbd_setup_ready(struct smbd_conn *conn)
{
	unsigned long flags;

	spin_lock_irqsave(&smbd_setup_lock, flags);
	conn->setup.ready = true;
	spin_unlock_irqrestore(&smbd_setup_lock, flags);
}

/* Whether @conn still holds a slot; under its lock, so that it stays so. */
bool smbd_setup_holds(struct smbd_conn *conn)
{
	bool holds;

	lockdep_assert_held(&conn->lock);
	spin_lock(&smbd_setup_lock);
	holds = !list_empty(&conn->setup.node);
	spin_unlock(&smbd_setup_lock);
	return holds;
}

void smbd_setup_leave(struct smbd_conn *conn)
{
	unsigned long flags;

	spin_lock_irqsave(&smbd_setup_lock, flags);
	if (!list_empty(&conn->setup.node)) {
		list_del_init(&conn->setup.node);
		smbd_setup_nr--;
	}
	spin_unlock_irqrestore(&smbd_setup_lock, flags);
}
