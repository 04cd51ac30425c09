// SPDX-License-Identifier: GPL-2.0-only
/*
 * debugfs smbdirect/connections: one line of key=value pairs per
 * connection, for smbdctl and for a person with cat; sessions: the master,
 * the listener and the registered SessionIds; rdma_latency: the histogram
 * of all connections' RDMA operation latencies. debugfs, not sysfs: these
 * are lists, and their keys may grow.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "smbdirect.h"

static struct dentry *smbd_debugfs_dir;

static const char *const smbd_state_names[SMBD_CONN_NR_STATES] = {
	[SMBD_CONN_ACCEPTING] = "accepting",
	[SMBD_CONN_NEGOTIATE] = "negotiate",
	[SMBD_CONN_SMB2_NEGOTIATE] = "smb2_negotiate",
	[SMBD_CONN_SESSION_SETUP] = "session_setup",
	[SMBD_CONN_REFUSED] = "refused",
	[SMBD_CONN_OFFERED] = "offered",
	[SMBD_CONN_OWNED] = "owned",
	[SMBD_CONN_CLOSING] = "closing",
	[SMBD_CONN_DISCONNECTING] = "disconnecting",
};

void smbd_sockaddr_show(struct seq_file *m, const char *key,
			const struct smbd_sockaddr *a)
{
	if (a->family == AF_INET)
		seq_printf(m, " %s=%pI4:%u", key, a->addr, a->port);
	else if (a->family == AF_INET6)
		seq_printf(m, " %s=[%pI6c]:%u", key, a->addr, a->port);
	else
		seq_printf(m, " %s=-", key);
}

static void smbd_show_conn(struct seq_file *m, struct smbd_conn *conn)
{
	unsigned long flags;
	u32 i;

	spin_lock_irqsave(&conn->lock, flags);
	seq_printf(m, "id=%u state=%s", conn->id,
		   smbd_state_names[conn->state]);
	if (conn->state == SMBD_CONN_DISCONNECTING)
		seq_printf(m, " reason=%s", smbd_reason_name(conn->reason));
	seq_printf(m, " transport=%s", conn->transport);
	smbd_sockaddr_show(m, "local", &conn->local);
	smbd_sockaddr_show(m, "remote", &conn->remote);
	seq_printf(m, " owner_pid=%d dialect=0x%04x session=0x%llx",
		   conn->route.owner ? conn->route.owner->owner_tgid : 0,
		   conn->route.dialect, conn->route.session_id);
	seq_printf(m, " send_credits=%u recv_posted=%u recv_granted=%u recv_target=%u",
		   conn->credits.send_credits, conn->credits.recv_posted,
		   conn->credits.recv_granted, conn->credits.recv_credit_target);
	seq_printf(m, " max_send=%u max_receive=%u max_fragmented_send=%u max_fragmented_receive=%u",
		   conn->cp.max_send_size, conn->cp.max_receive_size,
		   conn->cp.max_fragmented_send_size,
		   conn->cp.max_fragmented_recv_size);
	seq_printf(m, " pdus_queued=%u bytes_queued=%llu send_held=%u",
		   conn->rx.pdus_queued + conn->rx.nr_held, conn->rx.queued_bytes,
		   conn->tx.charged);
	seq_printf(m, " pdus_received=%llu bytes_received=%llu pdus_sent=%llu bytes_sent=%llu keepalives_sent=%llu credit_stalls=%llu",
		   conn->stats.pdus_received, conn->stats.bytes_received,
		   conn->stats.pdus_sent, conn->stats.bytes_sent,
		   conn->stats.keepalives_sent, conn->stats.credit_stalls);
	seq_printf(m, " rdma_reads=%llu rdma_writes=%llu rdma_read_bytes=%llu rdma_write_bytes=%llu rdma_errors=%llu rdma_inflight=%u rdma_budget=%u/%u rdma_lat=",
		   conn->stats.rdma_reads, conn->stats.rdma_writes,
		   conn->stats.rdma_read_bytes, conn->stats.rdma_write_bytes,
		   conn->stats.rdma_errors, conn->stats.rdma_inflight,
		   conn->rw.ops_free, conn->rw.ops_max);
	for (i = 0; i < SMBD_LAT_BUCKETS; i++)
		seq_printf(m, "%s%llu", i ? "," : "", conn->stats.rdma_lat[i]);
	seq_putc(m, '\n');
	spin_unlock_irqrestore(&conn->lock, flags);
}

static int smbd_connections_show(struct seq_file *m, void *unused)
{
	struct smbd_conn *conn;
	unsigned long id;

	/* a connection is erased before it is freed, under this lock */
	xa_lock(&smbd_conns);
	xa_for_each(&smbd_conns, id, conn)
		smbd_show_conn(m, conn);
	xa_unlock(&smbd_conns);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(smbd_connections);

static int smbd_rdma_latency_show(struct seq_file *m, void *unused)
{
	smbd_lat_show(m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(smbd_rdma_latency);

static int smbd_listeners_dbg_show(struct seq_file *m, void *unused)
{
	smbd_listeners_show(m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(smbd_listeners_dbg);

static int smbd_sessions_dbg_show(struct seq_file *m, void *unused)
{
	smbd_sessions_show(m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(smbd_sessions_dbg);

/* debugfs failures are not the module's: it works without the file */
void smbd_debugfs_init(void)
{
	smbd_debugfs_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("connections", 0400, smbd_debugfs_dir, NULL,
			    &smbd_connections_fops);
	debugfs_create_file("rdma_latency", 0400, smbd_debugfs_dir, NULL,
			    &smbd_rdma_latency_fops);
	debugfs_create_file("sessions", 0400, smbd_debugfs_dir, NULL,
			    &smbd_sessions_dbg_fops);
	debugfs_create_file("listeners", 0400, smbd_debugfs_dir, NULL,
			    &smbd_listeners_dbg_fops);
}

void smbd_debugfs_exit(void)
{
	debugfs_remove_recursive(smbd_debugfs_dir);
}
