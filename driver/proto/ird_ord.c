// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#include "ird_ord.h"

static u32 smbd_get_be32(const u8 *p)
{
	return ((u32)p[0] << 24) | ((u32)p[1] << 16) | ((u32)p[2] << 8) |
	       (u32)p[3];
}

static void smbd_put_be32(u8 *p, u32 v)
{
	p[0] = (u8)(v >> 24);
	p[1] = (u8)(v >> 16);
	p[2] = (u8)(v >> 8);
	p[3] = (u8)v;
}

static u32 smbd_ird_ord_clamp(u32 v)
{
	return v > SMBD_IRD_ORD_MAX ? SMBD_IRD_ORD_MAX : v;
}

bool smbd_ird_ord_parse(const u8 *data, u32 len, struct smbd_ird_ord *out)
{
	u32 be_ird, be_ord, le_ird, le_ord;

	if (!data || len != SMBD_IRD_ORD_SIZE)
		return false;
	be_ird = smbd_get_be32(data);
	be_ord = smbd_get_be32(data + 4);
	le_ird = smbd_get_le32(data);
	le_ord = smbd_get_le32(data + 4);
	if ((be_ird > SMBD_IRD_ORD_MAX || be_ord > SMBD_IRD_ORD_MAX) &&
	    le_ird <= SMBD_IRD_ORD_MAX && le_ord <= SMBD_IRD_ORD_MAX) {
		out->ird = le_ird;
		out->ord = le_ord;
		return true;
	}
	out->ird = smbd_ird_ord_clamp(be_ird);
	out->ord = smbd_ird_ord_clamp(be_ord);
	return true;
}

void smbd_ird_ord_build(u8 out[SMBD_IRD_ORD_SIZE],
			const struct smbd_ird_ord *v)
{
	smbd_put_be32(out, smbd_ird_ord_clamp(v->ird));
	smbd_put_be32(out + 4, smbd_ird_ord_clamp(v->ord));
}
