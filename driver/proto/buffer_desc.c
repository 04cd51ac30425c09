// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Buffer Descriptor V1 list validation. */
#include "buffer_desc.h"

void smbd_buffer_desc_get(const uint8_t *buf, uint32_t index,
			  struct smbd_buffer_desc *desc)
{
	const uint8_t *p = buf + (size_t)index * SMBD_BUFFER_DESC_SIZE;

	desc->offset = smbd_get_le64(p);
	desc->token = smbd_get_le32(p + 8);
	desc->length = smbd_get_le32(p + 12);
}

void smbd_buffer_desc_put(uint8_t *buf, uint32_t index,
			  const struct smbd_buffer_desc *desc)
{
	uint8_t *p = buf + (size_t)index * SMBD_BUFFER_DESC_SIZE;

	smbd_put_le64(p, desc->offset);
	smbd_put_le32(p + 8, desc->token);
	smbd_put_le32(p + 12, desc->length);
}

enum smbd_proto_error smbd_buffer_desc_validate(const uint8_t *buf, size_t len,
						uint32_t max_count,
						uint64_t max_total,
						uint32_t *count,
						uint64_t *total)
{
	struct smbd_buffer_desc d;
	uint64_t sum = 0;
	uint32_t n, i;

	if (len % SMBD_BUFFER_DESC_SIZE != 0)
		return SMBD_E_DESC_LENGTH;
	if (len == 0 || len / SMBD_BUFFER_DESC_SIZE > max_count)
		return SMBD_E_DESC_COUNT;
	n = (uint32_t)(len / SMBD_BUFFER_DESC_SIZE);

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
