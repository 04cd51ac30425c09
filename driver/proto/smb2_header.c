// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* SMB2 header, id lists and error responses (MS-SMB2 2.2.1, 2.2.2). */
#include "smb2.h"

static const u8 smb2_protocol_id[4] = { 0xfe, 'S', 'M', 'B' };

enum smbd_proto_error smb2_hdr_decode(const u8 *buf, size_t len,
				      struct smb2_hdr *hdr)
{
	if (len < SMB2_HDR_SIZE)
		return SMBD_E_TRUNCATED;
	if (memcmp(buf, smb2_protocol_id, sizeof(smb2_protocol_id)) != 0)
		return SMBD_E_SMB2_PROTOCOL_ID;
	if (smbd_get_le16(buf + 4) != SMB2_HDR_SIZE)
		return SMBD_E_SMB2_HEADER_SIZE;

	hdr->credit_charge = smbd_get_le16(buf + 6);
	hdr->status = smbd_get_le32(buf + 8);
	hdr->command = smbd_get_le16(buf + 12);
	hdr->credits = smbd_get_le16(buf + 14);
	hdr->flags = smbd_get_le32(buf + 16);
	hdr->next_command = smbd_get_le32(buf + 20);
	hdr->message_id = smbd_get_le64(buf + 24);
	hdr->process_id = smbd_get_le32(buf + 32);
	hdr->tree_id = smbd_get_le32(buf + 36);
	hdr->session_id = smbd_get_le64(buf + 40);
	memcpy(hdr->signature, buf + 48, sizeof(hdr->signature));
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
	memcpy(out, smb2_protocol_id, sizeof(smb2_protocol_id));
	smbd_put_le16(out + 4, SMB2_HDR_SIZE);
	smbd_put_le16(out + 6, req->credit_charge);
	smbd_put_le32(out + 8, status);
	smbd_put_le16(out + 12, req->command);
	smbd_put_le16(out + 14, credits);
	smbd_put_le32(out + 16, req->flags | SMB2_FLAGS_SERVER_TO_REDIR);
	smbd_put_le32(out + 20, 0);
	smbd_put_le64(out + 24, req->message_id);
	smbd_put_le32(out + 32, req->process_id);
	smbd_put_le32(out + 36, req->tree_id);
	smbd_put_le64(out + 40, req->session_id);
	memcpy(out + 48, req->signature, sizeof(req->signature));
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
