// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* MS-SMBD Data Transfer messages: validation, fragmentation, reassembly. */
#include "data_transfer.h"

enum smbd_proto_error smbd_data_parse(const u8 *buf, size_t len,
				      u32 max_receive_size,
				      u32 max_fragmented_recv_size,
				      struct smbd_data_hdr *hdr)
{
	if (len < SMBD_DATA_HDR_SIZE)
		return SMBD_E_TRUNCATED;
	if (len > max_receive_size)
		return SMBD_E_MESSAGE_TOO_LONG;

	hdr->credits_requested =
		smbd_get_le16(buf + SMBD_DATA_CREDITS_REQUESTED);
	hdr->credits_granted = smbd_get_le16(buf + SMBD_DATA_CREDITS_GRANTED);
	hdr->flags = smbd_get_le16(buf + SMBD_DATA_FLAGS);
	/* Reserved, ignored */
	hdr->remaining_data_length = smbd_get_le32(buf + SMBD_DATA_REMAINING);
	hdr->data_offset = smbd_get_le32(buf + SMBD_DATA_DATA_OFFSET);
	hdr->data_length = smbd_get_le32(buf + SMBD_DATA_DATA_LENGTH);

	if (hdr->credits_requested == 0)
		return SMBD_E_ZERO_CREDITS_REQUESTED;
	if (hdr->data_length == 0) {
		/* a credit or keepalive carrier; DataOffset is unused */
		if (hdr->remaining_data_length != 0)
			return SMBD_E_REMAINING_WITHOUT_DATA;
		return SMBD_E_OK;
	}
	if (hdr->data_offset % 8 != 0)
		return SMBD_E_DATA_OFFSET_ALIGNMENT;
	if (hdr->data_offset < SMBD_DATA_HDR_SIZE)
		return SMBD_E_DATA_OFFSET_IN_HEADER;
	if ((u64)hdr->data_offset + hdr->data_length > len)
		return SMBD_E_DATA_PAST_END;
	if ((u64)hdr->data_length + hdr->remaining_data_length >
	    max_fragmented_recv_size)
		return SMBD_E_FRAGMENT_TOO_LARGE;
	return SMBD_E_OK;
}

size_t smbd_data_build(struct smbd_data_hdr *hdr,
		       u8 out[SMBD_DATA_PAYLOAD_OFFSET])
{
	size_t n = hdr->data_length ? SMBD_DATA_PAYLOAD_OFFSET :
				      SMBD_DATA_HDR_SIZE;

	hdr->data_offset = hdr->data_length ? SMBD_DATA_PAYLOAD_OFFSET : 0;
	memset(out, 0, n);
	smbd_put_le16(out + SMBD_DATA_CREDITS_REQUESTED,
		      hdr->credits_requested);
	smbd_put_le16(out + SMBD_DATA_CREDITS_GRANTED, hdr->credits_granted);
	smbd_put_le16(out + SMBD_DATA_FLAGS, hdr->flags);
	smbd_put_le32(out + SMBD_DATA_REMAINING, hdr->remaining_data_length);
	smbd_put_le32(out + SMBD_DATA_DATA_OFFSET, hdr->data_offset);
	smbd_put_le32(out + SMBD_DATA_DATA_LENGTH, hdr->data_length);
	return n;
}

enum smbd_proto_error smbd_frag_plan_make(u32 pdu_len,
					  u32 max_send_size,
					  u32 max_fragmented_send_size,
					  struct smbd_frag_plan *plan)
{
	if (pdu_len == 0)
		return SMBD_E_EMPTY_PDU;
	if (pdu_len > max_fragmented_send_size)
		return SMBD_E_PDU_TOO_LARGE;
	/* negotiate validation guarantees max_send_size >= 128 */
	if (max_send_size <= SMBD_DATA_PAYLOAD_OFFSET)
		return SMBD_E_SEND_SIZE_TOO_SMALL;

	plan->pdu_len = pdu_len;
	plan->max_payload = max_send_size - SMBD_DATA_PAYLOAD_OFFSET;
	plan->count = (u32)(((u64)pdu_len + plan->max_payload - 1) /
				 plan->max_payload);
	return SMBD_E_OK;
}

void smbd_frag_get(const struct smbd_frag_plan *plan, u32 index,
		   struct smbd_fragment *frag)
{
	u32 left;

	frag->offset = index * plan->max_payload;
	left = plan->pdu_len - frag->offset;
	frag->length = left < plan->max_payload ? left : plan->max_payload;
	frag->remaining = left - frag->length;
}

void smbd_reassembly_init(struct smbd_reassembly *r,
			  u32 max_fragmented_size)
{
	memset(r, 0, sizeof(*r));
	r->max_fragmented_size = max_fragmented_size;
}

enum smbd_proto_error smbd_reassembly_add(struct smbd_reassembly *r,
					  const struct smbd_data_hdr *hdr,
					  u32 *offset, u32 *total,
					  bool *complete)
{
	u64 end = (u64)hdr->data_length + hdr->remaining_data_length;

	*complete = false;
	if (hdr->data_length == 0)
		return SMBD_E_OK;

	if (!r->active) {
		if (end > r->max_fragmented_size)
			return SMBD_E_FRAGMENT_TOO_LARGE;
		r->active = true;
		r->total = (u32)end;
		r->received = 0;
	} else if ((u64)r->received + end != r->total) {
		/* a fragment must continue exactly where the last one ended */
		return SMBD_E_REASSEMBLY_MISMATCH;
	}

	*offset = r->received;
	*total = r->total;
	r->received += hdr->data_length;
	if (hdr->remaining_data_length == 0) {
		*complete = true;
		r->active = false;
		r->total = 0;
		r->received = 0;
	}
	return SMBD_E_OK;
}
