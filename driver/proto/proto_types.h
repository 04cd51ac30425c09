/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Types and little-endian accessors for the protocol core. The core is
 * compiled into the module and into the userspace tests and tools, so it uses
 * only fixed-width types, memcpy/memset and no allocation.
 */
#ifndef SMBD_PROTO_TYPES_H
#define SMBD_PROTO_TYPES_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/string.h>
#else
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#endif

static inline uint16_t smbd_get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t smbd_get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) |
	       ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static inline uint64_t smbd_get_le64(const uint8_t *p)
{
	return (uint64_t)smbd_get_le32(p) |
	       ((uint64_t)smbd_get_le32(p + 4) << 32);
}

static inline void smbd_put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void smbd_put_le32(uint8_t *p, uint32_t v)
{
	smbd_put_le16(p, (uint16_t)v);
	smbd_put_le16(p + 2, (uint16_t)(v >> 16));
}

static inline void smbd_put_le64(uint8_t *p, uint64_t v)
{
	smbd_put_le32(p, (uint32_t)v);
	smbd_put_le32(p + 4, (uint32_t)(v >> 32));
}

#endif /* SMBD_PROTO_TYPES_H */
