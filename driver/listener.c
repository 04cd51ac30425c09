// SPDX-License-Identifier: GPL-2.0-only
/*
 * The RDMA listeners, by transport ([MS-SMBD] 2.1): SMB's port 445 for
 * InfiniBand and RoCE, 5445 for iWARP. They exist only while a master smbd
 * has registered its parameters, so that ksmbd, which takes RDMA 445 too,
 * can serve while Samba is stopped.
 *
 * iWARP runs over TCP and shares the host's TCP port space: a wildcard RDMA
 * listener on 445 would make every iWARP device bind TCP 445, where smbd
 * already serves SMB over TCP. Kernels before rdma_restrict_node_type()
 * cannot keep a wildcard listener off iWARP devices, so the IB/RoCE port
 * is served by one listener per local address that an IB or RoCE device
 * carries, kept in step with addresses and devices as they come and go.
 * The iWARP port is one wildcard listener per address family; by default
 * it serves IB and RoCE too, for the clients that try 5445 first (Linux
 * before 7.0, the seed design). Every connect request is checked against
 * its device's transport, so a port serves only the transports mapped to it.
 *
 * Every later CM event of a connection ends here too and is handed to its
 * connection.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/in.h>
#include <linux/in6.h>
#include <linux/inetdevice.h>
#include <linux/netdevice.h>
#include <linux/slab.h>
#include <net/addrconf.h>
#include <net/net_namespace.h>
#include <linux/seq_file.h>
#include <rdma/ib_cm.h>

#include "smbdirect.h"

#define SMBD_LISTEN_BACKLOG 64
/* a tentative IPv6 address cannot be bound until its DAD is over */
#define SMBD_LISTEN_RETRY (2 * HZ)
/* addresses the IB/RoCE port is served on, at most */
#define SMBD_MAX_LISTEN_ADDRS 256

struct smbd_listener {
	struct list_head node;
	struct rdma_cm_id *id;
	struct sockaddr_storage addr;	/* bound address and port */
	bool wildcard;			/* the iWARP port's, else per address */
	bool seen;			/* the last sync found its address */
	bool gone;			/* its device is being removed */
};

/* the listener set; taken before smbd_lock, never under it */
static DEFINE_MUTEX(smbd_listen_lock);
static LIST_HEAD(smbd_listeners);
/* under smbd_listen_lock: the last sync's result, and the busy port */
static int smbd_listen_err;
static u16 smbd_listen_busy_port;
/* changes of the list, against the CM's device removal that walks it */
static DEFINE_SPINLOCK(smbd_listen_list_lock);

static void smbd_listen_work_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(smbd_listen_work, smbd_listen_work_fn);

static u16 smbd_sockaddr_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)ss)->sin_port);
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return 0;
}

/*
 * Which transports a connect request's port serves: the iWARP port serves
 * iWARP (and IB/RoCE with ib_on_iwarp_port), the IB port IB and RoCE.
 */
static bool smbd_port_serves(struct rdma_cm_id *cm_id)
{
	u16 port = smbd_sockaddr_port(&cm_id->route.addr.src_addr);

	if (rdma_protocol_iwarp(cm_id->device, cm_id->port_num))
		return smbd_iwarp_port && port == smbd_iwarp_port;
	return (smbd_ib_port && port == smbd_ib_port) ||
	       (smbd_iwarp_port && port == smbd_iwarp_port &&
		READ_ONCE(smbd_ib_on_iwarp_port));
}

static int smbd_connect_request(struct rdma_cm_id *cm_id,
				struct rdma_cm_event *event)
{
	struct smbd_params *params;
	int ret;

