// smbdirect-responder: the smbd side of SMB Direct tests on /dev/smbd.
#include "responder.h"

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <getopt.h>
#include <string>

namespace {

smbd::responder::Responder *running;

void on_signal(int)
{
    if (running)
        running->stop();
}

[[noreturn]] void usage(int rc)
{
    std::fprintf(
        rc ? stderr : stdout,
        "usage: smbdirect-responder [options]\n"
        "Answers on /dev/smbd as patched smbd would: SET_PARAMS, LISTEN, a "
        "forked\n"
        "child per new connection that answers the SESSION_SETUP, serves SMB2 "
        "READ\n"
        "and WRITE (RDMA or inline) on an in-memory file of --file-size bytes "
        "that\n"
        "every FileId names, and echoes every other PDU back as a response. "
        "Stops\n"
        "on SIGTERM/SIGINT.\n"
        "  --keepalive-interval MS   --keepalive-timeout MS\n"
        "  --negotiate-timeout MS    --setup-timeout MS\n"
        "  --credit-timeout MS       --accept-timeout MS\n"
        "  --receive-credits N       --send-credits N\n"
        "  --max-send-size N         --max-receive-size N\n"
        "  --max-fragmented-size N   --max-read-write-size N\n"
        "  --dialects MIN-MAX        e.g. 0x0300-0x0311\n"
        "  --register ID             register SessionId ID from the master "
        "(flow 1)\n"
        "  --no-listen               do not LISTEN (no new sessions)\n"
        "  --no-fork                 serve accepted connections in this "
        "process\n"
        "  --connections N           exit after N connections ended\n"
        "  --file-size BYTES         the file READ/WRITE work on (default 64 "
        "MiB)\n"
        "  --no-io-log               no log line per READ/WRITE (benchmarks)\n"
        "  --tevent                  run on a tevent loop through "
        "libsmbd-tevent,\n"
        "                            as smbd does\n"
        "  --no-rw-reply             send a READ's response after its "
        "RDMA_DONE,\n"
        "                            not with its RDMA WRITE\n");
    std::exit(rc);
}

uint32_t number(const char *opt, const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = std::strtoull(s, &end, 0);
    if (errno || end == s || *end || v > UINT32_MAX) {
        std::fprintf(stderr, "--%s: not a 32-bit number: %s\n", opt, s);
        usage(2);
    }
    return static_cast<uint32_t>(v);
}

uint64_t session_id(const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = std::strtoull(s, &end, 0);
    if (errno || end == s || *end || v == 0) {
        std::fprintf(stderr, "--register: not a non-zero SessionId: %s\n", s);
        usage(2);
    }
    return v;
}

} // namespace

int main(int argc, char **argv)
{
    enum {
        o_keepalive_interval = 256,
        o_keepalive_timeout,
        o_negotiate_timeout,
        o_setup_timeout,
        o_credit_timeout,
        o_accept_timeout,
        o_receive_credits,
        o_send_credits,
        o_max_send,
        o_max_receive,
        o_max_fragmented,
        o_max_rw,
        o_dialects,
        o_register,
        o_no_listen,
        o_no_fork,
        o_connections,
        o_file_size,
        o_no_io_log,
        o_tevent,
        o_no_rw_reply,
        o_help,
    };
    static const option longopts[] = {
        {"keepalive-interval", required_argument, nullptr,
         o_keepalive_interval},
        {"keepalive-timeout", required_argument, nullptr, o_keepalive_timeout},
        {"negotiate-timeout", required_argument, nullptr, o_negotiate_timeout},
        {"setup-timeout", required_argument, nullptr, o_setup_timeout},
        {"credit-timeout", required_argument, nullptr, o_credit_timeout},
        {"accept-timeout", required_argument, nullptr, o_accept_timeout},
        {"receive-credits", required_argument, nullptr, o_receive_credits},
        {"send-credits", required_argument, nullptr, o_send_credits},
        {"max-send-size", required_argument, nullptr, o_max_send},
        {"max-receive-size", required_argument, nullptr, o_max_receive},
        {"max-fragmented-size", required_argument, nullptr, o_max_fragmented},
        {"max-read-write-size", required_argument, nullptr, o_max_rw},
        {"dialects", required_argument, nullptr, o_dialects},
        {"register", required_argument, nullptr, o_register},
        {"no-listen", no_argument, nullptr, o_no_listen},
        {"no-fork", no_argument, nullptr, o_no_fork},
        {"connections", required_argument, nullptr, o_connections},
        {"file-size", required_argument, nullptr, o_file_size},
        {"no-io-log", no_argument, nullptr, o_no_io_log},
        {"tevent", no_argument, nullptr, o_tevent},
        {"no-rw-reply", no_argument, nullptr, o_no_rw_reply},
        {"help", no_argument, nullptr, o_help},
        {},
    };
    smbd::responder::Options opts;
    smbd::device::Params &p = opts.params;
    int c, index = 0;
    while ((c = getopt_long(argc, argv, "", longopts, &index)) != -1) {
        const char *opt = longopts[index].name;
        switch (c) {
        case o_keepalive_interval:
            p.keepalive_interval_ms = number(opt, optarg);
            break;
        case o_keepalive_timeout:
            p.keepalive_timeout_ms = number(opt, optarg);
            break;
        case o_negotiate_timeout:
            p.negotiate_timeout_ms = number(opt, optarg);
            break;
        case o_setup_timeout:
            p.setup_timeout_ms = number(opt, optarg);
            break;
        case o_credit_timeout:
            p.credit_timeout_ms = number(opt, optarg);
            break;
        case o_accept_timeout:
            p.accept_timeout_ms = number(opt, optarg);
            break;
        case o_receive_credits:
            p.receive_credit_max = number(opt, optarg);
            break;
        case o_send_credits:
            p.send_credit_target = number(opt, optarg);
            break;
        case o_max_send:
            p.max_send_size = number(opt, optarg);
            break;
        case o_max_receive:
            p.max_receive_size = number(opt, optarg);
            break;
        case o_max_fragmented:
            p.max_fragmented_size = number(opt, optarg);
            break;
        case o_max_rw:
            p.max_read_write_size = number(opt, optarg);
            break;
        case o_dialects: {
            const char *dash = std::strchr(optarg, '-');
            if (!dash)
                usage(2);
            std::string min(optarg, static_cast<size_t>(dash - optarg));
            p.min_dialect = number(opt, min.c_str());
            p.max_dialect = number(opt, dash + 1);
            break;
        }
        case o_register:
            opts.register_sessions.push_back(session_id(optarg));
            break;
        case o_no_listen:
            opts.listen = false;
            break;
        case o_no_fork:
            opts.fork = false;
            break;
        case o_tevent:
            opts.tevent = true;
            break;
        case o_no_rw_reply:
            opts.rw_reply = false;
            break;
        case o_connections:
            opts.connections = number(opt, optarg);
            break;
        case o_file_size:
            opts.file_size = number(opt, optarg);
            break;
        case o_no_io_log:
            opts.log_io = false;
            break;
        case o_help:
            usage(0);
        default:
            usage(2);
        }
    }
    if (optind != argc)
        usage(2);

    smbd::responder::Responder responder(opts);
    running = &responder;
    struct sigaction sa = {};
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGINT, &sa, nullptr);

    int err = responder.start();
    if (!err)
        err = responder.run();
    responder.print_summary();
    running = nullptr;
    if (err)
        std::fprintf(stderr, "smbdirect-responder: %s\n", std::strerror(err));
    return err ? 1 : 0;
}
