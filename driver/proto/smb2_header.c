// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* SMB2 header, id lists and error responses (MS-SMB2 2.2.1, 2.2.2). */
#include "smb2.h"

const u8 smb2_protocol_id[SMB2_PROTOCOL_ID_SIZE] = { 0xfe, 'S', 'M', 'B' };

void smb2_hdr_build(const struct smb2_hdr *hdr, u8 out[SMB2_HDR_SIZE])
{
	memcpy(out + SMB2_HDR_PROTOCOL_ID, smb2_protocol_id,
	       SMB2_PROTOCOL_ID_SIZE);
	smbd_put_le16(out + SMB2_HDR_STRUCTURE_SIZE, SMB2_HDR_SIZE);
	smbd_put_le16(out + SMB2_HDR_CREDIT_CHARGE, hdr->credit_charge);
	smbd_put_le32(out + SMB2_HDR_STATUS, hdr->status);
	smbd_put_le16(out + SMB2_HDR_COMMAND, hdr->command);
	smbd_put_le16(out + SMB2_HDR_CREDITS, hdr->credits);
	smbd_put_le32(out + SMB2_HDR_FLAGS, hdr->flags);
	smbd_put_le32(out + SMB2_HDR_NEXT_COMMAND, hdr->next_command);
	smbd_put_le64(out + SMB2_HDR_MESSAGE_ID, hdr->message_id);
	smbd_put_le32(out + SMB2_HDR_PROCESS_ID, hdr->process_id);
	smbd_put_le32(out + SMB2_HDR_TREE_ID, hdr->tree_id);
	smbd_put_le64(out + SMB2_HDR_SESSION_ID, hdr->session_id);
	memcpy(out + SMB2_HDR_SIGNATURE, hdr->signature,
	       sizeof(hdr->signature));
}

enum smbd_proto_error smb2_hdr_decode(const u8 *buf, size_t len,
				      struct smb2_hdr *hdr)
{
	if (len < SMB2_HDR_SIZE)
		return SMBD_E_TRUNCATED;
	if (memcmp(buf + SMB2_HDR_PROTOCOL_ID, smb2_protocol_id,
		   SMB2_PROTOCOL_ID_SIZE) != 0)
		return SMBD_E_SMB2_PROTOCOL_ID;
	if (smbd_get_le16(buf + SMB2_HDR_STRUCTURE_SIZE) != SMB2_HDR_SIZE)
		return SMBD_E_SMB2_HEADER_SIZE;

	hdr->credit_charge = smbd_get_le16(buf + SMB2_HDR_CREDIT_CHARGE);
	hdr->status = smbd_get_le32(buf + SMB2_HDR_STATUS);
	hdr->command = smbd_get_le16(buf + SMB2_HDR_COMMAND);
	hdr->credits = smbd_get_le16(buf + SMB2_HDR_CREDITS);
	hdr->flags = smbd_get_le32(buf + SMB2_HDR_FLAGS);
	hdr->next_command = smbd_get_le32(buf + SMB2_HDR_NEXT_COMMAND);
	hdr->message_id = smbd_get_le64(buf + SMB2_HDR_MESSAGE_ID);
	hdr->process_id = smbd_get_le32(buf + SMB2_HDR_PROCESS_ID);
	hdr->tree_id = smbd_get_le32(buf + SMB2_HDR_TREE_ID);
	hdr->session_id = smbd_get_le64(buf + SMB2_HDR_SESSION_ID);
	memcpy(hdr->signature, buf + SMB2_HDR_SIGNATURE,
	       sizeof(hdr->signature));
	return SMBD_E_OK;
}

enum smbd_proto_error smb2_hdr_parse(const u8 *buf, size_t len,
				     struct smb2_hdr *hdr)
{
	enum smbd_proto_error e = smb2_hdr_decode(buf, len, hdr);

	if (e != SMBD_E_OK)
		return e;
	if (hdr->flags & SMB2_FLAGS_SERVER_TO_REDIR)
		return SMBD_E_SMB2_NOT_REQUEST;
	return SMBD_E_OK;
}

u16 smb2_id_list_get(const struct smb2_id_list *l, u16 i)
{
	return smbd_get_le16(l->ids + 2u * i);
}

bool smb2_id_list_has(const struct smb2_id_list *l, u16 id)
{
	u16 i;

	for (i = 0; i < l->count; i++)
		if (smb2_id_list_get(l, i) == id)
			return true;
	return false;
}

/* The response header Samba's smbd_smb2_request_setup_out() writes. */
void smb2_resp_hdr_build(const struct smb2_hdr *req, u32 status,
			 u16 credits, u8 out[SMB2_HDR_SIZE])
{
	struct smb2_hdr resp = *req;

	resp.status = status;
	resp.credits = credits;
	resp.flags |= SMB2_FLAGS_SERVER_TO_REDIR;
	resp.next_command = 0;
	smb2_hdr_build(&resp, out);
}

enum smbd_proto_error smb2_error_resp_build(const struct smb2_hdr *req_hdr,
					    u32 status, u8 *out,
					    size_t cap, size_t *len)
{
	u8 *body = out + SMB2_HDR_SIZE;

	if (cap < SMB2_ERROR_RESP_SIZE)
		return SMBD_E_OUT_OF_SPACE;
	smb2_resp_hdr_build(req_hdr, status, 1, out);
	/* StructureSize 9, ErrorContextCount 0, ByteCount 0, ErrorData 0 */
	memset(body, 0, SMB2_ERROR_RESP_SIZE - SMB2_HDR_SIZE);
	smbd_put_le16(body, 9);
	*len = SMB2_ERROR_RESP_SIZE;
	return SMBD_E_OK;
}
