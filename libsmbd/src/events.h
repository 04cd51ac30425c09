// SPDX-License-Identifier: LGPL-3.0-or-later
// GET_EVENTS records decoded into struct smbd_dev_event: pointers into the
// batch's data area, checked against what the kernel said it filled.
#ifndef LIBSMBD_EVENTS_H
#define LIBSMBD_EVENTS_H

#include <libsmbd.h>

#include <cstdint>
#include <span>
#include <vector>

namespace smbd::lib {

// Reusable storage of one fetch: grows, never shrinks.
struct EventBatch {
    std::vector<smbd_event> raw;
    std::vector<uint8_t> data;
    std::vector<smbd_dev_event> events;
};

// @raw's view over @data (the bytes the kernel filled); false when an
// offset or length points outside them or NEW_CHANNEL's three lengths do
// not add up to the event's data. @max_pdu_size (the kernel's
// out_max_pdu_size) bounds a NEW_CHANNEL's, and stands for it when the
// kernel gives none.
bool decode_event(const smbd_event &raw, std::span<const uint8_t> data,
                  uint32_t max_pdu_size, smbd_dev_event &out);

} // namespace smbd::lib

#endif // LIBSMBD_EVENTS_H
