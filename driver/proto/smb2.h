/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The SMB2 the driver itself speaks (MS-SMB2): header parsing, NEGOTIATE
 * request parsing and the response built from smbd's policy (3.3.5.4, as
 * Samba 4.17 answers), the first SESSION_SETUP request, error responses.
 * Parsed structs point into the caller's buffer; nothing is allocated.
 */
#ifndef SMBD_PROTO_SMB2_H
#define SMBD_PROTO_SMB2_H

#include "proto_error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SMB2_HDR_SIZE 64
/* The header's fields (MS-SMB2 2.2.1.2), as offsets from its start. */
#define SMB2_HDR_PROTOCOL_ID 0
#define SMB2_HDR_STRUCTURE_SIZE 4
#define SMB2_HDR_CREDIT_CHARGE 6
#define SMB2_HDR_STATUS 8
#define SMB2_HDR_COMMAND 12
#define SMB2_HDR_CREDITS 14
#define SMB2_HDR_FLAGS 16
#define SMB2_HDR_NEXT_COMMAND 20
#define SMB2_HDR_MESSAGE_ID 24
#define SMB2_HDR_PROCESS_ID 32
#define SMB2_HDR_TREE_ID 36
#define SMB2_HDR_SESSION_ID 40
#define SMB2_HDR_SIGNATURE 48

#define SMB2_PROTOCOL_ID_SIZE 4
extern const u8 smb2_protocol_id[SMB2_PROTOCOL_ID_SIZE];

/*
 * Before a connection has an owner, the driver takes no SMB2 PDU larger
 * than this (driver/smbdirect.h says why).
 */
#define SMBD_MAX_SETUP_PDU (128U << 10)

#define SMB2_NEGOTIATE 0x0000
#define SMB2_SESSION_SETUP 0x0001

#define SMB2_FLAGS_SERVER_TO_REDIR 0x00000001u
#define SMB2_FLAGS_ASYNC_COMMAND 0x00000002u
#define SMB2_FLAGS_RELATED_OPERATIONS 0x00000004u
#define SMB2_FLAGS_SIGNED 0x00000008u

#define SMB2_DIALECT_202 0x0202
#define SMB2_DIALECT_210 0x0210
#define SMB2_DIALECT_300 0x0300
#define SMB2_DIALECT_302 0x0302
#define SMB2_DIALECT_311 0x0311

#define SMB2_NEGOTIATE_SIGNING_ENABLED 0x0001
#define SMB2_NEGOTIATE_SIGNING_REQUIRED 0x0002

#define SMB2_GLOBAL_CAP_DFS 0x00000001u
#define SMB2_GLOBAL_CAP_LEASING 0x00000002u
#define SMB2_GLOBAL_CAP_LARGE_MTU 0x00000004u
#define SMB2_GLOBAL_CAP_MULTI_CHANNEL 0x00000008u
#define SMB2_GLOBAL_CAP_PERSISTENT_HANDLES 0x00000010u
#define SMB2_GLOBAL_CAP_DIRECTORY_LEASING 0x00000020u
#define SMB2_GLOBAL_CAP_ENCRYPTION 0x00000040u

#define SMB2_PREAUTH_INTEGRITY_CAPABILITIES 0x0001
#define SMB2_ENCRYPTION_CAPABILITIES 0x0002
#define SMB2_COMPRESSION_CAPABILITIES 0x0003
#define SMB2_NETNAME_NEGOTIATE_CONTEXT_ID 0x0005
#define SMB2_TRANSPORT_CAPABILITIES 0x0006
#define SMB2_RDMA_TRANSFORM_CAPABILITIES 0x0007
#define SMB2_SIGNING_CAPABILITIES 0x0008
#define SMB2_POSIX_EXTENSIONS_AVAILABLE 0x0100

#define SMB2_PREAUTH_INTEGRITY_SHA512 0x0001
#define SMB2_PREAUTH_SALT_SIZE 32

