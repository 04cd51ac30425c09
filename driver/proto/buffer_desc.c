// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Buffer Descriptor V1 list validation. */
#include "buffer_desc.h"

void smbd_buffer_desc_get(const u8 *buf, u32 index,
			  struct smbd_buffer_desc *desc)
{
	const u8 *p = buf + (size_t)index * SMBD_BUFFER_DESC_SIZE;

	desc->offset = smbd_get_le64(p);
	desc->token = smbd_get_le32(p + 8);
	desc->length = smbd_get_le32(p + 12);
}

enum smbd_proto_error smbd_buffer_desc_validate(const u8 *buf, size_t len,
						u32 max_count,
						u64 max_total,
						u32 *count,
						u64 *total)
{
	struct smbd_buffer_desc d;
	u64 sum = 0;
	u32 n, i;

	if (len % SMBD_BUFFER_DESC_SIZE != 0)
		return SMBD_E_DESC_LENGTH;
	if (len == 0 || len / SMBD_BUFFER_DESC_SIZE > max_count)
		return SMBD_E_DESC_COUNT;
	n = (u32)(len / SMBD_BUFFER_DESC_SIZE);

	for (i = 0; i < n; i++) {
		smbd_buffer_desc_get(buf, i, &d);
		if (d.length == 0)
			return SMBD_E_DESC_ZERO_LENGTH;
		if (d.offset + d.length < d.offset)
			return SMBD_E_DESC_WRAPS;
		sum += d.length;
		if (sum > max_total)
			return SMBD_E_DESC_TOTAL;
	}
	*count = n;
	*total = sum;
	return SMBD_E_OK;
}
