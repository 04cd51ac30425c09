// SPDX-License-Identifier: LGPL-3.0-or-later
// What a failed call means for the person reading smbd's log: the step, the
// system's words for the errno, and what to do about it where the cause is
// known (module not loaded, missing privilege, ABI mismatch...).
#ifndef LIBSMBD_ERRORS_H
#define LIBSMBD_ERRORS_H

#include <string>
#include <string_view>
#include <system_error>

namespace smbd::lib {

enum class Step {
    open,
    info,
    set_policy,
    listen,
    accept,
    register_session,
    unregister_session,
    disconnect,
    conn_stats,
    fetch,
    send,
    pool_size,
    map_pool,
    alloc,
    rdma,
    descs,
};

// "<step>[ <detail>]: <strerror>[ (<hint>)]"
std::string explain(Step step, std::error_code ec,
                    std::string_view detail = {});

inline std::error_code sys_error(int err)
{
    return {err, std::system_category()};
}

} // namespace smbd::lib

#endif // LIBSMBD_ERRORS_H
