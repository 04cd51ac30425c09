// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* SMB2 NEGOTIATE request parsing, decision and response building. */
#include <assert.h>
#include <stdint.h>

#include "smb2.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint8_t blob[74] = {0x60};
    static const struct smb2_negotiate_policy policy = {
        .server_guid = "fuzz-server",
        .capabilities = SMB2_GLOBAL_CAP_DFS | SMB2_GLOBAL_CAP_LEASING |
                        SMB2_GLOBAL_CAP_LARGE_MTU |
                        SMB2_GLOBAL_CAP_MULTI_CHANNEL |
                        SMB2_GLOBAL_CAP_ENCRYPTION,
        .security_mode = SMB2_NEGOTIATE_SIGNING_ENABLED,
        .min_dialect = SMB2_DIALECT_202,
        .max_dialect = SMB2_DIALECT_311,
        .max_transact_size = 8 << 20,
        .max_read_size = 8 << 20,
        .max_write_size = 8 << 20,
        .ciphers = {SMB2_ENCRYPTION_AES128_GCM, SMB2_ENCRYPTION_AES128_CCM},
        .cipher_count = 2,
        .signing_algorithms = {SMB2_SIGNING_AES128_GMAC,
                               SMB2_SIGNING_AES128_CMAC},
        .signing_algorithm_count = 2,
        .posix_extensions = true,
        .sec_blob = blob,
        .sec_blob_len = sizeof(blob),
    };
    static const uint8_t salt[SMB2_PREAUTH_SALT_SIZE];
    struct smb2_negotiate_req req;
    struct smb2_negotiated neg;
    struct smb2_hdr hdr;
    uint8_t out[1024];
    size_t len;

    if (smb2_negotiate_req_parse(data, size, &req) != SMBD_E_OK)
        return 0;
    smb2_negotiate_decide(&policy, &req, &neg);
    if (neg.status != NT_STATUS_SUCCESS) {
        assert(smb2_error_resp_build(&req.hdr, neg.status, out, sizeof(out),
                                     &len) == SMBD_E_OK);
        return 0;
    }
    assert(smb2_id_list_has(&req.dialects, neg.dialect));
    assert(smb2_negotiate_resp_build(&policy, &req, &neg, 0, salt, out,
                                     sizeof(out), &len) == SMBD_E_OK);
    assert(len <= sizeof(out));
    /* the response is a well-formed SMB2 header marked as a response */
    assert(smb2_hdr_parse(out, len, &hdr) == SMBD_E_SMB2_NOT_REQUEST);
    return 0;
}
