// SPDX-License-Identifier: GPL-2.0-only
/*
 * The /dev/smbd command table, after iommufd: each command has its struct,
 * the size of its first version and its handler, which takes the open file
 * and the struct; input is read with copy_struct_from_user() so structs can
 * grow at their end.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bits.h>
#include <linux/smbd.h>
#include <linux/stddef.h>
#include <linux/uaccess.h>

#include "smbdirect.h"

union smbd_cmd_buffer {
	struct smbd_info info;
	struct smbd_set_params set_params;
	struct smbd_listen listen;
	struct smbd_accept accept;
	struct smbd_session session;
	struct smbd_mem_params mem_params;
	struct smbd_get_events get_events;
	struct smbd_send_pdu send_pdu;
	struct smbd_disconnect disconnect;
	struct smbd_conn_stats conn_stats;
	struct smbd_rdma_rw rdma_rw;
};

struct smbd_ioctl_op {
	size_t size;		/* the struct as this kernel knows it */
	size_t min_size;	/* the struct's first version */
	int (*execute)(struct file *filp, void *cmd);
};

#define SMBD_FEATURES (SMBD_FEATURE_SET_PARAMS | SMBD_FEATURE_LISTEN |	\
		       SMBD_FEATURE_SESSIONS | SMBD_FEATURE_EVENTS |	\
		       SMBD_FEATURE_SEND_PDU | SMBD_FEATURE_SEND_INVALIDATE | \
		       SMBD_FEATURE_POOL | SMBD_FEATURE_RDMA_RW |	\
		       SMBD_FEATURE_DISCONNECT | SMBD_FEATURE_RW_REPLY | \
		       SMBD_FEATURE_SEND_ROOM | SMBD_FEATURE_CONN_STATS | \
		       SMBD_FEATURE_POOL_SIZE)

static int smbd_get_info(struct file *filp, void *cmd)
{
	struct smbd_info *info = cmd;

	if (info->flags)
		return -EINVAL;

	info->out_abi_version = SMBD_ABI_VERSION;
	info->out_max_events = SMBD_EVENT_QUEUE_LEN;
	/* each bit is set by the change that makes its commands work */
	info->out_features = SMBD_FEATURES;
	info->out_max_batch = SMBD_MAX_BATCH;
	info->out_max_pdu_size = SMBD_MAX_PDU_SIZE;
	info->out_max_slices = SMBD_MAX_SLICES;
	info->out_max_descriptors = SMBD_MAX_DESCRIPTORS;
	info->out_pool_buffers = smbd_pool_buffers;
	info->out_buffer_size = smbd_buffer_size;
	info->out_port = smbd_iwarp_port;
	info->out_max_iovs = SMBD_MAX_IOVS;
	info->out_mmap_size = (u64)smbd_pool_buffers * smbd_buffer_size;
	info->out_ib_port = smbd_ib_port;
	info->out_port_flags = smbd_iwarp_port && READ_ONCE(smbd_ib_on_iwarp_port) ?
			       SMBD_PORT_IB_ON_IWARP : 0;
	info->out_max_sessions = SMBD_MAX_SESSIONS;
	info->out_send_queue_bytes = SMBD_SEND_QUEUE_BYTES;
	return 0;
}

#define SMBD_OP(_cmd, _fn, _struct, _last)			\
	[(_cmd) - SMBD_CMD_BASE] = {				\
		.size = sizeof(_struct),			\
		.min_size = offsetofend(_struct, _last),	\
		.execute = _fn,					\
	}

static const struct smbd_ioctl_op smbd_ops[] = {
	SMBD_OP(SMBD_CMD_GET_INFO, smbd_get_info, struct smbd_info,
		out_mmap_size),
	SMBD_OP(SMBD_CMD_SET_PARAMS, smbd_ioctl_set_params,
		struct smbd_set_params, sec_blob_ptr),
	SMBD_OP(SMBD_CMD_LISTEN, smbd_ioctl_listen, struct smbd_listen, flags),
	SMBD_OP(SMBD_CMD_ACCEPT, smbd_ioctl_accept, struct smbd_accept,
		out_conn_id),
	SMBD_OP(SMBD_CMD_REGISTER_SESSION, smbd_ioctl_register_session,
		struct smbd_session, session_id),
	SMBD_OP(SMBD_CMD_UNREGISTER_SESSION, smbd_ioctl_unregister_session,
		struct smbd_session, session_id),
	SMBD_OP(SMBD_CMD_GET_MEM_PARAMS, smbd_ioctl_get_mem_params,
		struct smbd_mem_params, out_mmap_offset),
	SMBD_OP(SMBD_CMD_GET_EVENTS, smbd_ioctl_get_events,
		struct smbd_get_events, __reserved),
	SMBD_OP(SMBD_CMD_SEND_PDU, smbd_ioctl_send_pdu, struct smbd_send_pdu,
		__reserved),
	SMBD_OP(SMBD_CMD_RDMA_RW, smbd_ioctl_rdma_rw, struct smbd_rdma_rw,
		__reserved),
	SMBD_OP(SMBD_CMD_DISCONNECT, smbd_ioctl_disconnect,
		struct smbd_disconnect, conn_id),
	SMBD_OP(SMBD_CMD_CONN_STATS, smbd_ioctl_conn_stats,
		struct smbd_conn_stats, out_rdma_errors),
};

long smbd_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;
	const struct smbd_ioctl_op *op;
	union smbd_cmd_buffer buf;
	unsigned int nr = _IOC_NR(cmd);
	u32 user_size;
	int ret;

	/* sizes live in the structs: the number carries no size or direction */
	if (cmd != _IO(SMBD_IOCTL_TYPE, nr) || nr < SMBD_CMD_BASE ||
	    nr - SMBD_CMD_BASE >= ARRAY_SIZE(smbd_ops))
		return -ENOTTY;
	op = &smbd_ops[nr - SMBD_CMD_BASE];
	if (!op->execute)
		return -ENOTTY;
	if (!smbd_file_serves(filp->private_data, current->mm))
		return -EBADFD;

	if (get_user(user_size, (u32 __user *)uarg))
		return -EFAULT;
	if (user_size < op->min_size)
		return -EINVAL;
	ret = copy_struct_from_user(&buf, op->size, uarg, user_size);
	if (ret)
		return ret;

	ret = op->execute(filp, &buf);
	/* EMSGSIZE reports the size needed, EADDRINUSE the port, in the struct */
	if (ret && ret != -EMSGSIZE && ret != -EADDRINUSE)
		return ret;
	if (copy_to_user(uarg, &buf, min_t(size_t, op->size, user_size)))
		return -EFAULT;
	return ret;
}
