// SPDX-License-Identifier: GPL-2.0-only
/*
 * Global counters, one sysfs file each under /sys/class/misc/smbd/counters/:
 * traffic, RDMA operations, keepalives, credit stalls and every disconnect
 * reason, so that a test or an administrator can tell why connections ended.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/device.h>
#include <linux/percpu.h>
#include <linux/seq_file.h>
#include <linux/sysfs.h>

#include "smbdirect.h"

/*
 * Per CPU, as the network stack counts: every PDU and RDMA operation
 * counts, and one cache line that every connection writes would be where
 * independent connections meet on the data path. A reader sums the CPUs;
 * a gauge (conn_active, rdma_inflight) may go up on one CPU and down on
 * another, so only its sum means anything.
 */
struct smbd_stats {
	s64 counters[SMBD_CNT_COUNT];
	s64 disconnects[SMBD_REASON_MAX + 1];
	s64 rdma_lat[SMBD_LAT_BUCKETS];
};

static DEFINE_PER_CPU(struct smbd_stats, smbd_stats);

#define SMBD_STAT(field) offsetof(struct smbd_stats, field)

/* the sum over the CPUs of the counter at @offset in struct smbd_stats */
static s64 smbd_stat_sum(size_t offset)
{
	s64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += *(s64 *)((u8 *)per_cpu_ptr(&smbd_stats, cpu) + offset);
	return sum;
}

/* a reason valued above the count of reasons does not compile */
#define SMBD_REASON_NAME(name, value, file) [SMBD_REASON_##name] = #file,
static const char *const smbd_reason_names[SMBD_REASON_MAX + 1] = {
	[0] = "unknown",
	SMBD_REASONS(SMBD_REASON_NAME)
};

#undef SMBD_REASON_NAME

const char *smbd_reason_name(u32 reason)
{
	return smbd_reason_names[reason <= SMBD_REASON_MAX ? reason : 0];
}

void smbd_count(enum smbd_counter c, s64 n)
{
	this_cpu_add(smbd_stats.counters[c], n);
}

void smbd_count_disconnect(u32 reason)
{
	this_cpu_inc(smbd_stats.disconnects[reason <= SMBD_REASON_MAX ? reason : 0]);
}

/* An RDMA operation ended: it leaves the in-flight count either way. */
void smbd_count_rdma(bool write, int status, u64 bytes, u32 lat_bucket)
{
	this_cpu_dec(smbd_stats.counters[SMBD_CNT_RDMA_INFLIGHT]);
	this_cpu_inc(smbd_stats.rdma_lat[lat_bucket]);
	if (status) {
		this_cpu_inc(smbd_stats.counters[SMBD_CNT_RDMA_ERRORS]);
		return;
	}
	this_cpu_inc(smbd_stats.counters[write ? SMBD_CNT_RDMA_WRITES :
						 SMBD_CNT_RDMA_READS]);
	this_cpu_add(smbd_stats.counters[write ? SMBD_CNT_RDMA_WRITE_BYTES :
						 SMBD_CNT_RDMA_READ_BYTES],
		     bytes);
}

/* debugfs rdma_latency: "lt_us=<bound> count=<operations>" per bucket */
void smbd_lat_show(struct seq_file *m)
{
	u32 i;

	for (i = 0; i < SMBD_LAT_BUCKETS - 1; i++)
		seq_printf(m, "lt_us=%u count=%lld\n", 16U << i,
			   smbd_stat_sum(SMBD_STAT(rdma_lat) + i * sizeof(s64)));
	seq_printf(m, "lt_us=inf count=%lld\n",
		   smbd_stat_sum(SMBD_STAT(rdma_lat) + i * sizeof(s64)));
}

struct smbd_counter_attr {
	struct device_attribute attr;
	size_t offset;	/* in struct smbd_stats */
};

static ssize_t smbd_counter_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	struct smbd_counter_attr *ca =
		container_of(attr, struct smbd_counter_attr, attr);

	return sysfs_emit(buf, "%lld\n", smbd_stat_sum(ca->offset));
}

#define SMBD_COUNTER(_name, _field)					\
	static struct smbd_counter_attr smbd_attr_##_name = {		\
		.attr = __ATTR(_name, 0444, smbd_counter_show, NULL),	\
		.offset = SMBD_STAT(_field),				\
	}
#define SMBD_TRAFFIC(_name, _file) \
	SMBD_COUNTER(_file, counters[SMBD_CNT_##_name]);
#define SMBD_DISCONNECT(_name, _value, _file) \
	SMBD_COUNTER(disconnect_##_file, disconnects[_value]);

SMBD_COUNTERS(SMBD_TRAFFIC)
SMBD_REASONS(SMBD_DISCONNECT)

#define SMBD_TRAFFIC_ATTR(_name, _file) (&smbd_attr_##_file.attr.attr),
#define SMBD_DISCONNECT_ATTR(_name, _value, _file) \
	(&smbd_attr_disconnect_##_file.attr.attr),
static struct attribute *smbd_counter_attrs[] = {
	SMBD_COUNTERS(SMBD_TRAFFIC_ATTR)
	SMBD_REASONS(SMBD_DISCONNECT_ATTR)
	NULL,
};

static const struct attribute_group smbd_counter_group = {
	.name = "counters",
	.attrs = smbd_counter_attrs,
};

const struct attribute_group *smbd_attr_groups[] = {
	&smbd_counter_group,
	NULL,
};
