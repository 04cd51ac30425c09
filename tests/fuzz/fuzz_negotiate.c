// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* MS-SMBD Negotiate Request/Response parsers on arbitrary bytes. */
#include <assert.h>
#include <stdint.h>

#include "negotiate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const struct smbd_local_params local = {
        .receive_credit_max = 255,
        .send_credit_target = 255,
        .max_send_size = 1364,
        .max_receive_size = 1364,
        .max_fragmented_size = 1048576,
        .max_read_write_size = 8 << 20,
    };
    struct smbd_negotiate_req req;
    struct smbd_negotiate_resp resp, again;
    struct smbd_conn_params conn;
    uint8_t out[SMBD_NEGOTIATE_RESP_SIZE];

    if (smbd_negotiate_req_parse(data, size, &req) == SMBD_E_OK) {
        smbd_negotiate_server_params(&local, &req, &conn);
        /* what the server agrees to must respect both sides */
        assert(conn.max_send_size <= req.max_receive_size);
        assert(conn.max_receive_size <= local.max_receive_size);
        assert(conn.max_receive_size >= SMBD_MIN_RECEIVE_SIZE);
        assert(conn.receive_credit_target >= 1);
        smbd_negotiate_resp_success(&conn, 1, &resp);
        smbd_negotiate_resp_build(&resp, out);
        assert(smbd_negotiate_resp_parse(out, sizeof(out), &again) ==
               SMBD_E_OK);
    }
    if (smbd_negotiate_resp_parse(data, size, &resp) == SMBD_E_OK &&
        smbd_negotiate_client_params(&local, &resp, &conn) == SMBD_E_OK)
        assert(conn.max_send_size <= resp.max_receive_size);
    return 0;
}
