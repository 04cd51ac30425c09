// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#include "proto_error.h"

#define SMBD_PROTO_ERROR_TEXT(name, text) text,
#define SMBD_PROTO_ERROR_NAME(name, text) #name,

static const char *const smbd_error_texts[] = {
	SMBD_PROTO_ERRORS(SMBD_PROTO_ERROR_TEXT)
};

static const char *const smbd_error_names[] = {
	SMBD_PROTO_ERRORS(SMBD_PROTO_ERROR_NAME)
};

const char *smbd_proto_error_text(enum smbd_proto_error err)
{
	if ((unsigned int)err >= SMBD_E_COUNT)
		return "unknown error";
	return smbd_error_texts[err];
}

const char *smbd_proto_error_name(enum smbd_proto_error err)
{
	if ((unsigned int)err >= SMBD_E_COUNT)
		return "UNKNOWN";
	return smbd_error_names[err];
}
