/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * SMB2 Buffer Descriptor V1 lists (MS-SMBD 2.2.3.1): the client memory an
 * SMB2 READ/WRITE names for the server's RDMA WRITE/READ.
 */
#ifndef SMBD_PROTO_BUFFER_DESC_H
#define SMBD_PROTO_BUFFER_DESC_H

#include "proto_error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SMBD_BUFFER_DESC_SIZE 16

struct smbd_buffer_desc {
	u64 offset;	/* remote address */
	u32 token;		/* remote key */
	u32 length;
};

/*
 * Validate @len bytes of descriptors: whole entries, 1..@max_count of them,
 * none empty or wrapping, at most @max_total bytes in all. On success
 * *count and *total describe the list.
 */
enum smbd_proto_error smbd_buffer_desc_validate(const u8 *buf, size_t len,
						u32 max_count,
						u64 max_total,
						u32 *count,
						u64 *total);
/* Entry @index of a validated list. */
void smbd_buffer_desc_get(const u8 *buf, u32 index,
			  struct smbd_buffer_desc *desc);
/*
 * Write one entry (client.c, not in the module: the client tool describes
 * its memory with it).
 */
void smbd_buffer_desc_put(u8 *buf, u32 index,
			  const struct smbd_buffer_desc *desc);

#ifdef __cplusplus
}
#endif

#endif /* SMBD_PROTO_BUFFER_DESC_H */
