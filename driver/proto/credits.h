/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * MS-SMBD credit accounting (3.1.5.1, 3.1.5.8, 3.1.5.9) as a pure state
 * machine: the engine reports posted receives, received messages and asks
 * before every send. The rules it enforces:
 *  - only receives that are really posted are granted;
 *  - the last send credit is never spent on a message that grants nothing
 *    (otherwise both sides can end with zero credits and no way out);
 *  - receives are refilled up to what the peer asks for (its
 *    CreditsRequested, bounded by our ReceiveCreditMax);
 *  - a peer that sends without a credit, or grants more than a 16-bit
 *    credit window, breaks the protocol.
 */
#ifndef SMBD_PROTO_CREDITS_H
#define SMBD_PROTO_CREDITS_H

#include "data_transfer.h"
#include "negotiate.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SMBD_MAX_SEND_CREDITS 65535u

struct smbd_credits {
	u32 send_credits;		/* granted by the peer, not spent */
	u16 send_credit_target;	/* our CreditsRequested */
	u16 recv_credit_max;	/* receives we post at most */
	u16 recv_credit_target;	/* the peer's CreditsRequested */
	u32 recv_posted;		/* receives posted, not completed */
	u32 recv_granted;		/* of those, granted to the peer */
};

enum smbd_send_verdict {
	SMBD_SEND_OK,		/* send; *grant goes into CreditsGranted */
	SMBD_SEND_NO_CREDIT,	/* wait for the peer to grant credits */
	SMBD_SEND_NEED_GRANT,	/* last credit: post a receive first */
};

/* After a successful negotiate; @send_credits from the peer, if known. */
void smbd_credits_init(struct smbd_credits *c,
		       const struct smbd_conn_params *p,
		       u16 send_credits);
/* Receives to post now to reach the target. */
u32 smbd_credits_to_post(const struct smbd_credits *c);
/* @n more receives are posted (at most what to_post() said). */
void smbd_credits_posted(struct smbd_credits *c, u32 n);
/* Take all posted-but-ungranted receives as a grant (negotiate response). */
u16 smbd_credits_take_grant(struct smbd_credits *c);
/* A validated message consumed one of our posted receives. */
enum smbd_proto_error smbd_credits_received(struct smbd_credits *c,
					    const struct smbd_data_hdr *hdr);
/* Ask before sending one message; on OK one credit is spent. */
enum smbd_send_verdict smbd_credits_send(struct smbd_credits *c,
					 u16 *grant);
/*
 * Should a message go out only to grant credits? True when grants are
 * pending and the peer is at or below a quarter of its target or down to
 * its last credit (which it may not spend without granting).
 */
bool smbd_credits_grant_due(const struct smbd_credits *c);

#ifdef __cplusplus
}
#endif

#endif /* SMBD_PROTO_CREDITS_H */
