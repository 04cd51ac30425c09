// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * SMB2 NEGOTIATE: request parsing (MS-SMB2 2.2.3) and the response smbd would
 * send (2.2.4, 3.3.5.4), following Samba 4.17's smbd_smb2_request_process_
 * negprot(): same dialect choice, capability gating, context order and
 * algorithm preference. Where MS-SMB2 requires a rejection that Samba does
 * not make (a negotiate context given twice) the spec is followed.
 */
#include "smb2.h"

#define NEG_RESP_BODY_SIZE 64
#define NEG_CONTEXT_HDR_SIZE 8

const u8 smb2_posix_context_tag[SMB2_POSIX_CONTEXT_TAG_SIZE] = {
	0x93, 0xAD, 0x25, 0x50, 0x9C, 0xB4, 0x11, 0xE7,
	0xB4, 0x23, 0x83, 0xDE, 0x96, 0x8B, 0xCD, 0x7C,
};

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* A context whose data is: u16 count, @skip bytes, count x u16 ids. */
static enum smbd_proto_error parse_id_context(const u8 *data,
					      u16 len, size_t skip,
					      struct smb2_id_list *list)
{
	u16 count;

	if (list->present)
		return SMBD_E_SMB2_CONTEXT_DUPLICATE;
	if (len < 2 + skip)
		return SMBD_E_SMB2_CONTEXT_TRUNCATED;
	count = smbd_get_le16(data);
	if (count == 0)
		return SMBD_E_SMB2_CONTEXT_EMPTY;
	if (len < 2 + skip + 2u * count)
		return SMBD_E_SMB2_CONTEXT_TRUNCATED;
	list->present = true;
	list->count = count;
	list->ids = data + 2 + skip;
	return SMBD_E_OK;
}

static enum smbd_proto_error parse_preauth(const u8 *data, u16 len,
					   struct smb2_id_list *list)
{
	u16 count, salt_len;

	if (list->present)
		return SMBD_E_SMB2_CONTEXT_DUPLICATE;
	if (len < 4)
		return SMBD_E_SMB2_CONTEXT_TRUNCATED;
	count = smbd_get_le16(data);
	salt_len = smbd_get_le16(data + 2);
	if (count == 0)
		return SMBD_E_SMB2_CONTEXT_EMPTY;
	if (len < 4u + 2u * count + salt_len)
		return SMBD_E_SMB2_CONTEXT_TRUNCATED;
	list->present = true;
	list->count = count;
	list->ids = data + 4;
	return SMBD_E_OK;
}

static enum smbd_proto_error parse_posix(const u8 *data, u16 len,
					 bool *posix)
{
	u16 off;

	if (len % SMB2_POSIX_CONTEXT_TAG_SIZE != 0)
		return SMBD_E_SMB2_CONTEXT_TRUNCATED;
	for (off = 0; off < len; off += SMB2_POSIX_CONTEXT_TAG_SIZE)
		if (memcmp(data + off, smb2_posix_context_tag,
			   SMB2_POSIX_CONTEXT_TAG_SIZE) == 0)
			*posix = true;
	return SMBD_E_OK;
}

static enum smbd_proto_error parse_context(u16 type, const u8 *data,
					   u16 len,
					   struct smb2_negotiate_req *req)
{
	struct smb2_id_list unused = { 0 };

	switch (type) {
	case SMB2_PREAUTH_INTEGRITY_CAPABILITIES:
		return parse_preauth(data, len, &req->preauth_hashes);
	case SMB2_ENCRYPTION_CAPABILITIES:
		return parse_id_context(data, len, 0, &req->ciphers);
	case SMB2_SIGNING_CAPABILITIES:
		return parse_id_context(data, len, 0,
					&req->signing_algorithms);
	case SMB2_RDMA_TRANSFORM_CAPABILITIES:
		/* TransformCount, Reserved1 (2), Reserved2 (4), ids */
		return parse_id_context(data, len, 6, &req->rdma_transforms);
	case SMB2_COMPRESSION_CAPABILITIES:
		/* Count, Padding (2), Flags (4), ids; not offered by smbd */
		if (req->compression)
			return SMBD_E_SMB2_CONTEXT_DUPLICATE;
		req->compression = true;
		return parse_id_context(data, len, 6, &unused);
	case SMB2_POSIX_EXTENSIONS_AVAILABLE:
		return parse_posix(data, len, &req->posix);
	default:
		/* NETNAME, TRANSPORT and unknown contexts are ignored */
		return SMBD_E_OK;
	}
}

/*
 * The context list starts at the first 8-aligned offset after the dialects
 * (Samba requires exactly that offset) and holds exactly @count contexts,
 * each padded to 8 bytes except the last.
 */
static enum smbd_proto_error parse_contexts(const u8 *buf, size_t len,
					    u32 offset, size_t dialects_end,
					    struct smb2_negotiate_req *req)
{
	size_t pos = offset;
	u16 i;

