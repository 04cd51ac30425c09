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
	uint64_t offset;	/* remote address */
	uint32_t token;		/* remote key */
	uint32_t length;
};

/*
 * Validate @len bytes of descriptors: whole entries, 1..@max_count of them,
 * none empty or wrapping, at most @max_total bytes in all. On success
 * *count and *total describe the list.
 */
enum smbd_proto_error smbd_buffer_desc_validate(const uint8_t *buf, size_t len,
						uint32_t max_count,
						uint64_t max_total,
						uint32_t *count,
						uint64_t *total);
/* Entry @index of a validated list. */
void smbd_buffer_desc_get(const uint8_t *buf, uint32_t index,
			  struct smbd_buffer_desc *desc);
/* Write one entry (the client tool describes its memory with it). */
void smbd_buffer_desc_put(uint8_t *buf, uint32_t index,
			  const struct smbd_buffer_desc *desc);

#ifdef __cplusplus
}
#endif

#endif /* SMBD_PROTO_BUFFER_DESC_H */
