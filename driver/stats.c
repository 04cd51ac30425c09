// SPDX-License-Identifier: GPL-2.0-only
/*
 * Global counters, one sysfs file each under /sys/class/misc/smbd/counters/:
 * traffic, RDMA operations, keepalives, credit stalls and every disconnect
 * reason, so that a
 * test or an administrator can tell why connections ended.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/device.h>
#include <linux/seq_file.h>
#include <linux/sysfs.h>

#include "smbdirect.h"

static atomic64_t smbd_counters[SMBD_CNT_COUNT];
static atomic64_t smbd_disconnects[SMBD_REASON_MAX + 1];
static atomic64_t smbd_rdma_lat[SMBD_LAT_BUCKETS];

static const char *const smbd_reason_names[SMBD_REASON_MAX + 1] = {
	[0] = "unknown",
	[SMBD_REASON_LOCAL] = "local",
	[SMBD_REASON_PEER] = "peer",
	[SMBD_REASON_OWNER_CLOSED] = "owner_closed",
	[SMBD_REASON_DEVICE_REMOVED] = "device_removed",
	[SMBD_REASON_NEGOTIATE_TIMEOUT] = "negotiate_timeout",
	[SMBD_REASON_KEEPALIVE_TIMEOUT] = "keepalive_timeout",
	[SMBD_REASON_ACCEPT_TIMEOUT] = "accept_timeout",
	[SMBD_REASON_CREDIT_TIMEOUT] = "credit_timeout",
	[SMBD_REASON_BAD_NEGOTIATE] = "bad_negotiate",
	[SMBD_REASON_BAD_MESSAGE] = "bad_message",
	[SMBD_REASON_BAD_REASSEMBLY] = "bad_reassembly",
	[SMBD_REASON_CREDIT_VIOLATION] = "credit_violation",
	[SMBD_REASON_BAD_SMB2] = "bad_smb2",
	[SMBD_REASON_UNKNOWN_SESSION] = "unknown_session",
	[SMBD_REASON_NO_LISTENER] = "no_listener",
	[SMBD_REASON_RDMA_ERROR] = "rdma_error",
	[SMBD_REASON_NO_MEMORY] = "no_memory",
	[SMBD_REASON_SETUP_TIMEOUT] = "setup_timeout",
};

const char *smbd_reason_name(u32 reason)
{
	return smbd_reason_names[reason <= SMBD_REASON_MAX ? reason : 0];
}

void smbd_count(enum smbd_counter c, s64 n)
{
	atomic64_add(n, &smbd_counters[c]);
}

void smbd_count_disconnect(u32 reason)
{
	atomic64_inc(&smbd_disconnects[reason <= SMBD_REASON_MAX ? reason : 0]);
}

/* An RDMA operation ended: it leaves the in-flight count either way. */
void smbd_count_rdma(bool write, int status, u64 bytes, u32 lat_bucket)
{
	atomic64_dec(&smbd_counters[SMBD_CNT_RDMA_INFLIGHT]);
	atomic64_inc(&smbd_rdma_lat[lat_bucket]);
	if (status) {
		atomic64_inc(&smbd_counters[SMBD_CNT_RDMA_ERRORS]);
		return;
	}
	atomic64_inc(&smbd_counters[write ? SMBD_CNT_RDMA_WRITES :
					    SMBD_CNT_RDMA_READS]);
	atomic64_add(bytes, &smbd_counters[write ? SMBD_CNT_RDMA_WRITE_BYTES :
						   SMBD_CNT_RDMA_READ_BYTES]);
}

/* debugfs rdma_latency: "lt_us=<bound> count=<operations>" per bucket */
void smbd_lat_show(struct seq_file *m)
{
	u32 i;

	for (i = 0; i < SMBD_LAT_BUCKETS - 1; i++)
		seq_printf(m, "lt_us=%u count=%lld\n", 16U << i,
			   atomic64_read(&smbd_rdma_lat[i]));
	seq_printf(m, "lt_us=inf count=%lld\n", atomic64_read(&smbd_rdma_lat[i]));
}

struct smbd_counter_attr {
	struct device_attribute attr;
	atomic64_t *value;
};

static ssize_t smbd_counter_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	struct smbd_counter_attr *ca =
		container_of(attr, struct smbd_counter_attr, attr);

	return sysfs_emit(buf, "%lld\n", atomic64_read(ca->value));
}

#define SMBD_COUNTER(_name, _value)					\
	static struct smbd_counter_attr smbd_attr_##_name = {		\
		.attr = __ATTR(_name, 0444, smbd_counter_show, NULL),	\
		.value = _value,					\
	}
