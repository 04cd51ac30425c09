// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* MS-SMBD negotiate: wire format, validation and parameter combination. */
#include "negotiate.h"

enum smbd_proto_error smbd_negotiate_req_parse(const u8 *buf, size_t len,
					       struct smbd_negotiate_req *req)
{
	if (len < SMBD_NEGOTIATE_REQ_SIZE)
		return SMBD_E_TRUNCATED;

	req->min_version = smbd_get_le16(buf + 0);
	req->max_version = smbd_get_le16(buf + 2);
	/* buf + 4: Reserved, ignored by the receiver */
	req->credits_requested = smbd_get_le16(buf + 6);
	req->preferred_send_size = smbd_get_le32(buf + 8);
	req->max_receive_size = smbd_get_le32(buf + 12);
	req->max_fragmented_size = smbd_get_le32(buf + 16);

	if (req->min_version > SMBD_VERSION_1 ||
	    req->max_version < SMBD_VERSION_1)
		return SMBD_E_VERSION;
	if (req->credits_requested == 0)
		return SMBD_E_ZERO_CREDITS_REQUESTED;
	if (req->max_receive_size < SMBD_MIN_RECEIVE_SIZE)
		return SMBD_E_RECEIVE_SIZE_TOO_SMALL;
	if (req->max_fragmented_size < SMBD_MIN_FRAGMENTED_SIZE)
		return SMBD_E_FRAGMENTED_SIZE_TOO_SMALL;
	return SMBD_E_OK;
}

void smbd_negotiate_server_params(const struct smbd_local_params *local,
				  const struct smbd_negotiate_req *req,
				  struct smbd_conn_params *conn)
{
	conn->receive_credit_max = local->receive_credit_max;
	conn->receive_credit_target = smbd_min_u16(req->credits_requested,
						   local->receive_credit_max);
	conn->send_credit_target = local->send_credit_target;
	/* MS-SMBD 3.1.5.6: min(ours, PreferredSendSize), but at least 128 */
	conn->max_receive_size = smbd_min_u32(local->max_receive_size,
					      req->preferred_send_size);
	if (conn->max_receive_size < SMBD_MIN_RECEIVE_SIZE)
		conn->max_receive_size = SMBD_MIN_RECEIVE_SIZE;
	conn->max_send_size = smbd_min_u32(local->max_send_size,
					   req->max_receive_size);
	conn->max_fragmented_send_size = req->max_fragmented_size;
	conn->max_fragmented_recv_size = local->max_fragmented_size;
	conn->max_read_write_size = local->max_read_write_size;
}

void smbd_negotiate_resp_success(const struct smbd_conn_params *conn,
				 u16 credits_granted,
				 struct smbd_negotiate_resp *resp)
{
	resp->min_version = SMBD_VERSION_1;
	resp->max_version = SMBD_VERSION_1;
	resp->negotiated_version = SMBD_VERSION_1;
	resp->credits_requested = conn->send_credit_target;
	resp->credits_granted = credits_granted;
	resp->status = SMBD_STATUS_SUCCESS;
	resp->max_read_write_size = conn->max_read_write_size;
	resp->preferred_send_size = conn->max_send_size;
	resp->max_receive_size = conn->max_receive_size;
	resp->max_fragmented_size = conn->max_fragmented_recv_size;
}

void smbd_negotiate_resp_failure(struct smbd_negotiate_resp *resp)
{
	memset(resp, 0, sizeof(*resp));
	resp->min_version = SMBD_VERSION_1;
	resp->max_version = SMBD_VERSION_1;
	resp->status = SMBD_STATUS_NOT_SUPPORTED;
}

void smbd_negotiate_resp_build(const struct smbd_negotiate_resp *resp,
			       u8 out[SMBD_NEGOTIATE_RESP_SIZE])
{
	smbd_put_le16(out + 0, resp->min_version);
	smbd_put_le16(out + 2, resp->max_version);
	smbd_put_le16(out + 4, resp->negotiated_version);
	smbd_put_le16(out + 6, 0);
	smbd_put_le16(out + 8, resp->credits_requested);
	smbd_put_le16(out + 10, resp->credits_granted);
	smbd_put_le32(out + 12, resp->status);
	smbd_put_le32(out + 16, resp->max_read_write_size);
	smbd_put_le32(out + 20, resp->preferred_send_size);
	smbd_put_le32(out + 24, resp->max_receive_size);
	smbd_put_le32(out + 28, resp->max_fragmented_size);
}
