// SPDX-License-Identifier: GPL-2.0-only
/*
 * Admission: a connection whose peer nobody authenticated yet (it has no
 * owner, or it is a binding its owner has not confirmed) holds one of
 * SMBD_MAX_SETUP_CONNS slots, and one source holds at most
 * SMBD_MAX_SETUP_PER_SOURCE of them. When every slot is taken, a new
 * connection takes a slot of the source that holds the most, if that
 * source holds more than the newcomer's does: one source, or a few, that
 * flood keep a legitimate client out no longer than it takes to connect,
 * and a flooder cannot evict those that hold as little as it. Of that
 * source's connections the one that got least far goes, the oldest of
 * those: a connection about to end anyway, then one not negotiated yet,
 * before one that waits for its SESSION_SETUP, smbd's ACCEPT or its
 * owner's confirmation.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/spinlock.h>
#include <linux/string.h>
#include <net/ipv6.h>

#include "smbdirect.h"

/* taken inside a connection's lock (conn.c), never around it */
static DEFINE_SPINLOCK(smbd_setup_lock);
static LIST_HEAD(smbd_setup_list);	/* oldest first */
static unsigned int smbd_setup_nr;

/*
 * The source @a counts for: an IPv4 address (also when IPv4-mapped); an
 * IPv6 host's /64, since SLAAC and privacy addresses give one host all of
 * it; a link-local address whole, with its interface, since every host on
 * a link shares fe80::/64.
 */
static void smbd_source_of(const struct smbd_sockaddr *a,
			   struct smbd_source *s)
{
	const struct in6_addr *a6 = (const struct in6_addr *)a->addr;

	memset(s, 0, sizeof(*s));
	s->family = a->family;
	if (a->family != AF_INET6) {
		memcpy(s->addr, a->addr, 4);
	} else if (ipv6_addr_v4mapped(a6)) {
		s->family = AF_INET;
		memcpy(s->addr, &a6->s6_addr32[3], 4);
	} else if (ipv6_addr_type(a6) & IPV6_ADDR_LINKLOCAL) {
		memcpy(s->addr, a->addr, 16);
		s->scope_id = a->scope_id;
	} else {
		memcpy(s->addr, a->addr, 8);
	}
}

static unsigned int smbd_source_slots(const struct smbd_source *src)
{
	struct smbd_conn *c;
	unsigned int n = 0;

	lockdep_assert_held(&smbd_setup_lock);
	list_for_each_entry(c, &smbd_setup_list, setup.node)
		n += !memcmp(&c->setup.source, src, sizeof(*src));
	return n;
}

/*
 * How far @c got, least first. Read without its lock, which is taken
 * around smbd_setup_lock: a hint, which eviction checks under the lock.
 */
static unsigned int smbd_setup_progress(const struct smbd_conn *c)
{
	switch (READ_ONCE(c->state)) {
	case SMBD_CONN_REFUSED:
		return 0;	/* its last answer is on its way */
	case SMBD_CONN_ACCEPTING:
	case SMBD_CONN_NEGOTIATE:
		return 1;
	case SMBD_CONN_SMB2_NEGOTIATE:
		return 2;
	case SMBD_CONN_SESSION_SETUP:
		return 3;
	default:
		return 4;	/* OFFERED, or a binding not confirmed yet */
	}
}

/*
 * Of the source that holds the most slots, if that is more than @mine,
 * the ready connection that got least far, the oldest of those; with a
 * reference.
 */
static struct smbd_conn *smbd_setup_victim(unsigned int mine)
{
	struct smbd_conn *c, *holder = NULL, *victim = NULL;
	unsigned int most = mine, least = UINT_MAX, n;

	lockdep_assert_held(&smbd_setup_lock);
	list_for_each_entry(c, &smbd_setup_list, setup.node) {
		if (!c->setup.ready)
			continue;
		n = smbd_source_slots(&c->setup.source);
		if (n > most) {
			most = n;
			holder = c;
		}
	}
	if (!holder)
		return NULL;
	list_for_each_entry(c, &smbd_setup_list, setup.node) {
		if (!c->setup.ready ||
		    memcmp(&c->setup.source, &holder->setup.source,
			   sizeof(c->setup.source)))
			continue;
		n = smbd_setup_progress(c);
		if (n < least) {
			least = n;
			victim = c;
		}
	}
	kref_get(&victim->ref);
	return victim;
}

int smbd_setup_admit(struct smbd_conn *conn)
{
	struct smbd_conn *victim;
	unsigned long flags;
	unsigned int mine;
	int tries;

	smbd_source_of(&conn->remote, &conn->setup.source);
	/* each eviction frees a slot, unless another request took it first */
	for (tries = 0; tries < 4; tries++) {
		spin_lock_irqsave(&smbd_setup_lock, flags);
		mine = smbd_source_slots(&conn->setup.source);
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
