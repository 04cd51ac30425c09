/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * One code per validation rule of the protocol core, so that the driver can
 * count and report exactly which rule a peer broke and the tests can check
 * each rule on its own.
 */
#ifndef SMBD_PROTO_ERROR_H
#define SMBD_PROTO_ERROR_H

#include "proto_types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SMBD_PROTO_ERRORS(X)						\
	X(OK, "ok")							\
	X(TRUNCATED, "message shorter than its fixed part")		\
	X(OUT_OF_SPACE, "output buffer too small")			\
	/* MS-SMBD negotiate */						\
	X(VERSION, "no common SMB Direct version")			\
	X(ZERO_CREDITS_REQUESTED, "CreditsRequested is 0")		\
	X(ZERO_CREDITS_GRANTED, "CreditsGranted is 0")			\
	X(RECEIVE_SIZE_TOO_SMALL, "MaxReceiveSize below 128")		\
	X(FRAGMENTED_SIZE_TOO_SMALL, "MaxFragmentedSize below 131072")	\
	X(SEND_SIZE_TOO_SMALL, "send size below 128 or no room for data")		\
	X(SEND_SIZE_TOO_LARGE, "PreferredSendSize above our MaxReceiveSize") \
	X(NEGOTIATE_FAILED, "negotiate response status is not success") \
	/* MS-SMBD data transfer */					\
	X(MESSAGE_TOO_LONG, "message longer than MaxReceiveSize")	\
	X(DATA_OFFSET_ALIGNMENT, "DataOffset not 8-byte aligned")	\
	X(DATA_OFFSET_IN_HEADER, "DataOffset inside the header")	\
	X(DATA_PAST_END, "DataOffset + DataLength past the message")	\
	X(REMAINING_WITHOUT_DATA, "RemainingDataLength without data")	\
	X(FRAGMENT_TOO_LARGE,						\
	  "DataLength + RemainingDataLength above MaxFragmentedSize")	\
	X(REASSEMBLY_MISMATCH, "RemainingDataLength does not continue the message") \
	/* credits */							\
	X(NO_RECEIVE_CREDIT, "message received without a granted credit") \
	X(SEND_CREDIT_OVERFLOW, "CreditsGranted overflows the send credits") \
	/* fragmentation */						\
	X(EMPTY_PDU, "PDU of 0 bytes")					\
	X(PDU_TOO_LARGE, "PDU above the peer's MaxFragmentedSize")	\
	/* SMB2 */							\
	X(SMB2_PROTOCOL_ID, "not an SMB2 message")			\
	X(SMB2_HEADER_SIZE, "SMB2 header StructureSize is not 64")	\
	X(SMB2_NOT_REQUEST, "SMB2 response flag set on a request")	\
	X(SMB2_UNEXPECTED_COMMAND, "unexpected SMB2 command")		\
	X(SMB2_COMPOUND, "compounded request where none is allowed")	\
	X(SMB2_SEQUENCE, "NEGOTIATE is not message 0 of credit charge 1") \
	X(SMB2_STRUCTURE_SIZE, "SMB2 body StructureSize is wrong")	\
	X(SMB2_DIALECT_COUNT, "DialectCount is 0 or past the message")	\
	X(SMB2_CONTEXT_OFFSET, "NegotiateContextOffset out of range")	\
	X(SMB2_CONTEXT_TRUNCATED, "negotiate context past the message") \
	X(SMB2_CONTEXT_DUPLICATE, "negotiate context given twice")	\
	X(SMB2_CONTEXT_EMPTY, "negotiate context lists no algorithm")	\
	X(SMB2_NO_PREAUTH, "3.1.1 without a preauth integrity context")	\
	X(SMB2_SECURITY_BUFFER, "security buffer out of range")		\
	/* Buffer Descriptor V1 lists */				\
	X(DESC_LENGTH, "descriptor list length not a multiple of 16")	\
	X(DESC_COUNT, "descriptor count 0 or above the limit")		\
	X(DESC_ZERO_LENGTH, "descriptor of length 0")			\
	X(DESC_WRAPS, "descriptor offset + length wraps")		\
	X(DESC_TOTAL, "descriptors total above the limit")

#define SMBD_PROTO_ERROR_ENUM(name, text) SMBD_E_##name,
enum smbd_proto_error { SMBD_PROTO_ERRORS(SMBD_PROTO_ERROR_ENUM) SMBD_E_COUNT };
#undef SMBD_PROTO_ERROR_ENUM

/* A short sentence naming the rule, for logs and counters. */
const char *smbd_proto_error_text(enum smbd_proto_error err);
/* The enumerator's name without the prefix, e.g. "DATA_PAST_END". */
const char *smbd_proto_error_name(enum smbd_proto_error err);

#ifdef __cplusplus
}
#endif

#endif /* SMBD_PROTO_ERROR_H */
