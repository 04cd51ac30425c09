// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* SMB2 SESSION_SETUP parsing: the security buffer stays inside the input. */
#include <assert.h>
#include <stdint.h>

#include "smb2.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct smb2_session_setup_req req;
    volatile uint8_t sink = 0;
    uint16_t i;

    if (smb2_session_setup_parse(data, size, &req) != SMBD_E_OK)
        return 0;
    assert(req.sec_buf >= data);
    assert(req.sec_buf + req.sec_buf_len <= data + size);
    for (i = 0; i < req.sec_buf_len; i++)
        sink ^= req.sec_buf[i];
    (void)sink;
    return 0;
}
