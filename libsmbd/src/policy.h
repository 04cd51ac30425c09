// SPDX-License-Identifier: LGPL-3.0-or-later
// The C API's policy struct and the core's Params, field for field: the
// facade fills the defaults and reads a caller's policy with these, and C++
// users (the test responder) build a policy from Params.
#ifndef LIBSMBD_POLICY_H
#define LIBSMBD_POLICY_H

#include "device.h"

#include <libsmbd.h>

namespace smbd::lib {

// A full-size policy over @p, whose arrays it points into: @p must outlive
// it.
smbd_dev_policy policy_of(const device::Params &p);
// @p's values and copies of its arrays; fields past p.size (a caller built
// against an older, shorter struct) take @defaults' values.
device::Params params_of(const smbd_dev_policy &p,
                         const device::Params &defaults);

} // namespace smbd::lib

#endif // LIBSMBD_POLICY_H
