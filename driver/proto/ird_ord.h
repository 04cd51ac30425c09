/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * iWARP's IRD/ORD exchange ([MS-SMBD] appendix on iWARP): MPA v1 cannot
 * negotiate how many RDMA READs each side may have outstanding, so the
 * peers put it in the connection's private data: 8 bytes, the sender's
 * IRD then its ORD, big-endian. Old Linux clients sent them little-endian.
 */
#ifndef SMBD_PROTO_IRD_ORD_H
#define SMBD_PROTO_IRD_ORD_H

#include "proto_types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SMBD_IRD_ORD_SIZE 8
/* what an RDMA device and the CM take: a u8 each */
#define SMBD_IRD_ORD_MAX 255

struct smbd_ird_ord {
	u32 ird;	/* RDMA READs the sender serves at once */
	u32 ord;	/* RDMA READs the sender issues at once */
};

/*
 * Reads the private data of a connect request: false when it is not the
 * 8-byte IRD/ORD blob. Big-endian unless only the little-endian reading
 * is within SMBD_IRD_ORD_MAX; either way clamped to it.
 */
bool smbd_ird_ord_parse(const u8 *data, u32 len, struct smbd_ird_ord *out);

/* The blob a responder sends in its accept: its own IRD and ORD. */
void smbd_ird_ord_build(u8 out[SMBD_IRD_ORD_SIZE],
			const struct smbd_ird_ord *v);

#ifdef __cplusplus
}
#endif

#endif /* SMBD_PROTO_IRD_ORD_H */
