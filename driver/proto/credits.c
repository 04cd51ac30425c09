// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* MS-SMBD credit accounting. */
#include "credits.h"

static u16 clamp_target(u16 requested, u16 max)
{
	if (requested == 0)
		return 1;
	return requested < max ? requested : max;
}

void smbd_credits_init(struct smbd_credits *c,
		       const struct smbd_conn_params *p,
		       u16 send_credits)
{
	memset(c, 0, sizeof(*c));
	c->send_credits = send_credits;
	c->send_credit_target = p->send_credit_target;
	c->recv_credit_max = p->receive_credit_max;
	c->recv_credit_target = clamp_target(p->receive_credit_target,
					     p->receive_credit_max);
}

u32 smbd_credits_to_post(const struct smbd_credits *c)
{
	if (c->recv_posted >= c->recv_credit_target)
		return 0;
	return c->recv_credit_target - c->recv_posted;
}

void smbd_credits_posted(struct smbd_credits *c, u32 n)
{
	c->recv_posted += n;
}

static u16 ungranted(const struct smbd_credits *c)
{
	u32 n = c->recv_posted - c->recv_granted;

	return n > 0xffff ? 0xffff : (u16)n;
}

u16 smbd_credits_take_grant(struct smbd_credits *c)
{
	u16 n = ungranted(c);

	c->recv_granted += n;
	return n;
}

enum smbd_proto_error smbd_credits_received(struct smbd_credits *c,
					    const struct smbd_data_hdr *hdr)
{
	if (c->recv_granted == 0)
		return SMBD_E_NO_RECEIVE_CREDIT;
	if ((u64)c->send_credits + hdr->credits_granted >
	    SMBD_MAX_SEND_CREDITS)
		return SMBD_E_SEND_CREDIT_OVERFLOW;

	c->recv_granted--;
	c->recv_posted--;
	c->send_credits += hdr->credits_granted;
	c->recv_credit_target = clamp_target(hdr->credits_requested,
					     c->recv_credit_max);
	return SMBD_E_OK;
}

enum smbd_send_verdict smbd_credits_send(struct smbd_credits *c,
					 u16 *grant)
{
	u16 n = ungranted(c);

	*grant = 0;
	if (c->send_credits == 0)
		return SMBD_SEND_NO_CREDIT;
	if (c->send_credits == 1 && n == 0)
		return SMBD_SEND_NEED_GRANT;

	c->send_credits--;
	c->recv_granted += n;
	*grant = n;
	return SMBD_SEND_OK;
}

bool smbd_credits_grant_due(const struct smbd_credits *c)
{
	if (ungranted(c) == 0)
		return false;
	/*
	 * A peer on its last credit may have nothing to grant, and then it
	 * cannot send until we grant (the last credit rule); with a target
	 * below 4 the quarter alone would leave both sides waiting.
	 */
	return c->recv_granted <= c->recv_credit_target / 4u ||
	       c->recv_granted <= 1;
}