#define SMB2_ENCRYPTION_AES128_CCM 0x0001
#define SMB2_ENCRYPTION_AES128_GCM 0x0002
#define SMB2_ENCRYPTION_AES256_CCM 0x0003
#define SMB2_ENCRYPTION_AES256_GCM 0x0004

#define SMB2_SIGNING_HMAC_SHA256 0x0000
#define SMB2_SIGNING_AES128_CMAC 0x0001
#define SMB2_SIGNING_AES128_GMAC 0x0002

#define SMB2_SESSION_FLAG_BINDING 0x01

#define NT_STATUS_SUCCESS 0x00000000u
#define NT_STATUS_INVALID_PARAMETER 0xC000000Du
#define NT_STATUS_INSUFFICIENT_RESOURCES 0xC000009Au
#define NT_STATUS_NOT_SUPPORTED 0xC00000BBu
#define NT_STATUS_USER_SESSION_DELETED 0xC0000203u
#define NT_STATUS_SMB_NO_PREAUTH_INTEGRITY_HASH_OVERLAP 0xC05D0000u

#define SMB2_POSIX_CONTEXT_TAG_SIZE 16
extern const u8 smb2_posix_context_tag[SMB2_POSIX_CONTEXT_TAG_SIZE];

struct smb2_hdr {
	u16 credit_charge;
	u32 status;
	u16 command;
	u16 credits;
	u32 flags;
	u32 next_command;
	u64 message_id;
	u32 process_id;
	u32 tree_id;
	u64 session_id;
	u8 signature[16];
};

/*
 * Write @hdr as a 64-byte header: the protocol id, StructureSize 64, then
 * each field as given (a request's Status is its ChannelSequence, 0).
 */
void smb2_hdr_build(const struct smb2_hdr *hdr, u8 out[SMB2_HDR_SIZE]);
/* Decode the 64-byte header of any message: protocol id and size checked. */
enum smbd_proto_error smb2_hdr_decode(const u8 *buf, size_t len,
				      struct smb2_hdr *hdr);
/* Parse the 64-byte header of a request. */
enum smbd_proto_error smb2_hdr_parse(const u8 *buf, size_t len,
				     struct smb2_hdr *hdr);

/* A list of 16-bit ids inside the request (little-endian on the wire). */
struct smb2_id_list {
	const u8 *ids;
	u16 count;
	bool present;
};

u16 smb2_id_list_get(const struct smb2_id_list *l, u16 i);
bool smb2_id_list_has(const struct smb2_id_list *l, u16 id);

/* NEGOTIATE request body (2.2.3): offsets from the end of the header. */
#define SMB2_NEG_REQ_BODY_SIZE 36	/* its StructureSize */
#define SMB2_NEG_REQ_DIALECT_COUNT 2
#define SMB2_NEG_REQ_SECURITY_MODE 4
#define SMB2_NEG_REQ_CAPABILITIES 8
#define SMB2_NEG_REQ_CLIENT_GUID 12
#define SMB2_NEG_REQ_CONTEXT_OFFSET 28
#define SMB2_NEG_REQ_CONTEXT_COUNT 32
#define SMB2_NEG_REQ_DIALECTS SMB2_NEG_REQ_BODY_SIZE

struct smb2_negotiate_req {
	struct smb2_hdr hdr;
	u16 security_mode;
	u32 capabilities;
	u8 client_guid[16];
	struct smb2_id_list dialects;
	/* 3.1.1 negotiate contexts (parsed only when 0x0311 is offered) */
	u16 context_count;
	struct smb2_id_list preauth_hashes;
	struct smb2_id_list ciphers;
	struct smb2_id_list signing_algorithms;
	struct smb2_id_list rdma_transforms;
	bool compression;
	bool posix;	/* the POSIX context carries the POSIX tag */
};

enum smbd_proto_error smb2_negotiate_req_parse(const u8 *buf,
					       size_t len,
					       struct smb2_negotiate_req *req);

