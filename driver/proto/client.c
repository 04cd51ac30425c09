// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The client's side of the MS-SMBD negotiate and of Buffer Descriptor V1,
 * for the client tool and the tests: the module, a server, does not build
 * this file (driver/Kbuild).
 */
#include "buffer_desc.h"
#include "negotiate.h"

void smbd_negotiate_req_build(const struct smbd_negotiate_req *req,
			      u8 out[SMBD_NEGOTIATE_REQ_SIZE])
{
	smbd_put_le16(out + 0, req->min_version);
	smbd_put_le16(out + 2, req->max_version);
	smbd_put_le16(out + 4, 0);
	smbd_put_le16(out + 6, req->credits_requested);
	smbd_put_le32(out + 8, req->preferred_send_size);
	smbd_put_le32(out + 12, req->max_receive_size);
	smbd_put_le32(out + 16, req->max_fragmented_size);
}

enum smbd_proto_error smbd_negotiate_resp_parse(const u8 *buf, size_t len,
						struct smbd_negotiate_resp *resp)
{
	if (len < SMBD_NEGOTIATE_RESP_SIZE)
		return SMBD_E_TRUNCATED;

	resp->min_version = smbd_get_le16(buf + 0);
	resp->max_version = smbd_get_le16(buf + 2);
	resp->negotiated_version = smbd_get_le16(buf + 4);
	resp->credits_requested = smbd_get_le16(buf + 8);
	resp->credits_granted = smbd_get_le16(buf + 10);
	resp->status = smbd_get_le32(buf + 12);
	resp->max_read_write_size = smbd_get_le32(buf + 16);
	resp->preferred_send_size = smbd_get_le32(buf + 20);
	resp->max_receive_size = smbd_get_le32(buf + 24);
	resp->max_fragmented_size = smbd_get_le32(buf + 28);

	if (resp->status != SMBD_STATUS_SUCCESS)
		return SMBD_E_NEGOTIATE_FAILED;
	if (resp->negotiated_version != SMBD_VERSION_1)
		return SMBD_E_VERSION;
	if (resp->credits_requested == 0)
		return SMBD_E_ZERO_CREDITS_REQUESTED;
	if (resp->credits_granted == 0)
		return SMBD_E_ZERO_CREDITS_GRANTED;
	if (resp->max_receive_size < SMBD_MIN_RECEIVE_SIZE)
		return SMBD_E_RECEIVE_SIZE_TOO_SMALL;
	if (resp->max_fragmented_size < SMBD_MIN_FRAGMENTED_SIZE)
		return SMBD_E_FRAGMENTED_SIZE_TOO_SMALL;
	if (resp->preferred_send_size < SMBD_MIN_RECEIVE_SIZE)
		return SMBD_E_SEND_SIZE_TOO_SMALL;
	return SMBD_E_OK;
}

enum smbd_proto_error
smbd_negotiate_client_params(const struct smbd_local_params *local,
			     const struct smbd_negotiate_resp *resp,
			     struct smbd_conn_params *conn)
{
	/* The server must not send more than we said we can receive. */
	if (resp->preferred_send_size > local->max_receive_size)
		return SMBD_E_SEND_SIZE_TOO_LARGE;

	conn->receive_credit_max = local->receive_credit_max;
	conn->receive_credit_target = smbd_min_u16(resp->credits_requested,
						   local->receive_credit_max);
	conn->send_credit_target = local->send_credit_target;
	conn->max_receive_size = local->max_receive_size;
	conn->max_send_size = smbd_min_u32(local->max_send_size,
					   resp->max_receive_size);
	conn->max_fragmented_send_size = resp->max_fragmented_size;
	conn->max_fragmented_recv_size = local->max_fragmented_size;
	conn->max_read_write_size = resp->max_read_write_size;
	return SMBD_E_OK;
}

void smbd_buffer_desc_put(u8 *buf, u32 index,
			  const struct smbd_buffer_desc *desc)
{
	u8 *p = buf + (size_t)index * SMBD_BUFFER_DESC_SIZE;

	smbd_put_le64(p, desc->offset);
	smbd_put_le32(p + 8, desc->token);
	smbd_put_le32(p + 12, desc->length);
}