	smbd_count(SMBD_CNT_CONN_REQUESTS, 1);
	if (!smbd_port_serves(cm_id)) {
		smbd_count(SMBD_CNT_CONN_WRONG_PORT, 1);
		ret = -EPROTONOSUPPORT;
		goto reject;
	}
	params = smbd_params_get_current();
	if (!params) {
		ret = -ECONNREFUSED;
		goto reject;
	}
	if (!(cm_id->device->attrs.device_cap_flags &
	      IB_DEVICE_MEM_MGT_EXTENSIONS)) {
		/* send-with-invalidate and FRWR are part of SMB Direct */
		smbd_params_put(params);
		ret = -EOPNOTSUPP;
		goto reject;
	}
	/* admission (a slot of the unauthenticated) is part of the creation */
	ret = smbd_conn_create(cm_id, params, &event->param.conn);
	if (!ret)
		return 0;
	smbd_params_put(params);
reject:
	smbd_count(SMBD_CNT_CONN_REJECTED, 1);
	rdma_reject(cm_id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
	/* non-zero: the CM destroys the id */
	return ret;
}

/*
 * A per-address listener's device goes away, or its address moved to
 * another device (a bond's failover): the sync destroys it, and binds the
 * address again where it now is.
 */
static void smbd_listener_gone(struct rdma_cm_id *cm_id)
{
	struct smbd_listener *l;

	spin_lock(&smbd_listen_list_lock);
	list_for_each_entry(l, &smbd_listeners, node)
		if (l->id == cm_id)
			l->gone = true;
	spin_unlock(&smbd_listen_list_lock);
	mod_delayed_work(system_wq, &smbd_listen_work, 0);
}

static int smbd_cm_handler(struct rdma_cm_id *cm_id,
			   struct rdma_cm_event *event)
{
	struct smbd_conn *conn = cm_id->context;