#define SMBD_TRAFFIC(_name, _c) SMBD_COUNTER(_name, &smbd_counters[_c])
#define SMBD_DISCONNECT(_name, _r) \
	SMBD_COUNTER(disconnect_##_name, &smbd_disconnects[_r])

SMBD_TRAFFIC(conn_requests, SMBD_CNT_CONN_REQUESTS);
SMBD_TRAFFIC(conn_rejected, SMBD_CNT_CONN_REJECTED);
SMBD_TRAFFIC(conn_wrong_port, SMBD_CNT_CONN_WRONG_PORT);
SMBD_TRAFFIC(conn_active, SMBD_CNT_CONN_ACTIVE);
SMBD_TRAFFIC(negotiated, SMBD_CNT_NEGOTIATED);
SMBD_TRAFFIC(pdus_received, SMBD_CNT_PDUS_RECEIVED);
SMBD_TRAFFIC(pdus_sent, SMBD_CNT_PDUS_SENT);
SMBD_TRAFFIC(bytes_received, SMBD_CNT_BYTES_RECEIVED);
SMBD_TRAFFIC(bytes_sent, SMBD_CNT_BYTES_SENT);
SMBD_TRAFFIC(keepalives_sent, SMBD_CNT_KEEPALIVES_SENT);
SMBD_TRAFFIC(credit_stalls, SMBD_CNT_CREDIT_STALLS);
SMBD_TRAFFIC(rdma_reads, SMBD_CNT_RDMA_READS);
SMBD_TRAFFIC(rdma_writes, SMBD_CNT_RDMA_WRITES);
SMBD_TRAFFIC(rdma_read_bytes, SMBD_CNT_RDMA_READ_BYTES);
SMBD_TRAFFIC(rdma_write_bytes, SMBD_CNT_RDMA_WRITE_BYTES);
SMBD_TRAFFIC(rdma_errors, SMBD_CNT_RDMA_ERRORS);
SMBD_TRAFFIC(rdma_inflight, SMBD_CNT_RDMA_INFLIGHT);
SMBD_DISCONNECT(local, SMBD_REASON_LOCAL);
SMBD_DISCONNECT(peer, SMBD_REASON_PEER);
SMBD_DISCONNECT(owner_closed, SMBD_REASON_OWNER_CLOSED);
SMBD_DISCONNECT(device_removed, SMBD_REASON_DEVICE_REMOVED);
SMBD_DISCONNECT(negotiate_timeout, SMBD_REASON_NEGOTIATE_TIMEOUT);
SMBD_DISCONNECT(keepalive_timeout, SMBD_REASON_KEEPALIVE_TIMEOUT);
SMBD_DISCONNECT(accept_timeout, SMBD_REASON_ACCEPT_TIMEOUT);
SMBD_DISCONNECT(credit_timeout, SMBD_REASON_CREDIT_TIMEOUT);
SMBD_DISCONNECT(bad_negotiate, SMBD_REASON_BAD_NEGOTIATE);
SMBD_DISCONNECT(bad_message, SMBD_REASON_BAD_MESSAGE);
SMBD_DISCONNECT(bad_reassembly, SMBD_REASON_BAD_REASSEMBLY);
SMBD_DISCONNECT(credit_violation, SMBD_REASON_CREDIT_VIOLATION);
SMBD_DISCONNECT(bad_smb2, SMBD_REASON_BAD_SMB2);
SMBD_DISCONNECT(unknown_session, SMBD_REASON_UNKNOWN_SESSION);
SMBD_DISCONNECT(no_listener, SMBD_REASON_NO_LISTENER);
SMBD_DISCONNECT(rdma_error, SMBD_REASON_RDMA_ERROR);
SMBD_DISCONNECT(no_memory, SMBD_REASON_NO_MEMORY);
SMBD_DISCONNECT(setup_timeout, SMBD_REASON_SETUP_TIMEOUT);

#define A(_name) (&smbd_attr_##_name.attr.attr)
static struct attribute *smbd_counter_attrs[] = {
	A(conn_requests), A(conn_rejected), A(conn_wrong_port), A(conn_active),
	A(negotiated),
	A(pdus_received), A(pdus_sent), A(bytes_received), A(bytes_sent),
	A(keepalives_sent), A(credit_stalls),
	A(rdma_reads), A(rdma_writes), A(rdma_read_bytes), A(rdma_write_bytes),
	A(rdma_errors), A(rdma_inflight),
	A(disconnect_local), A(disconnect_peer), A(disconnect_owner_closed),
	A(disconnect_device_removed), A(disconnect_negotiate_timeout),
	A(disconnect_keepalive_timeout), A(disconnect_accept_timeout),
	A(disconnect_credit_timeout), A(disconnect_bad_negotiate),
	A(disconnect_bad_message), A(disconnect_bad_reassembly),
	A(disconnect_credit_violation), A(disconnect_bad_smb2),
	A(disconnect_unknown_session), A(disconnect_no_listener),
	A(disconnect_rdma_error), A(disconnect_no_memory),
	A(disconnect_setup_timeout),
	NULL,
};

#undef A

static const struct attribute_group smbd_counter_group = {
	.name = "counters",
	.attrs = smbd_counter_attrs,
};

const struct attribute_group *smbd_attr_groups[] = {
	&smbd_counter_group,
	NULL,
};
