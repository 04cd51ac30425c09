// SPDX-License-Identifier: LGPL-3.0-or-later
// Policy struct <-> Params; see policy.h.
#include "policy.h"

#include <algorithm>
#include <cstring>
#include <iterator>

namespace smbd::lib {

smbd_dev_policy policy_of(const device::Params &p)
{
    smbd_dev_policy q{};
    q.size = sizeof(q);
    q.receive_credit_max = p.receive_credit_max;
    q.send_credit_target = p.send_credit_target;
    q.max_send_size = p.max_send_size;
    q.max_receive_size = p.max_receive_size;
    q.max_fragmented_size = p.max_fragmented_size;
    q.max_read_write_size = p.max_read_write_size;
    q.keepalive_interval_ms = p.keepalive_interval_ms;
    q.keepalive_timeout_ms = p.keepalive_timeout_ms;
    q.negotiate_timeout_ms = p.negotiate_timeout_ms;
    q.setup_timeout_ms = p.setup_timeout_ms;
    q.credit_timeout_ms = p.credit_timeout_ms;
    q.accept_timeout_ms = p.accept_timeout_ms;
    std::copy(p.server_guid.begin(), p.server_guid.end(), q.server_guid);
    q.capabilities = p.capabilities;
    q.security_mode = p.security_mode;
    q.min_dialect = p.min_dialect;
    q.max_dialect = p.max_dialect;
    q.max_transact_size = p.max_transact_size;
    q.max_read_size = p.max_read_size;
    q.max_write_size = p.max_write_size;
    q.policy_flags = p.policy_flags;
    q.ciphers = p.ciphers.data();
    q.cipher_count = p.ciphers.size();
    q.signing_algorithms = p.signing_algorithms.data();
    q.signing_algorithm_count = p.signing_algorithms.size();
    q.sec_blob = p.sec_blob.empty() ? nullptr : p.sec_blob.data();
    q.sec_blob_len = p.sec_blob.size();
    return q;
}

device::Params params_of(const smbd_dev_policy &given,
                         const device::Params &defaults)
{
    smbd_dev_policy p = policy_of(defaults);
    std::memcpy(&p, &given, std::min<size_t>(given.size, sizeof(p)));
    device::Params q{};
    q.receive_credit_max = p.receive_credit_max;
    q.send_credit_target = p.send_credit_target;
    q.max_send_size = p.max_send_size;
    q.max_receive_size = p.max_receive_size;
    q.max_fragmented_size = p.max_fragmented_size;
    q.max_read_write_size = p.max_read_write_size;
    q.keepalive_interval_ms = p.keepalive_interval_ms;
    q.keepalive_timeout_ms = p.keepalive_timeout_ms;
    q.negotiate_timeout_ms = p.negotiate_timeout_ms;
    q.setup_timeout_ms = p.setup_timeout_ms;
    q.credit_timeout_ms = p.credit_timeout_ms;
    q.accept_timeout_ms = p.accept_timeout_ms;
    std::copy(std::begin(p.server_guid), std::end(p.server_guid),
              q.server_guid.begin());
    q.capabilities = p.capabilities;
    q.security_mode = p.security_mode;
    q.min_dialect = p.min_dialect;
    q.max_dialect = p.max_dialect;
    q.max_transact_size = p.max_transact_size;
    q.max_read_size = p.max_read_size;
    q.max_write_size = p.max_write_size;
    q.policy_flags = p.policy_flags;
    q.ciphers.assign(p.ciphers, p.ciphers + p.cipher_count);
    q.signing_algorithms.assign(
        p.signing_algorithms, p.signing_algorithms + p.signing_algorithm_count);
    q.sec_blob.assign(p.sec_blob, p.sec_blob + p.sec_blob_len);
    return q;
}

} // namespace smbd::lib
