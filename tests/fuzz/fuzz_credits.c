// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The credit state machine driven by arbitrary operation sequences: posts
 * of what it asks for, received messages with any CreditsGranted and
 * CreditsRequested, sends, grants. After every step its invariants hold:
 * nothing is granted that is not posted, nothing is posted beyond
 * ReceiveCreditMax, the send window stays within 16 bits, and the last
 * send credit is never spent on a message that grants nothing.
 */
#include <assert.h>
#include <stdint.h>

#include "credits.h"

static uint16_t take16(const uint8_t **data, size_t *size)
{
    uint16_t v = 0;

    if (*size >= 2) {
        v = smbd_get_le16(*data);
        *data += 2;
        *size -= 2;
    }
    return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct smbd_conn_params p = {0};
    struct smbd_credits c;

    p.receive_credit_max = take16(&data, &size) % 512 + 1;
    p.receive_credit_target = take16(&data, &size);
    p.send_credit_target = take16(&data, &size);
    smbd_credits_init(&c, &p, take16(&data, &size));
    while (size) {
        uint8_t op = *data++;
        uint32_t before = c.send_credits;
        struct smbd_data_hdr hdr = {0};
        uint16_t grant;

        size--;
        switch (op % 5) {
        case 0:
            smbd_credits_posted(&c, smbd_credits_to_post(&c));
            break;
        case 1:
            hdr.credits_granted = take16(&data, &size);
            hdr.credits_requested = take16(&data, &size);
            if (smbd_credits_received(&c, &hdr) == SMBD_E_OK)
                assert(c.send_credits == before + hdr.credits_granted);
            else
                assert(c.send_credits == before);
            break;
        case 2:
            if (smbd_credits_send(&c, &grant) == SMBD_SEND_OK) {
                assert(before >= 1);
                assert(before > 1 || grant > 0);
                assert(c.send_credits == before - 1);
            }
            else {
                assert(c.send_credits == before && grant == 0);
            }
            break;
        case 3:
            smbd_credits_take_grant(&c);
            break;
        case 4:
            (void)smbd_credits_grant_due(&c);
            break;
        }
        assert(c.recv_granted <= c.recv_posted);
        assert(c.recv_posted <= c.recv_credit_max);
        assert(c.recv_credit_target >= 1 &&
               c.recv_credit_target <= c.recv_credit_max);
        assert(c.send_credits <= SMBD_MAX_SEND_CREDITS);
    }
    return 0;
}
