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
#define SMBD_TRAFFIC(_name, _file) \
	SMBD_COUNTER(_file, &smbd_counters[SMBD_CNT_##_name]);
#define SMBD_DISCONNECT(_name, _value, _file) \
	SMBD_COUNTER(disconnect_##_file, &smbd_disconnects[_value]);

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
