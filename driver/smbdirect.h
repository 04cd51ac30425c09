/* SPDX-License-Identifier: GPL-2.0-only */
/* smbdirect.ko internals shared between its files. */
#ifndef SMBDIRECT_H
#define SMBDIRECT_H

#include <linux/fs.h>
#include <linux/types.h>

/* Limits reported by GET_INFO and enforced by the commands. */
#define SMBD_EVENT_QUEUE_LEN 1024
#define SMBD_MAX_BATCH 64
#define SMBD_MAX_PDU_SIZE (16U << 20)	/* SMB2 LARGE_MTU bound */
#define SMBD_MAX_SLICES 256
#define SMBD_MAX_DESCRIPTORS 64
#define SMBD_MAX_IOVS 16

/* Module parameters (main.c). */
extern unsigned int smbd_port;
extern unsigned int smbd_pool_buffers;
extern unsigned int smbd_buffer_size;

long smbd_ioctl(struct file *filp, unsigned int cmd, unsigned long arg);

#endif /* SMBDIRECT_H */