	if (offset != align8(dialects_end) || offset > len)
		return SMBD_E_SMB2_CONTEXT_OFFSET;

	for (i = 0; i < req->context_count; i++) {
		enum smbd_proto_error err;
		u16 type, data_len;

		if (i > 0)
			pos = align8(pos);
		if (pos + NEG_CONTEXT_HDR_SIZE > len)
			return SMBD_E_SMB2_CONTEXT_TRUNCATED;
		type = smbd_get_le16(buf + pos);
		data_len = smbd_get_le16(buf + pos + 2);
		pos += NEG_CONTEXT_HDR_SIZE;
		if (pos + data_len > len)
			return SMBD_E_SMB2_CONTEXT_TRUNCATED;
		err = parse_context(type, buf + pos, data_len, req);
		if (err != SMBD_E_OK)
			return err;
		pos += data_len;
	}
	return SMBD_E_OK;
}

enum smbd_proto_error smb2_negotiate_req_parse(const u8 *buf,
					       size_t len,
					       struct smb2_negotiate_req *req)
{
	const u8 *body = buf + SMB2_HDR_SIZE;
	enum smbd_proto_error err;
	size_t dialects_end;
	u16 dialect_count;

	memset(req, 0, sizeof(*req));
	err = smb2_hdr_parse(buf, len, &req->hdr);
	if (err != SMBD_E_OK)
		return err;
	if (req->hdr.command != SMB2_NEGOTIATE)
		return SMBD_E_SMB2_UNEXPECTED_COMMAND;
	if (req->hdr.next_command != 0 ||
	    (req->hdr.flags & SMB2_FLAGS_RELATED_OPERATIONS))
		return SMBD_E_SMB2_COMPOUND;
	/* the first request of a connection: message 0, one credit */
	if (req->hdr.message_id != 0 || req->hdr.credit_charge > 1)
		return SMBD_E_SMB2_SEQUENCE;
	if (len < SMB2_HDR_SIZE + SMB2_NEG_REQ_BODY_SIZE)
		return SMBD_E_TRUNCATED;
	if (smbd_get_le16(body) != SMB2_NEG_REQ_BODY_SIZE)
		return SMBD_E_SMB2_STRUCTURE_SIZE;

	dialect_count = smbd_get_le16(body + SMB2_NEG_REQ_DIALECT_COUNT);
	req->security_mode = smbd_get_le16(body + SMB2_NEG_REQ_SECURITY_MODE);
	req->capabilities = smbd_get_le32(body + SMB2_NEG_REQ_CAPABILITIES);
	memcpy(req->client_guid, body + SMB2_NEG_REQ_CLIENT_GUID,
	       sizeof(req->client_guid));

	dialects_end = SMB2_HDR_SIZE + SMB2_NEG_REQ_DIALECTS +
		       2u * dialect_count;
	if (dialect_count == 0 || dialects_end > len)
		return SMBD_E_SMB2_DIALECT_COUNT;
	req->dialects.present = true;
	req->dialects.count = dialect_count;
	req->dialects.ids = body + SMB2_NEG_REQ_DIALECTS;

	/* Samba looks at the contexts only when it may choose 3.1.1. */
	if (!smb2_id_list_has(&req->dialects, SMB2_DIALECT_311))
		return SMBD_E_OK;
	req->context_count = smbd_get_le16(body + SMB2_NEG_REQ_CONTEXT_COUNT);
	return parse_contexts(buf, len,
			      smbd_get_le32(body + SMB2_NEG_REQ_CONTEXT_OFFSET),
			      dialects_end, req);
}

static const u16 smb2_dialects_by_preference[] = {
	SMB2_DIALECT_311, SMB2_DIALECT_302, SMB2_DIALECT_300,
	SMB2_DIALECT_210, SMB2_DIALECT_202,
};

static u16 choose_dialect(const struct smb2_negotiate_policy *policy,
			  const struct smb2_negotiate_req *req)
{
	size_t i;

	for (i = 0; i < sizeof(smb2_dialects_by_preference) /
			sizeof(smb2_dialects_by_preference[0]); i++) {
		u16 d = smb2_dialects_by_preference[i];

		if (d < policy->min_dialect || d > policy->max_dialect)
			continue;
		if (smb2_id_list_has(&req->dialects, d))
			return d;
	}
	return 0;
}

/* The first id of @prefs (server preference order) the client offers. */
static bool choose_algorithm(const u16 *prefs, u8 nprefs,
			     const struct smb2_id_list *offered,
			     u16 *chosen)
{
	u8 i;

	for (i = 0; i < nprefs; i++) {
		if (smb2_id_list_has(offered, prefs[i])) {
			*chosen = prefs[i];
			return true;
		}
	}
	return false;
}

