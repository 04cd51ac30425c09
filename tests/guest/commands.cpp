// The table of offered commands; see commands.h.
#include "commands.h"

#include <cerrno>
#include <cstddef>

namespace guest {

namespace {

// A connection id and a session id no test ever creates.
constexpr uint64_t kUnknownConn = 1ull << 40;
constexpr uint64_t kSession = 0x5eed000000000001ull;

// Pointees of the requests: they must outlive every ioctl of the run.
const smbd::device::Params params = smbd::device::default_params();
smbd_event events[1];
uint8_t event_data[4096];
const uint8_t pdu[64] = {0xfe, 'S', 'M', 'B', 64};
smbd_iovec iov = {reinterpret_cast<uintptr_t>(pdu), sizeof(pdu)};
smbd_send_entry entry = {
    kUnknownConn, 0, reinterpret_cast<uintptr_t>(&iov), 1, 0, 0, 0};

template <typename T> T sized()
{
    T s{};
    s.size = sizeof(T);
    return s;
}

Request get_info(size_t extra) { return Request(sized<smbd_info>(), extra); }

Request set_params(size_t extra) { return Request(params.to_uapi(), extra); }

Request listen(size_t extra) { return Request(sized<smbd_listen>(), extra); }

Request accept(size_t extra)
{
    auto a = sized<smbd_accept>();
    for (size_t i = 0; i < sizeof(a.token); i++)
        a.token[i] = static_cast<uint8_t>(0xa5 ^ i);
    return Request(a, extra);
}

Request session(size_t extra)
{
    auto s = sized<smbd_session>();
    s.session_id = kSession;
    return Request(s, extra);
}

Request get_mem_params(size_t extra)
{
    return Request(sized<smbd_mem_params>(), extra);
}

Request get_events(size_t extra)
{
    auto g = sized<smbd_get_events>();
    g.max_events = 1;
    g.event_size = sizeof(smbd_event);
    g.events_ptr = reinterpret_cast<uintptr_t>(events);
    g.data_ptr = reinterpret_cast<uintptr_t>(event_data);
    g.data_len = sizeof(event_data);
    return Request(g, extra);
}

Request send_pdu(size_t extra)
{
    auto s = sized<smbd_send_pdu>();
    s.count = 1;
    s.entry_size = sizeof(smbd_send_entry);
    s.entries_ptr = reinterpret_cast<uintptr_t>(&entry);
    return Request(s, extra);
}

Request disconnect(size_t extra)
{
    auto d = sized<smbd_disconnect>();
    d.conn_id = kUnknownConn;
    return Request(d, extra);
}

// an id in the driver's range, so the lookup runs (as root, among every
// file's connections)
Request conn_stats(size_t extra)
{
    auto s = sized<smbd_conn_stats>();
    s.conn_id = UINT32_MAX;
    return Request(s, extra);
}

} // namespace

const std::vector<Command> &offered_commands()
{
    static const std::vector<Command> commands = {
        {"GET_INFO",
         SMBD_IOC_GET_INFO,
         get_info,
         {},
         0,
         offsetof(smbd_info, out_ib_port)},
        {"SET_PARAMS",
         SMBD_IOC_SET_PARAMS,
         set_params,
         {offsetof(smbd_set_params, __reserved),
          offsetof(smbd_set_params, out_busy_port),
          offsetof(smbd_set_params, __reserved2)},
         0,
         offsetof(smbd_set_params, setup_timeout_ms)},
        {"LISTEN", SMBD_IOC_LISTEN, listen, {}, 0},
        {"ACCEPT", SMBD_IOC_ACCEPT, accept, {}, ENOENT},
        {"REGISTER_SESSION", SMBD_IOC_REGISTER_SESSION, session, {}, 0},
        {"UNREGISTER_SESSION",
         SMBD_IOC_UNREGISTER_SESSION,
         session,
         {},
         ENOENT},
        {"GET_MEM_PARAMS",
         SMBD_IOC_GET_MEM_PARAMS,
         get_mem_params,
         {offsetof(smbd_mem_params, __reserved)},
         0,
         offsetof(smbd_mem_params, buffer_count)},
        {"GET_EVENTS",
         SMBD_IOC_GET_EVENTS,
         get_events,
         {offsetof(smbd_get_events, __reserved)},
         EAGAIN},
        {"SEND_PDU",
         SMBD_IOC_SEND_PDU,
         send_pdu,
         {offsetof(smbd_send_pdu, __reserved)},
         ENOENT},
        {"DISCONNECT", SMBD_IOC_DISCONNECT, disconnect, {}, ENOENT},
        {"CONN_STATS", SMBD_IOC_CONN_STATS, conn_stats, {}, ENOENT},
    };
    return commands;
}

} // namespace guest
