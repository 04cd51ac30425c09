/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* MS-SMBD 2.2.1 / 2.2.2: the Negotiate Request and Response. */
#ifndef SMBD_PROTO_NEGOTIATE_H
#define SMBD_PROTO_NEGOTIATE_H

#include "proto_error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SMBD_VERSION_1 0x0100
#define SMBD_NEGOTIATE_REQ_SIZE 20
#define SMBD_NEGOTIATE_RESP_SIZE 32
#define SMBD_MIN_RECEIVE_SIZE 128		/* MS-SMBD 3.1.5.6 */
#define SMBD_MIN_FRAGMENTED_SIZE 131072		/* MS-SMBD 3.1.5.6 */
#define SMBD_STATUS_SUCCESS 0x00000000u
#define SMBD_STATUS_NOT_SUPPORTED 0xC00000BBu

struct smbd_negotiate_req {
	u16 min_version;
	u16 max_version;
	u16 credits_requested;
	u32 preferred_send_size;
	u32 max_receive_size;
	u32 max_fragmented_size;
};

struct smbd_negotiate_resp {
	u16 min_version;
	u16 max_version;
	u16 negotiated_version;
	u16 credits_requested;
	u16 credits_granted;
	u32 status;
	u32 max_read_write_size;
	u32 preferred_send_size;
	u32 max_receive_size;
	u32 max_fragmented_size;
};

/* What one side is configured with (SET_PARAMS, or the client tool). */
struct smbd_local_params {
	u16 receive_credit_max;
	u16 send_credit_target;
	u32 max_send_size;
	u32 max_receive_size;
	u32 max_fragmented_size;
	u32 max_read_write_size;
};

/* What a connection runs with once the negotiate succeeded. */
struct smbd_conn_params {
	u16 receive_credit_max;	/* receives we post at most */
	u16 receive_credit_target;	/* the peer's CreditsRequested */
	u16 send_credit_target;	/* what we request */
	u32 max_send_size;		/* per message we send */
	u32 max_receive_size;	/* per message we receive */
	u32 max_fragmented_send_size; /* PDU limit towards the peer */
	u32 max_fragmented_recv_size; /* PDU limit from the peer */
	u32 max_read_write_size;
};

/*
 * Parse and validate a Negotiate Request (server side, MS-SMBD 3.1.5.6).
 * SMBD_E_VERSION means: answer with smbd_negotiate_resp_failure(); any other
 * error means: disconnect without an answer.
 */
enum smbd_proto_error smbd_negotiate_req_parse(const u8 *buf, size_t len,
					       struct smbd_negotiate_req *req);
/* Client (client.c, not in the module): a request's bytes. */
void smbd_negotiate_req_build(const struct smbd_negotiate_req *req,
			      u8 out[SMBD_NEGOTIATE_REQ_SIZE]);

/* Server: combine our parameters with a valid request. */
void smbd_negotiate_server_params(const struct smbd_local_params *local,
				  const struct smbd_negotiate_req *req,
				  struct smbd_conn_params *conn);
/* Server: the success response granting @credits_granted receives. */
void smbd_negotiate_resp_success(const struct smbd_conn_params *conn,
				 u16 credits_granted,
				 struct smbd_negotiate_resp *resp);
/* Server: the failure response (MS-SMBD 3.1.5.3): only versions + status. */
void smbd_negotiate_resp_failure(struct smbd_negotiate_resp *resp);

/*
 * Client (client.c, not in the module): parse a response and validate it
 * against the request we sent (the checks of the Linux client), then
 * combine the parameters.
 */
enum smbd_proto_error smbd_negotiate_resp_parse(const u8 *buf, size_t len,
						struct smbd_negotiate_resp *resp);
enum smbd_proto_error
smbd_negotiate_client_params(const struct smbd_local_params *local,
			     const struct smbd_negotiate_resp *resp,
			     struct smbd_conn_params *conn);
void smbd_negotiate_resp_build(const struct smbd_negotiate_resp *resp,
			       u8 out[SMBD_NEGOTIATE_RESP_SIZE]);

#ifdef __cplusplus
}
#endif

#endif /* SMBD_PROTO_NEGOTIATE_H */