static bool policy_lists(const u16 *algs, u8 n, u16 id)
{
	u8 i;

	for (i = 0; i < n; i++)
		if (algs[i] == id)
			return true;
	return false;
}

/*
 * Samba's smb311_capabilities_check(): the signing algorithm and cipher in
 * force must be in smbd's lists (so that removing AES-128-CMAC or -CCM
 * disables 3.0 and 3.0.2); cipher 0 passes only if the list is not empty.
 */
static bool algorithms_allowed(const struct smb2_negotiate_policy *policy,
			       const struct smb2_negotiated *out)
{
	if (!policy_lists(policy->signing_algorithms,
			  policy->signing_algorithm_count,
			  out->signing_algorithm))
		return false;
	if (policy->cipher_count == 0)
		return false;
	return out->cipher == 0 ||
	       policy_lists(policy->ciphers, policy->cipher_count, out->cipher);
}

static u32 min_u32(u32 a, u32 b)
{
	return a < b ? a : b;
}

void smb2_negotiate_decide(const struct smb2_negotiate_policy *policy,
			   const struct smb2_negotiate_req *req,
			   struct smb2_negotiated *out)
{
	u32 caps = 0, max_limit = 0x10000;
	u16 d;

	memset(out, 0, sizeof(*out));
	d = choose_dialect(policy, req);
	if (d == 0) {
		out->status = NT_STATUS_NOT_SUPPORTED;
		return;
	}
	out->dialect = d;
	if (d == SMB2_DIALECT_311) {
		if (!req->preauth_hashes.present) {
			out->status = NT_STATUS_INVALID_PARAMETER;
			return;
		}
		if (!smb2_id_list_has(&req->preauth_hashes,
				      SMB2_PREAUTH_INTEGRITY_SHA512)) {
			out->status =
				NT_STATUS_SMB_NO_PREAUTH_INTEGRITY_HASH_OVERLAP;
			return;
		}
	}

	out->security_mode = policy->security_mode;
	caps |= policy->capabilities & SMB2_GLOBAL_CAP_DFS;
	if (d >= SMB2_DIALECT_210) {
		caps |= policy->capabilities & (SMB2_GLOBAL_CAP_LEASING |
						SMB2_GLOBAL_CAP_LARGE_MTU);
		if (caps & SMB2_GLOBAL_CAP_LARGE_MTU)
			max_limit = 0xFFFF00; /* largest PDU less a header */
	}
	if (d >= SMB2_DIALECT_300 &&
	    (policy->capabilities & SMB2_GLOBAL_CAP_ENCRYPTION) &&
	    (req->capabilities & SMB2_GLOBAL_CAP_ENCRYPTION))
		caps |= SMB2_GLOBAL_CAP_ENCRYPTION;

	out->signing_algorithm = d >= SMB2_DIALECT_300 ?
		SMB2_SIGNING_AES128_CMAC : SMB2_SIGNING_HMAC_SHA256;

	if (d == SMB2_DIALECT_311 && (caps & SMB2_GLOBAL_CAP_ENCRYPTION) &&
	    req->ciphers.present) {
		/* the cipher travels in the context, not as a capability */
		caps &= ~SMB2_GLOBAL_CAP_ENCRYPTION;
		out->encryption_context = true;
		choose_algorithm(policy->ciphers, policy->cipher_count,
				 &req->ciphers, &out->cipher);
	}
	if (caps & SMB2_GLOBAL_CAP_ENCRYPTION)
		out->cipher = SMB2_ENCRYPTION_AES128_CCM;

	if (d == SMB2_DIALECT_311 && req->signing_algorithms.present)
		out->signing_context =
			choose_algorithm(policy->signing_algorithms,
					 policy->signing_algorithm_count,
					 &req->signing_algorithms,
					 &out->signing_algorithm);

	if (!algorithms_allowed(policy, out)) {
		out->status = NT_STATUS_INVALID_PARAMETER;
		return;
	}

	if (d >= SMB2_DIALECT_300 &&
	    (policy->capabilities & SMB2_GLOBAL_CAP_MULTI_CHANNEL) &&
	    (req->capabilities & SMB2_GLOBAL_CAP_MULTI_CHANNEL))
		caps |= SMB2_GLOBAL_CAP_MULTI_CHANNEL;
	/* Samba 4.22 grants it ("smb3 directory leases"); 4.17 never asks */
	if (d >= SMB2_DIALECT_300 &&
	    (policy->capabilities & SMB2_GLOBAL_CAP_DIRECTORY_LEASING) &&
	    (req->capabilities & SMB2_GLOBAL_CAP_DIRECTORY_LEASING))
		caps |= SMB2_GLOBAL_CAP_DIRECTORY_LEASING;

