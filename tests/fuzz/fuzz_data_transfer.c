// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * A sequence of Data Transfer messages (each prefixed by a 2-byte length)
 * through validation and reassembly into a buffer of exactly the announced
 * size: ASan catches any write the checks let through.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>

#include "data_transfer.h"

#define MAX_RECEIVE 1364
#define MAX_FRAGMENTED 131072

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct smbd_reassembly r;
    uint8_t *pdu = NULL;
    size_t pdu_size = 0;

    smbd_reassembly_init(&r, MAX_FRAGMENTED);
    while (size >= 2) {
        size_t len = smbd_get_le16(data);
        struct smbd_data_hdr hdr;
        uint32_t offset, total;
        bool complete;

        data += 2;
        size -= 2;
        if (len > size)
            len = size;
        if (smbd_data_parse(data, len, MAX_RECEIVE, MAX_FRAGMENTED, &hdr) !=
                SMBD_E_OK ||
            smbd_reassembly_add(&r, &hdr, &offset, &total, &complete) !=
                SMBD_E_OK)
            break;
        if (hdr.data_length) {
            assert(hdr.data_offset + hdr.data_length <= len);
            if (!pdu || pdu_size != total) {
                free(pdu);
                pdu = malloc(total);
                pdu_size = total;
            }
            memcpy(pdu + offset, data + hdr.data_offset, hdr.data_length);
        }
        if (complete) {
            free(pdu);
            pdu = NULL;
        }
        data += len;
        size -= len;
    }
    free(pdu);
    return 0;
}
