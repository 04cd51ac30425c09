// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * SMB2 SESSION_SETUP request (MS-SMB2 2.2.5), the driver's routing input,
 * and the response that completes a binding.
 */
#include "smb2.h"

enum smbd_proto_error
smb2_session_setup_parse(const u8 *buf, size_t len,
			 struct smb2_session_setup_req *req)
{
	const u8 *body = buf + SMB2_HDR_SIZE;
	enum smbd_proto_error err;
	u16 off;

	memset(req, 0, sizeof(*req));
	err = smb2_hdr_parse(buf, len, &req->hdr);
	if (err != SMBD_E_OK)
		return err;
	if (req->hdr.command != SMB2_SESSION_SETUP)
		return SMBD_E_SMB2_UNEXPECTED_COMMAND;
	if (req->hdr.next_command != 0 ||
	    (req->hdr.flags & SMB2_FLAGS_RELATED_OPERATIONS))
		return SMBD_E_SMB2_COMPOUND;
	if (len < SMB2_HDR_SIZE + SMB2_SETUP_REQ_BODY_SIZE)
		return SMBD_E_TRUNCATED;
	if (smbd_get_le16(body) != SMB2_SETUP_REQ_BODY_SIZE + 1)
		return SMBD_E_SMB2_STRUCTURE_SIZE;

	req->flags = body[SMB2_SETUP_REQ_FLAGS];
	req->security_mode = body[SMB2_SETUP_REQ_SECURITY_MODE];
	req->capabilities = smbd_get_le32(body + SMB2_SETUP_REQ_CAPABILITIES);
	req->channel = smbd_get_le32(body + SMB2_SETUP_REQ_CHANNEL);
	off = smbd_get_le16(body + SMB2_SETUP_REQ_BUFFER_OFFSET);
	req->sec_buf_len = smbd_get_le16(body + SMB2_SETUP_REQ_BUFFER_LENGTH);
	req->previous_session_id =
		smbd_get_le64(body + SMB2_SETUP_REQ_PREVIOUS_SESSION);

	/* Samba: the buffer must follow the fixed part, inside the PDU */
	if (off != SMB2_HDR_SIZE + SMB2_SETUP_REQ_BODY_SIZE ||
	    (size_t)off + req->sec_buf_len > len)
		return SMBD_E_SMB2_SECURITY_BUFFER;
	req->sec_buf = buf + off;
	return SMBD_E_OK;
}

bool smb2_proves_session(const u8 *buf, size_t len, u64 session_id)
{
	struct smb2_hdr hdr;

	return smb2_hdr_decode(buf, len, &hdr) == SMBD_E_OK &&
	       (hdr.flags & SMB2_FLAGS_SERVER_TO_REDIR) &&
	       (hdr.flags & SMB2_FLAGS_SIGNED) &&
	       hdr.command == SMB2_SESSION_SETUP &&
	       hdr.status == NT_STATUS_SUCCESS &&
	       hdr.session_id == session_id;
}
