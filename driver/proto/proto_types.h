/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Types and little-endian accessors for the protocol core. The core is
 * compiled into the module and into the userspace tests and tools, so it uses
 * only the kernel's fixed-width types (defined here for userspace),
 * memcpy/memset and no allocation.
 */
#ifndef SMBD_PROTO_TYPES_H
#define SMBD_PROTO_TYPES_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/string.h>
#else
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* the compiler's own uint64_t etc., so u64 * and uint64_t * mix */
typedef __UINT8_TYPE__ u8;
typedef __UINT16_TYPE__ u16;
typedef __UINT32_TYPE__ u32;
typedef __UINT64_TYPE__ u64;
typedef __INT32_TYPE__ s32;
#endif

static inline u16 smbd_get_le16(const u8 *p)
{
	return (u16)(p[0] | (p[1] << 8));
}

static inline u32 smbd_get_le32(const u8 *p)
{
	return (u32)p[0] | ((u32)p[1] << 8) |
	       ((u32)p[2] << 16) | ((u32)p[3] << 24);
}

static inline u64 smbd_get_le64(const u8 *p)
{
	return (u64)smbd_get_le32(p) |
	       ((u64)smbd_get_le32(p + 4) << 32);
}

static inline void smbd_put_le16(u8 *p, u16 v)
{
	p[0] = (u8)v;
	p[1] = (u8)(v >> 8);
}

static inline void smbd_put_le32(u8 *p, u32 v)
{
	smbd_put_le16(p, (u16)v);
	smbd_put_le16(p + 2, (u16)(v >> 16));
}

static inline void smbd_put_le64(u8 *p, u64 v)
{
	smbd_put_le32(p, (u32)v);
	smbd_put_le32(p + 4, (u32)(v >> 32));
}

/* one min() for both builds of the core: userspace has no min() */
static inline u16 smbd_min_u16(u16 a, u16 b)
{
	return a < b ? a : b;
}

static inline u32 smbd_min_u32(u32 a, u32 b)
{
	return a < b ? a : b;
}

#endif /* SMBD_PROTO_TYPES_H */