/* What smbd answers to a NEGOTIATE (SET_PARAMS carries it). */
#define SMB2_POLICY_MAX_ALGORITHMS 8
struct smb2_negotiate_policy {
	u8 server_guid[16];
	u32 capabilities;
	u16 security_mode;
	u16 min_dialect;
	u16 max_dialect;
	u32 max_transact_size;
	u32 max_read_size;
	u32 max_write_size;
	u16 ciphers[SMB2_POLICY_MAX_ALGORITHMS];
	u16 signing_algorithms[SMB2_POLICY_MAX_ALGORITHMS];
	u8 cipher_count;
	u8 signing_algorithm_count;
	bool posix_extensions;
	const u8 *sec_blob;
	u16 sec_blob_len;
};

/* The outcome of a NEGOTIATE. status != 0: answer with an error response. */
struct smb2_negotiated {
	u32 status;
	u16 dialect;
	u16 security_mode;
	u32 capabilities;
	u32 max_transact_size;
	u32 max_read_size;
	u32 max_write_size;
	u16 cipher;		/* 0: none */
	u16 signing_algorithm;
	bool encryption_context;	/* answer with an encryption context */
	bool signing_context;		/* answer with a signing context */
	bool posix_context;		/* answer with the POSIX context */
};

void smb2_negotiate_decide(const struct smb2_negotiate_policy *policy,
			   const struct smb2_negotiate_req *req,
			   struct smb2_negotiated *out);

/*
 * Build the NEGOTIATE response for a successful decision. @system_time is
 * the FILETIME of now; @salt the preauth salt (3.1.1).
 */
enum smbd_proto_error
smb2_negotiate_resp_build(const struct smb2_negotiate_policy *policy,
			  const struct smb2_negotiate_req *req,
			  const struct smb2_negotiated *neg,
			  u64 system_time,
			  const u8 salt[SMB2_PREAUTH_SALT_SIZE],
			  u8 *out, size_t cap, size_t *len);

/*
 * SESSION_SETUP request body (2.2.5): offsets from the end of the header.
 * Its StructureSize is 25: the fixed part and the buffer's first byte.
 */
#define SMB2_SETUP_REQ_BODY_SIZE 24
#define SMB2_SETUP_REQ_FLAGS 2
#define SMB2_SETUP_REQ_SECURITY_MODE 3
#define SMB2_SETUP_REQ_CAPABILITIES 4
#define SMB2_SETUP_REQ_CHANNEL 8
#define SMB2_SETUP_REQ_BUFFER_OFFSET 12
#define SMB2_SETUP_REQ_BUFFER_LENGTH 14
#define SMB2_SETUP_REQ_PREVIOUS_SESSION 16

struct smb2_session_setup_req {
	struct smb2_hdr hdr;
	u8 flags;
	u8 security_mode;
	u32 capabilities;
	u32 channel;
	u64 previous_session_id;
	const u8 *sec_buf;
	u16 sec_buf_len;
};

enum smbd_proto_error
smb2_session_setup_parse(const u8 *buf, size_t len,
			 struct smb2_session_setup_req *req);

/*
 * Whether smbd's message @buf completes the binding to @session_id: a
 * signed SESSION_SETUP response for that session with STATUS_SUCCESS. A
 * binding succeeds only once smbd checked the peer's signature with the
 * session's key, and smbd signs its answer (MS-SMB2 3.3.5.5.3). An interim
 * STATUS_MORE_PROCESSING_REQUIRED, or a success for another session (a new
 * one the peer set up on the channel), proves nothing.
 */
bool smb2_proves_session(const u8 *buf, size_t len, u64 session_id);

/* The response header for @req as Samba writes it (flags, ids copied). */
void smb2_resp_hdr_build(const struct smb2_hdr *req, u32 status,
			 u16 credits, u8 out[SMB2_HDR_SIZE]);

#define SMB2_ERROR_RESP_SIZE (SMB2_HDR_SIZE + 9)
/* An SMB2 ERROR response to the request @req_hdr with @status. */
enum smbd_proto_error smb2_error_resp_build(const struct smb2_hdr *req_hdr,
					    u32 status, u8 *out,
					    size_t cap, size_t *len);

#ifdef __cplusplus
}
#endif

#endif /* SMBD_PROTO_SMB2_H */
