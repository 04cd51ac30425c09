// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Buffer Descriptor V1 lists: a valid list adds up to what it claims. */
#include <assert.h>
#include <stdint.h>

#include "buffer_desc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct smbd_buffer_desc d;
    uint64_t total, sum = 0;
    uint32_t count, i;

    if (smbd_buffer_desc_validate(data, size, 64, 8 << 20, &count, &total) !=
        SMBD_E_OK)
        return 0;
    assert(count >= 1 && count <= 64 && total <= (8 << 20));
    for (i = 0; i < count; i++) {
        smbd_buffer_desc_get(data, i, &d);
        assert(d.length > 0 && d.offset + d.length > d.offset);
        sum += d.length;
    }
    assert(sum == total);
    return 0;
}
