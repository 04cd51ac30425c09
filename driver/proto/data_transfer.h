/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * MS-SMBD 2.2.3 Data Transfer message: header validation, send
 * fragmentation planning and receive reassembly (MS-SMBD 3.1.5.1, 3.1.5.8).
 */
#ifndef SMBD_PROTO_DATA_TRANSFER_H
#define SMBD_PROTO_DATA_TRANSFER_H

#include "proto_error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SMBD_DATA_HDR_SIZE 20		/* header without padding */
#define SMBD_DATA_PAYLOAD_OFFSET 24	/* first 8-aligned offset after it */
#define SMBD_FLAG_RESPONSE_REQUESTED 0x0001
/* The header's fields (MS-SMBD 2.2.3), as offsets from its start. */
#define SMBD_DATA_CREDITS_REQUESTED 0
#define SMBD_DATA_CREDITS_GRANTED 2
#define SMBD_DATA_FLAGS 4
#define SMBD_DATA_RESERVED 6
#define SMBD_DATA_REMAINING 8
#define SMBD_DATA_DATA_OFFSET 12
#define SMBD_DATA_DATA_LENGTH 16

struct smbd_data_hdr {
	u16 credits_requested;
	u16 credits_granted;
	u16 flags;
	u32 remaining_data_length;
	u32 data_offset;
	u32 data_length;
};

/*
 * Validate a received message of @len bytes (the receive completion's byte
 * count) against our receive size and reassembly limit. On success the
 * payload is buf[data_offset .. data_offset + data_length).
 */
enum smbd_proto_error smbd_data_parse(const u8 *buf, size_t len,
				      u32 max_receive_size,
				      u32 max_fragmented_recv_size,
				      struct smbd_data_hdr *hdr);

/*
 * Write the header for @hdr; data_offset is set here (24 with payload, 0
 * without). Returns the header bytes written: 24 (zero padding included) or
 * 20 for an empty message.
 */
size_t smbd_data_build(struct smbd_data_hdr *hdr,
		       u8 out[SMBD_DATA_PAYLOAD_OFFSET]);

/* How a PDU is cut into Data Transfer messages. */
struct smbd_frag_plan {
	u32 pdu_len;
	u32 max_payload;	/* payload bytes per message */
	u32 count;		/* messages */
};

struct smbd_fragment {
	u32 offset;		/* into the PDU */
	u32 length;		/* DataLength */
	u32 remaining;		/* RemainingDataLength */
};

enum smbd_proto_error smbd_frag_plan_make(u32 pdu_len,
					  u32 max_send_size,
					  u32 max_fragmented_send_size,
					  struct smbd_frag_plan *plan);
/* Fragment @index (< plan->count) of the plan. */
void smbd_frag_get(const struct smbd_frag_plan *plan, u32 index,
		   struct smbd_fragment *frag);

/* Receive-side reassembly of one PDU at a time. */
struct smbd_reassembly {
	u32 max_fragmented_size;
	u32 total;		/* size of the PDU being assembled */
	u32 received;	/* bytes of it so far */
	bool active;
};

void smbd_reassembly_init(struct smbd_reassembly *r,
			  u32 max_fragmented_size);
/*
 * Account one validated message. Messages without payload carry only
 * credits and leave the reassembly alone. Otherwise *offset is where the
 * payload goes in the PDU, *total the PDU's size, and *complete is set on
 * the last fragment (the state is then reset for the next PDU).
 */
enum smbd_proto_error smbd_reassembly_add(struct smbd_reassembly *r,
					  const struct smbd_data_hdr *hdr,
					  u32 *offset, u32 *total,
					  bool *complete);

#ifdef __cplusplus
}
#endif

#endif /* SMBD_PROTO_DATA_TRANSFER_H */
