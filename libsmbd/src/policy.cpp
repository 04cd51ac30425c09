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
#define SMBD_POLICY_COPY(name) q.name = p.name;
    SMBD_POLICY_U32_FIELDS(SMBD_POLICY_COPY)
    std::copy(p.server_guid.begin(), p.server_guid.end(), q.server_guid);
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
    SMBD_POLICY_U32_FIELDS(SMBD_POLICY_COPY)
#undef SMBD_POLICY_COPY
    std::copy(std::begin(p.server_guid), std::end(p.server_guid),
              q.server_guid.begin());
    q.ciphers.assign(p.ciphers, p.ciphers + p.cipher_count);
    q.signing_algorithms.assign(
        p.signing_algorithms, p.signing_algorithms + p.signing_algorithm_count);
    q.sec_blob.assign(p.sec_blob, p.sec_blob + p.sec_blob_len);
    return q;
}

} // namespace smbd::lib
