// SPDX-License-Identifier: LGPL-3.0-or-later
// Messages a person can act on; see errors.h.
#include "errors.h"

#include <cerrno>

namespace smbd::lib {

namespace {

const char *step_name(Step step)
{
    switch (step) {
    case Step::open:
        return "open the SMB Direct device";
    case Step::info:
        return "query the SMB Direct device";
    case Step::set_policy:
        return "set the SMB Direct policy";
    case Step::listen:
        return "listen for SMB Direct connections";
    case Step::accept:
        return "accept an SMB Direct connection";
    case Step::register_session:
        return "register a session";
    case Step::unregister_session:
        return "unregister a session";
    case Step::disconnect:
        return "disconnect";
    case Step::conn_stats:
        return "read a connection's counters";
    case Step::fetch:
        return "fetch events";
    case Step::send:
        return "send a PDU";
    case Step::pool_size:
        return "size the buffer pool";
    case Step::map_pool:
        return "map the buffer pool";
    case Step::alloc:
        return "allocate pool memory";
    case Step::rdma:
        return "start an RDMA transfer";
    case Step::descs:
        return "check buffer descriptors";
    }
    return "use the SMB Direct device";
}

const char *hint(Step step, int err)
{
    switch (err) {
    case ENOENT:
        if (step == Step::open)
            return "the device node is missing: load the module (modprobe "
                   "smbdirect or insmod smbdirect.ko)";
        if (step == Step::accept)
            return "no such connection is offered: the token is wrong or "
                   "the connection already ended or timed out";
        if (step == Step::unregister_session)
            return "this handle has not registered that session";
        if (step == Step::conn_stats)
            return "this handle owns no such connection, and another "
                   "process's is known only to CAP_NET_ADMIN, or the "
                   "connection ended";
        return "this handle owns no such connection";
    case ENODEV:
    case ENXIO:
        return "the driver is not there any more";
    case EBADFD:
        return "another process opened this handle (this one inherited "
               "it): open the device again here";
    case EACCES:
    case EPERM:
        if (step == Step::set_policy || step == Step::listen)
            return "the master needs CAP_NET_ADMIN";
        if (step == Step::accept)
            return "only the listening master's user may accept";
        if (step == Step::register_session)
            return "only the master's user, or a process with "
                   "CAP_NET_ADMIN, may register sessions";
        return "the device node's permissions do not allow this process";
    case EPROTONOSUPPORT:
        return "this program was built for a newer ABI than the library "
               "or the kernel module offers: update them, or rebuild the "
               "program against the installed headers";
    case EOPNOTSUPP:
        return "the loaded module lacks a feature this program requires: "
               "update smbdirect.ko";
    case EBUSY:
        if (step == Step::listen)
            return "another smbd already listens";
        if (step == Step::set_policy)
            return "another smbd is the master";
        if (step == Step::register_session)
            return "another process registered that session";
        return "the resource is held elsewhere";
    case ENOSPC:
        if (step == Step::register_session)
            return "this handle holds as many sessions as the driver allows "
                   "one handle";
        return nullptr;
    case ENOTCONN:
        return "the connection is ending";
    case EAGAIN:
        if (step == Step::send)
            return "the connection's send queue is full: send the rest "
                   "after its SEND_ROOM event";
        return "too many operations are unfinished: fetch events first";
    case ENOBUFS:
        if (step == Step::rdma)
            return "the response's connection has a full send queue: start "
                   "the transfer again after its SEND_ROOM event";
        return "the pool has no free run of buffers that large now: retry "
               "after a transfer ends";
    case EMSGSIZE:
        return "the request is larger than the device allows";
    case EADDRINUSE:
        if (step == Step::set_policy)
            return "another RDMA server listens on that port, most likely "
                   "ksmbd: stop it (ksmbd.control --shutdown) or move "
                   "smbdirect to other ports (module parameters ib_port and "
                   "iwarp_port)";
        return nullptr;
    case EINVAL:
        if (step == Step::set_policy)
            return "a policy value is outside the limits of struct "
                   "smbd_set_params";
        return "an argument is invalid";
    case EPROTO:
        return "the kernel answered something this library cannot "
               "understand";
    }
    return nullptr;
}

} // namespace

std::string explain(Step step, std::error_code ec, std::string_view detail)
{
    std::string msg = step_name(step);
    if (!detail.empty())
        msg.append(" ").append(detail);
    msg += ": " + ec.message();
    if (const char *h = hint(step, ec.value()))
        msg += std::string(" (") + h + ")";
    return msg;
}

} // namespace smbd::lib