	if (event->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return smbd_connect_request(cm_id, event);
	if (!conn) {
		/* a listener's own id carries no context */
		if (event->event == RDMA_CM_EVENT_DEVICE_REMOVAL ||
		    event->event == RDMA_CM_EVENT_ADDR_CHANGE)
			smbd_listener_gone(cm_id);
		return 0;
	}

	switch (event->event) {
	case RDMA_CM_EVENT_ESTABLISHED:
		smbd_conn_established(conn);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		smbd_conn_fail(conn, SMBD_REASON_PEER);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		/* the CM waits until the teardown destroys this id */
		smbd_conn_fail(conn, SMBD_REASON_DEVICE_REMOVED);
		break;
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_ADDR_CHANGE:
		smbd_conn_info(conn, "%s (%d)\n",
			       rdma_event_msg(event->event), event->status);
		smbd_conn_fail(conn, SMBD_REASON_RDMA_ERROR);
		break;
	default:
		break;
	}
	return 0;
}

/* Is @addr on an IB or RoCE device (1), on none or on iWARP (0)? */
static int smbd_addr_is_ib(const struct sockaddr_storage *addr)
{
	struct sockaddr_storage probe = *addr;
	struct rdma_cm_id *id;
	int ret;

	/* an ephemeral port: the device is found whoever holds the port */
	if (probe.ss_family == AF_INET)
		((struct sockaddr_in *)&probe)->sin_port = 0;
	else
		((struct sockaddr_in6 *)&probe)->sin6_port = 0;
	id = rdma_create_id(&init_net, smbd_cm_handler, NULL, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	ret = rdma_bind_addr(id, (struct sockaddr *)&probe);
	if (ret == -ENODEV || ret == -EADDRNOTAVAIL)
		ret = 0;	/* no RDMA device there, or the address left */
	else if (!ret)
		ret = !rdma_protocol_iwarp(id->device, id->port_num);
	rdma_destroy_id(id);
	return ret;
}

/* Waits for connect requests in progress; no new one arrives after. */
static void smbd_listener_destroy(struct smbd_listener *l)
{
	spin_lock(&smbd_listen_list_lock);
	list_del(&l->node);
	spin_unlock(&smbd_listen_list_lock);
	rdma_destroy_id(l->id);
	kfree(l);
}

static int smbd_listener_create(const struct sockaddr_storage *addr,
				bool wildcard)
{
	struct smbd_listener *l;
	struct rdma_cm_id *id;
	int ret;

	l = kzalloc(sizeof(*l), GFP_KERNEL);
	if (!l)
		return -ENOMEM;
	id = rdma_create_id(&init_net, smbd_cm_handler, NULL, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id)) {
		kfree(l);
		return PTR_ERR(id);
	}
	l->id = id;
	l->addr = *addr;
	l->wildcard = wildcard;
	l->seen = true;
	/* listed before the bind ties it to a device its removal must find */
	spin_lock(&smbd_listen_list_lock);
	list_add_tail(&l->node, &smbd_listeners);
	spin_unlock(&smbd_listen_list_lock);
	/* IPv4 and IPv6 listen apart, so that one can exist without the other */
	ret = rdma_set_afonly(id, 1);
	if (!ret)
		ret = rdma_bind_addr(id, (struct sockaddr *)addr);
	if (!ret)
		ret = rdma_listen(id, SMBD_LISTEN_BACKLOG);
	if (ret)
		smbd_listener_destroy(l);
	return ret;
}

static bool smbd_sockaddr_equal(const struct sockaddr_storage *a,
				const struct sockaddr_storage *b)
{
	const struct sockaddr_in *a4 = (const void *)a, *b4 = (const void *)b;
	const struct sockaddr_in6 *a6 = (const void *)a, *b6 = (const void *)b;

	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return a4->sin_port == b4->sin_port &&
		       a4->sin_addr.s_addr == b4->sin_addr.s_addr;
	return a6->sin6_port == b6->sin6_port &&
	       a6->sin6_scope_id == b6->sin6_scope_id &&
	       ipv6_addr_equal(&a6->sin6_addr, &b6->sin6_addr);
}

static struct smbd_listener *
smbd_listener_find(const struct sockaddr_storage *a)
{
	struct smbd_listener *l;

	list_for_each_entry(l, &smbd_listeners, node)
		if (smbd_sockaddr_equal(&l->addr, a))
			return l;
	return NULL;
}

/* The host's addresses, as candidates for the IB/RoCE port. */
struct smbd_addr_list {
	struct sockaddr_storage *a;
	u32 n, cap;
	bool tentative;		/* an RDMA netdev's address is not usable yet */
};

/* Whether an RDMA device sits on @dev (RoCE and iWARP say so). */
static bool smbd_netdev_has_rdma(struct net_device *dev)
{
	struct ib_device *ibdev = ib_device_get_by_netdev(dev,
							  RDMA_DRIVER_UNKNOWN);

	if (!ibdev)
		return false;
	ib_device_put(ibdev);
	return true;
}

static void smbd_addr_push(struct smbd_addr_list *al,
			   const struct sockaddr_storage *ss)
{
	if (al->n < al->cap)
		al->a[al->n++] = *ss;
	else
		pr_warn_once("more than %u local addresses: port %u is served on the first only\n",
			     al->cap, smbd_ib_port);
}

static void smbd_addrs_of(struct net_device *dev, struct smbd_addr_list *al)
{
	struct in_device *in_dev = __in_dev_get_rcu(dev);
	struct sockaddr_storage ss;
	const struct in_ifaddr *ifa;
#if IS_ENABLED(CONFIG_IPV6)
	struct inet6_dev *idev = __in6_dev_get(dev);
	const struct inet6_ifaddr *ifp;
#endif

	if (in_dev) {
		in_dev_for_each_ifa_rcu(ifa, in_dev) {
			struct sockaddr_in *sin = (void *)&ss;

			memset(&ss, 0, sizeof(ss));
			sin->sin_family = AF_INET;
			sin->sin_addr.s_addr = ifa->ifa_local;
			sin->sin_port = htons(smbd_ib_port);
			smbd_addr_push(al, &ss);
		}
	}
#if IS_ENABLED(CONFIG_IPV6)
	if (!idev)
		return;
	read_lock_bh(&idev->lock);
	list_for_each_entry(ifp, &idev->addr_list, if_list) {
		struct sockaddr_in6 *sin6 = (void *)&ss;

		if (ifp->flags & IFA_F_DADFAILED)
			continue;
		if (ifp->flags & IFA_F_TENTATIVE) {
			/* a link without carrier keeps it so: not worth a retry */
			al->tentative |= smbd_netdev_has_rdma(dev);
			continue;
		}
		memset(&ss, 0, sizeof(ss));
		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = ifp->addr;
		sin6->sin6_port = htons(smbd_ib_port);
		if (ipv6_addr_type(&ifp->addr) & IPV6_ADDR_LINKLOCAL)
			sin6->sin6_scope_id = dev->ifindex;
		smbd_addr_push(al, &ss);
	}
	read_unlock_bh(&idev->lock);
#endif
}

/* At most SMBD_MAX_LISTEN_ADDRS: more is not a host this is built for. */
static int smbd_addrs_collect(struct smbd_addr_list *al)
{
	struct net_device *dev;

	al->a = kvcalloc(SMBD_MAX_LISTEN_ADDRS, sizeof(*al->a), GFP_KERNEL);
	if (!al->a)
		return -ENOMEM;
	al->cap = SMBD_MAX_LISTEN_ADDRS;
	rcu_read_lock();
	for_each_netdev_rcu(&init_net, dev)
		if (!(dev->flags & IFF_LOOPBACK))
			smbd_addrs_of(dev, al);
	rcu_read_unlock();
	return 0;
}

static int smbd_listen_busy(u16 port)
{
	smbd_listen_busy_port = port;
	pr_warn("RDMA port %u is held by another listener (ksmbd?)\n", port);
	return -EADDRINUSE;
}

/* Another listener holds the port on this address, or on all of them. */
static bool smbd_port_busy(int err)
{
	return err == -EADDRINUSE || err == -EADDRNOTAVAIL;
}

/* The iWARP port: one wildcard listener per address family. */
static int smbd_listen_wildcards(void)
{
	static const sa_family_t families[] = { AF_INET, AF_INET6 };
	struct sockaddr_storage ss;
	u32 i;
	int ret;

	for (i = 0; smbd_iwarp_port && i < ARRAY_SIZE(families); i++) {
		memset(&ss, 0, sizeof(ss));
		ss.ss_family = families[i];
		if (families[i] == AF_INET)
			((struct sockaddr_in *)&ss)->sin_port =
				htons(smbd_iwarp_port);
		else
			((struct sockaddr_in6 *)&ss)->sin6_port =
				htons(smbd_iwarp_port);
		if (smbd_listener_find(&ss))
			continue;
		ret = smbd_listener_create(&ss, true);
		/* a host without IPv6 still serves IPv4 */
		if (ret == -EAFNOSUPPORT && families[i] == AF_INET6)
			continue;
		if (smbd_port_busy(ret))
			return smbd_listen_busy(smbd_iwarp_port);
		if (ret)
			return ret;
	}
	return 0;
}

/* The IB/RoCE port: a listener per address an IB or RoCE device carries. */
static int smbd_listen_addresses(void)
{
	struct smbd_addr_list al = {};
	struct smbd_listener *l, *next;
	int ret = 0, err;
	u32 i;

	list_for_each_entry(l, &smbd_listeners, node)
		l->seen = l->wildcard;
	if (smbd_ib_port) {
		ret = smbd_addrs_collect(&al);
		if (ret)
			return ret;
	}
	for (i = 0; i < al.n; i++) {
		l = smbd_listener_find(&al.a[i]);
		if (l) {
			l->seen = true;
			continue;
		}
		err = smbd_addr_is_ib(&al.a[i]);
		if (err > 0)
			err = smbd_listener_create(&al.a[i], false);
		/* EADDRNOTAVAIL is also an address that left meanwhile */
		if (smbd_port_busy(err) && smbd_addr_is_ib(&al.a[i]) <= 0)
			err = 0;
		if (smbd_port_busy(err))
			err = smbd_listen_busy(smbd_ib_port);
		if (err && !ret)
			ret = err;
	}
	/* gone from the host, or their device went away meanwhile */
	list_for_each_entry_safe(l, next, &smbd_listeners, node)
		if (!l->seen || READ_ONCE(l->gone))
			smbd_listener_destroy(l);
	/* never delays a run already queued: a flush may be waiting for it */
	if (al.tentative)
		queue_delayed_work(system_wq, &smbd_listen_work,
				   SMBD_LISTEN_RETRY);
	kvfree(al.a);
	return ret;
}

/*
 * Listeners follow the master: all of them while it is registered, none
 * otherwise. What setting them up met is kept for SET_PARAMS, which gives
 * the role up again when a port is taken; what a later change of
 * addresses meets is only logged.
 */
static void smbd_listen_sync(void)
{
	struct smbd_listener *l, *next;
	int ret = 0;

	mutex_lock(&smbd_listen_lock);
	smbd_listen_busy_port = 0;
	/* first: the CM waits for them, and their addresses may be bound again */
	list_for_each_entry_safe(l, next, &smbd_listeners, node)
		if (READ_ONCE(l->gone))
			smbd_listener_destroy(l);
	if (smbd_params_registered()) {
		ret = smbd_listen_wildcards();
		if (!ret)
			ret = smbd_listen_addresses();
	} else {
		list_for_each_entry_safe(l, next, &smbd_listeners, node)
			smbd_listener_destroy(l);
	}
	smbd_listen_err = ret;
	mutex_unlock(&smbd_listen_lock);
}

static void smbd_listen_work_fn(struct work_struct *work)
{
	smbd_listen_sync();
}

/*
 * The master registered or went away: the listeners follow before this
 * returns. Binding port 445 needs CAP_NET_BIND_SERVICE: the work binds as
 * the kernel, whoever asked.
 */
int smbd_listeners_update(u16 *busy_port)
{
	int ret;

	mod_delayed_work(system_wq, &smbd_listen_work, 0);
	flush_delayed_work(&smbd_listen_work);
	mutex_lock(&smbd_listen_lock);
	ret = smbd_listen_err;
	if (busy_port)
		*busy_port = smbd_listen_busy_port;
	mutex_unlock(&smbd_listen_lock);
	return ret;
}

/* debugfs listeners: "addr=<address>:<port> serves=<transports>" each */
void smbd_listeners_show(struct seq_file *m)
{
	struct smbd_listener *l;
	struct smbd_sockaddr a;

	mutex_lock(&smbd_listen_lock);
	list_for_each_entry(l, &smbd_listeners, node) {
		smbd_sockaddr_from(&a, (struct sockaddr *)&l->addr);
		smbd_sockaddr_show(m, "addr", &a);
		seq_printf(m, " serves=%s\n",
			   !l->wildcard ? "ib,roce" :
			   READ_ONCE(smbd_ib_on_iwarp_port) ? "iwarp,ib,roce" :
			   "iwarp");
	}
	mutex_unlock(&smbd_listen_lock);
}

static int smbd_listen_notify(struct notifier_block *nb, unsigned long ev,
			      void *ptr)
{
	mod_delayed_work(system_wq, &smbd_listen_work, 0);
	return NOTIFY_DONE;
}

static struct notifier_block smbd_inetaddr_nb = {
	.notifier_call = smbd_listen_notify,
};

static struct notifier_block smbd_inet6addr_nb = {
	.notifier_call = smbd_listen_notify,
};

/*
 * A RoCE device learns an address (its GID) from the RDMA core's own work,
 * after the address notifiers ran: each GID change resyncs.
 */
static void smbd_ib_event(struct ib_event_handler *h, struct ib_event *ev)
{
	if (ev->event == IB_EVENT_GID_CHANGE)
		mod_delayed_work(system_wq, &smbd_listen_work, 0);
}

static struct ib_client smbd_ib_client;

/* a new RDMA device may carry addresses the IB/RoCE port should serve */
static int smbd_ib_add(struct ib_device *dev)
{
	struct ib_event_handler *h = kzalloc(sizeof(*h), GFP_KERNEL);

	if (!h)
		return -ENOMEM;
	INIT_IB_EVENT_HANDLER(h, dev, smbd_ib_event);
	ib_register_event_handler(h);
	ib_set_client_data(dev, &smbd_ib_client, h);
	mod_delayed_work(system_wq, &smbd_listen_work, 0);
	return 0;
}

static void smbd_ib_remove(struct ib_device *dev, void *client_data)
{
	struct ib_event_handler *h = client_data;

	ib_unregister_event_handler(h);
	kfree(h);
}

static struct ib_client smbd_ib_client = {
	.name = "smbdirect",
	.add = smbd_ib_add,
	.remove = smbd_ib_remove,
};

int smbd_listener_init(void)
{
	int ret;

	ret = ib_register_client(&smbd_ib_client);
	if (ret)
		return ret;
	register_inetaddr_notifier(&smbd_inetaddr_nb);
#if IS_ENABLED(CONFIG_IPV6)
	register_inet6addr_notifier(&smbd_inet6addr_nb);
#endif
	return 0;
}

/* After the last file closed: no master, so the sync removes everything. */
void smbd_listener_exit(void)
{
#if IS_ENABLED(CONFIG_IPV6)
	unregister_inet6addr_notifier(&smbd_inet6addr_nb);
#endif
	unregister_inetaddr_notifier(&smbd_inetaddr_nb);
	ib_unregister_client(&smbd_ib_client);
	smbd_listen_sync();
	cancel_delayed_work_sync(&smbd_listen_work);
}
