// SPDX-License-Identifier: LGPL-3.0-or-later
// Decoding GET_EVENTS records; see events.h.
#include "events.h"

#include <algorithm>

namespace smbd::lib {

bool decode_event(const smbd_event &raw, std::span<const uint8_t> data,
                  uint32_t max_pdu_size, smbd_dev_event &out)
{
    out = {};
    out.type = raw.type;
    out.flags = raw.flags;
    out.conn_id = raw.conn_id;
    out.user_data = raw.user_data;
    out.status = raw.status;
    if (raw.data_offset > data.size() ||
        raw.data_len > data.size() - raw.data_offset)
        return false;
    if (raw.data_len) {
        out.data = data.data() + raw.data_offset;
        out.data_len = raw.data_len;
    }
    switch (raw.type) {
    case SMBD_EVENT_NEW_CONNECTION: {
        const auto &c = raw.u.new_connection;
        out.token = c.token;
        out.client_guid = c.client_guid;
        out.local = &c.local;
        out.remote = &c.remote;
        break;
    }
    case SMBD_EVENT_NEW_CHANNEL: {
        const auto &c = raw.u.new_channel;
        if (uint64_t{c.negotiate_req_len} + c.negotiate_resp_len +
                c.session_setup_len !=
            raw.data_len)
            return false;
        out.session_id = c.session_id;
        out.dialect = c.dialect;
        out.local = &c.local;
        out.remote = &c.remote;
        out.negotiate_req = out.data;
        out.negotiate_req_len = c.negotiate_req_len;
        out.negotiate_resp = out.data + c.negotiate_req_len;
        out.negotiate_resp_len = c.negotiate_resp_len;
        out.session_setup = out.negotiate_resp + c.negotiate_resp_len;
        out.session_setup_len = c.session_setup_len;
        out.max_pdu_size = c.max_pdu_size
                               ? std::min(c.max_pdu_size, max_pdu_size)
                               : max_pdu_size;
        break;
    }
    case SMBD_EVENT_DISCONNECTED:
        out.reason = raw.u.disconnected.reason;
        break;
    case SMBD_EVENT_RDMA_DONE:
        out.count = raw.u.rdma_done.bytes;
        break;
    case SMBD_EVENT_OVERFLOW:
        out.count = raw.u.overflow.lost;
        break;
    }
    return true;
}

} // namespace smbd::lib