	out->posix_context = d == SMB2_DIALECT_311 &&
			     policy->posix_extensions && req->posix;
	out->capabilities = caps;
	out->max_transact_size = min_u32(max_limit, policy->max_transact_size);
	out->max_read_size = min_u32(max_limit, policy->max_read_size);
	out->max_write_size = min_u32(max_limit, policy->max_write_size);
}

/* Append one context at *pos (8-aligned by the caller's padding). */
static void put_context(u8 *out, size_t *pos, u16 type,
			const u8 *data, u16 len)
{
	size_t start = align8(*pos);

	memset(out + *pos, 0, start - *pos);
	smbd_put_le16(out + start, type);
	smbd_put_le16(out + start + 2, len);
	smbd_put_le32(out + start + 4, 0);
	memcpy(out + start + NEG_CONTEXT_HDR_SIZE, data, len);
	*pos = start + NEG_CONTEXT_HDR_SIZE + len;
}

/* Worst case: four contexts of at most 38 data bytes, each padded. */
#define NEG_CONTEXT_MAX_DATA 38
#define NEG_CONTEXTS_MAX_SIZE \
	(4 * ((NEG_CONTEXT_HDR_SIZE + NEG_CONTEXT_MAX_DATA + 7) & ~7))

enum smbd_proto_error
smb2_negotiate_resp_build(const struct smb2_negotiate_policy *policy,
			  const struct smb2_negotiate_req *req,
			  const struct smb2_negotiated *neg,
			  u64 system_time,
			  const u8 salt[SMB2_PREAUTH_SALT_SIZE],
			  u8 *out, size_t cap, size_t *len)
{
	const size_t blob_off = SMB2_HDR_SIZE + NEG_RESP_BODY_SIZE;
	u8 *body = out + SMB2_HDR_SIZE;
	u8 ctx[NEG_CONTEXT_MAX_DATA];
	u16 count = 0;
	size_t pos;

	if (cap < blob_off + policy->sec_blob_len + NEG_CONTEXTS_MAX_SIZE)
		return SMBD_E_OUT_OF_SPACE;

	smb2_resp_hdr_build(&req->hdr, NT_STATUS_SUCCESS, 1, out);
	if (policy->sec_blob_len)	/* sec_blob may be NULL then */
		memcpy(out + blob_off, policy->sec_blob, policy->sec_blob_len);
	pos = blob_off + policy->sec_blob_len;

	if (neg->dialect == SMB2_DIALECT_311) {
		smbd_put_le16(ctx, 1);
		smbd_put_le16(ctx + 2, SMB2_PREAUTH_SALT_SIZE);
		smbd_put_le16(ctx + 4, SMB2_PREAUTH_INTEGRITY_SHA512);
		memcpy(ctx + 6, salt, SMB2_PREAUTH_SALT_SIZE);
		put_context(out, &pos, SMB2_PREAUTH_INTEGRITY_CAPABILITIES,
			    ctx, sizeof(ctx));
		count++;
	}
	if (neg->encryption_context) {
		smbd_put_le16(ctx, 1);
		smbd_put_le16(ctx + 2, neg->cipher);
		put_context(out, &pos, SMB2_ENCRYPTION_CAPABILITIES, ctx, 4);
		count++;
	}
	if (neg->signing_context) {
		smbd_put_le16(ctx, 1);
		smbd_put_le16(ctx + 2, neg->signing_algorithm);
		put_context(out, &pos, SMB2_SIGNING_CAPABILITIES, ctx, 4);
		count++;
	}
	if (neg->posix_context) {
		put_context(out, &pos, SMB2_POSIX_EXTENSIONS_AVAILABLE,
			    smb2_posix_context_tag,
			    SMB2_POSIX_CONTEXT_TAG_SIZE);
		count++;
	}

	memset(body, 0, NEG_RESP_BODY_SIZE);
	smbd_put_le16(body + 0x00, NEG_RESP_BODY_SIZE + 1);
	smbd_put_le16(body + 0x02, neg->security_mode);
	smbd_put_le16(body + 0x04, neg->dialect);
	smbd_put_le16(body + 0x06, count);
	memcpy(body + 0x08, policy->server_guid, 16);
	smbd_put_le32(body + 0x18, neg->capabilities);
	smbd_put_le32(body + 0x1C, neg->max_transact_size);
	smbd_put_le32(body + 0x20, neg->max_read_size);
	smbd_put_le32(body + 0x24, neg->max_write_size);
	smbd_put_le64(body + 0x28, system_time);
	smbd_put_le64(body + 0x30, 0);
	smbd_put_le16(body + 0x38, (u16)blob_off);
	smbd_put_le16(body + 0x3A, policy->sec_blob_len);
	smbd_put_le32(body + 0x3C, count ?
		      (u32)align8(blob_off + policy->sec_blob_len) : 0);
	*len = pos;
	return SMBD_E_OK;
}
