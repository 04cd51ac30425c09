/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The global counters (stats.c): X-macro lists, so that a counter or a
 * disconnect reason is added in one line and gets its enum entry, its sysfs
 * file and its name from there.
 */
#ifndef SMBD_STATS_H
#define SMBD_STATS_H

#include <linux/smbd.h>
#include <linux/types.h>

struct attribute_group;
struct seq_file;

/*
 * The counters, X(NAME, name): SMBD_CNT_NAME and the sysfs
 * file counters/<name>. Each disconnect reason (SMBD_REASONS) adds its own,
 * counters/disconnect_<name>.
 */
#define SMBD_COUNTERS(X)						\
	X(CONN_REQUESTS, conn_requests)					\
	X(CONN_REJECTED, conn_rejected)					\
	X(CONN_REJECTED_SOURCE, conn_rejected_source) /* its share held */ \
	X(CONN_WRONG_PORT, conn_wrong_port)				\
	X(CONN_ACTIVE, conn_active)					\
	X(NEGOTIATED, negotiated)					\
	X(PDUS_RECEIVED, pdus_received)					\
	X(PDUS_SENT, pdus_sent)						\
	X(BYTES_RECEIVED, bytes_received)				\
	X(BYTES_SENT, bytes_sent)					\
	X(KEEPALIVES_SENT, keepalives_sent)				\
	X(CREDIT_STALLS, credit_stalls)					\
	X(RDMA_READS, rdma_reads)					\
	X(RDMA_WRITES, rdma_writes)					\
	X(RDMA_READ_BYTES, rdma_read_bytes)				\
	X(RDMA_WRITE_BYTES, rdma_write_bytes)				\
	X(RDMA_ERRORS, rdma_errors)					\
	X(RDMA_INFLIGHT, rdma_inflight)					\
	X(RDMA_REPLIES, rdma_replies)	/* queued behind their WRITE */	\
	X(SEND_QUEUE_FULL, send_queue_full) /* SEND_PDU, reply refused */

#define SMBD_COUNTER_ENUM(name, file) SMBD_CNT_##name,
enum smbd_counter { SMBD_COUNTERS(SMBD_COUNTER_ENUM) SMBD_CNT_COUNT };
#undef SMBD_COUNTER_ENUM

/* the reasons are numbered from 1 without a gap: the highest is their count */
#define SMBD_REASON_ONE(name, value, file) + 1
#define SMBD_REASON_MAX (0 SMBD_REASONS(SMBD_REASON_ONE))

void smbd_count(enum smbd_counter c, s64 n);
void smbd_debugfs_init(void);
void smbd_debugfs_exit(void);
void smbd_count_disconnect(u32 reason);
void smbd_count_rdma(bool write, int status, u64 bytes, u32 lat_bucket);
void smbd_lat_show(struct seq_file *m);
void smbd_sockaddr_show(struct seq_file *m, const char *key,
			const struct smbd_sockaddr *a);
const char *smbd_reason_name(u32 reason);
extern const struct attribute_group *smbd_attr_groups[];

#endif /* SMBD_STATS_H */
