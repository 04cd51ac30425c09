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
	uint16_t min_version;
	uint16_t max_version;
	uint16_t credits_requested;
	uint32_t preferred_send_size;
	uint32_t max_receive_size;
	uint32_t max_fragmented_size;
};

struct smbd_negotiate_resp {
	uint16_t min_version;
	uint16_t max_version;
	uint16_t negotiated_version;
	uint16_t credits_requested;
	uint16_t credits_granted;
	uint32_t status;
	uint32_t max_read_write_size;
	uint32_t preferred_send_size;
	uint32_t max_receive_size;
	uint32_t max_fragmented_size;
};

/* What one side is configured with (SET_PARAMS, or the client tool). */
struct smbd_local_params {
	uint16_t receive_credit_max;
	uint16_t send_credit_target;
	uint32_t max_send_size;
	uint32_t max_receive_size;
	uint32_t max_fragmented_size;
	uint32_t max_read_write_size;
};

/* What a connection runs with once the negotiate succeeded. */
struct smbd_conn_params {
	uint16_t receive_credit_max;	/* receives we post at most */
	uint16_t receive_credit_target;	/* the peer's CreditsRequested */
	uint16_t send_credit_target;	/* what we request */
	uint32_t max_send_size;		/* per message we send */
	uint32_t max_receive_size;	/* per message we receive */
	uint32_t max_fragmented_send_size; /* PDU limit towards the peer */
	uint32_t max_fragmented_recv_size; /* PDU limit from the peer */
	uint32_t max_read_write_size;
};

/*
 * Parse and validate a Negotiate Request (server side, MS-SMBD 3.1.5.6).
 * SMBD_E_VERSION means: answer with smbd_negotiate_resp_failure(); any other
 * error means: disconnect without an answer.
 */
enum smbd_proto_error smbd_negotiate_req_parse(const uint8_t *buf, size_t len,
					       struct smbd_negotiate_req *req);
void smbd_negotiate_req_build(const struct smbd_negotiate_req *req,
			      uint8_t out[SMBD_NEGOTIATE_REQ_SIZE]);

/* Server: combine our parameters with a valid request. */
void smbd_negotiate_server_params(const struct smbd_local_params *local,
				  const struct smbd_negotiate_req *req,
				  struct smbd_conn_params *conn);
/* Server: the success response granting @credits_granted receives. */
void smbd_negotiate_resp_success(const struct smbd_conn_params *conn,
				 uint16_t credits_granted,
				 struct smbd_negotiate_resp *resp);
/* Server: the failure response (MS-SMBD 3.1.5.3): only versions + status. */
void smbd_negotiate_resp_failure(struct smbd_negotiate_resp *resp);

/*
 * Client: parse a response and validate it against the request we sent
 * (the checks of the Linux client), then combine the parameters.
 */
enum smbd_proto_error smbd_negotiate_resp_parse(const uint8_t *buf, size_t len,
						struct smbd_negotiate_resp *resp);
enum smbd_proto_error
smbd_negotiate_client_params(const struct smbd_local_params *local,
			     const struct smbd_negotiate_resp *resp,
			     struct smbd_conn_params *conn);
void smbd_negotiate_resp_build(const struct smbd_negotiate_resp *resp,
			       uint8_t out[SMBD_NEGOTIATE_RESP_SIZE]);

#ifdef __cplusplus
}
#endif

#endif /* SMBD_PROTO_NEGOTIATE_H */
