// The smbdirect-client command line; see options.h.
#include "options.h"

#include <cerrno>
#include <cstdlib>
#include <string_view>

namespace smbd::client {

bool parse_u64(const char *s, uint64_t max, uint64_t &out)
{
    char *end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(s, &end, 0);
    if (errno || end == s || *end || v > max || s[0] == '-')
        return false;
    out = v;
    return true;
}

bool parse_dialects(std::string_view list, std::vector<uint16_t> &out)
{
    out.clear();
    while (!list.empty()) {
        size_t comma = list.find(',');
        auto d = parse_dialect(list.substr(0, comma));
        if (!d)
            return false;
        out.push_back(*d);
        list = comma == list.npos ? std::string_view() : list.substr(comma + 1);
    }
    return !out.empty();
}

namespace {

CliError refused(const std::string &what)
{
    return {"smbdirect-client: " + what, false};
}

} // namespace

std::variant<CliOptions, CliError> parse_args(int argc, const char *const *argv)
{
    CliOptions o;
    RunOptions &opt = o.run;
    FuzzOptions &fuzz = o.fuzz;
    // argc is 0 and argv[0] NULL when run with an empty argv: the replay
    // commands then keep the default name
    if (argc > 0 && argv[0])
        fuzz.program = argv[0];
    bool have_addr = false;
    CliError error;
    for (int i = 1; i < argc; i++) {
        std::string_view a = argv[i];
        // the option's value, or nullptr with @error set
        auto value = [&]() -> const char * {
            if (i + 1 >= argc) {
                error = refused(std::string(argv[i]) + " needs a value");
                return nullptr;
            }
            return argv[++i];
        };
        auto number = [&](uint64_t max, uint64_t &n) {
            const char *name = argv[i];
            const char *v = value();
            if (!v)
                return false;
            if (!parse_u64(v, max, n)) {
                error =
                    refused(std::string(name) + ": '" + v +
                            "' is not a number up to " + std::to_string(max));
                return false;
            }
            return true;
        };
        uint64_t n = 0;
        if (a == "--help" || a == "-h") {
            o.action = CliOptions::Action::help;
            return o;
        }
        else if (a == "--list-hostile") {
            o.action = CliOptions::Action::list_hostile;
            return o;
        }
        else if (a == "--addr") {
            const char *v = value();
            if (!v)
                return error;
            opt.addr = v;
            have_addr = true;
        }
        else if (a == "--port") {
            if (!number(65535, n))
                return error;
            opt.port = uint16_t(n);
        }
        else if (a == "--source") {
            const char *v = value();
            if (!v)
                return error;
            opt.connect.source = v;
        }
        else if (a == "--dialects") {
            const char *v = value();
            if (!v)
                return error;
            if (!parse_dialects(v, opt.smb2.dialects))
                return refused(std::string("--dialects: '") + v +
                               "' is not a list like 0300,0302,0311");
        }
        else if (a == "--new") {
            opt.bind = false;
        }
        else if (a == "--bind") {
            if (!number(UINT64_MAX, n))
                return error;
            opt.bind = true;
            opt.bind_session = n;
        }
        else if (a == "--expect-status") {
            if (!number(UINT32_MAX, n))
                return error;
            opt.expect_status = uint32_t(n);
        }
        else if (a == "--pdus") {
            if (!number(UINT32_MAX, n))
                return error;
            opt.pdus = uint32_t(n);
        }
        else if (a == "--size") {
            if (!number(UINT32_MAX, n))
                return error;
            opt.size = uint32_t(n);
        }
        else if (a == "--posix") {
            opt.smb2.posix = true;
        }
        else if (a == "--hostile") {
            const char *v = value();
            if (!v)
                return error;
            auto h = parse_hostile(v);
            if (!h)
                return refused(std::string("unknown hostile mode '") + v +
                               "'; --list-hostile shows them");
            opt.hostile = *h;
        }
        else if (a == "--wait") {
            if (!number(86400, n))
                return error;
            opt.wait = std::chrono::seconds(n);
        }
        else if (a == "--timeout") {
            if (!number(86400, n))
                return error;
            opt.connect.timeout = std::chrono::seconds(n);
        }
        else if (a == "--receive-credits") {
            if (!number(65535, n))
                return error;
            opt.connect.receive_credit_max = uint16_t(n);
        }
        else if (a == "--send-credits") {
            if (!number(65535, n))
                return error;
            opt.connect.send_credit_target = uint16_t(n);
        }
        else if (a == "--send-size") {
            if (!number(1u << 20, n))
                return error;
            opt.connect.preferred_send_size = uint32_t(n);
        }
        else if (a == "--receive-size") {
            if (!number(1u << 20, n))
                return error;
            opt.connect.max_receive_size = uint32_t(n);
        }
        else if (a == "--fragmented-size") {
            if (!number(UINT32_MAX, n))
                return error;
            opt.connect.max_fragmented_size = uint32_t(n);
        }
        else if (a == "--write-read") {
            opt.io = IoMode::write_read;
            if (!number(UINT32_MAX, n))
                return error;
            opt.write_read.size = uint32_t(n);
        }
        else if (a == "--io-count") {
            if (!number(UINT32_MAX, n))
                return error;
            opt.write_read.rounds = uint32_t(n);
        }
        else if (a == "--offset") {
            if (!number(UINT64_MAX, n))
                return error;
            opt.write_read.offset = n;
        }
        else if (a == "--bench") {
            const char *v = value();
            if (!v)
                return error;
            std::string_view s = v;
            if (s != "read" && s != "write")
                return refused("--bench read or --bench write");
            opt.io = IoMode::bench;
            opt.bench.write = s == "write";
        }
        else if (a == "--depth") {
            if (!number(4096, n))
                return error;
            opt.bench.depth = uint32_t(n);
        }
        else if (a == "--seconds") {
            const char *v = value();
            if (!v)
                return error;
            char *end = nullptr;
            double s = std::strtod(v, &end);
            if (end == v || *end || !(s > 0) || s > 86400)
                return refused(std::string("--seconds: '") + v +
                               "' is not a duration in seconds");
            opt.bench.duration = std::chrono::milliseconds(int64_t(s * 1000));
        }
        else if (a == "--channel") {
            const char *v = value();
            if (!v)
                return error;
            std::string_view s = v;
            if (s == "rdma")
                opt.channel = smb2rw::CHANNEL_RDMA_V1;
            else if (s == "rdma-invalidate")
                opt.channel = smb2rw::CHANNEL_RDMA_V1_INVALIDATE;
            else
                return refused("--channel rdma or --channel rdma-invalidate");
        }
        else if (a == "--descriptors") {
            if (!number(4095, n))
                return error;
            opt.descriptors = uint32_t(n);
        }
        else if (a == "--descriptor-extra") {
            if (!number(UINT32_MAX, n))
                return error;
            opt.descriptor_extra = uint32_t(n);
        }
        else if (a == "--file-size") {
            if (!number(UINT64_MAX, n))
                return error;
            opt.file.size = n;
        }
        else if (a == "--fuzz") {
            o.action = CliOptions::Action::fuzz;
            if (!number(UINT64_MAX, n))
                return error;
            fuzz.seed = n;
        }
        else if (a == "--conversations") {
            if (!number(UINT64_MAX, n))
                return error;
            fuzz.conversations = n;
        }
        else if (a == "--first") {
            if (!number(UINT64_MAX, n))
                return error;
            fuzz.first = n;
        }
        else if (a == "--fuzz-stage") {
            const char *v = value();
            if (!v)
                return error;
            fuzz.stage = parse_fuzz_stage(v);
            if (!fuzz.stage)
                return refused(std::string("unknown fuzz stage '") + v + "'");
        }
        else if (a == "--fuzz-wait") {
            if (!number(60000, n))
                return error;
            fuzz.wait = std::chrono::milliseconds(n);
        }
        else if (a == "--quiet") {
            o.quiet = true;
        }
        else if (a == "--json") {
            o.json = true;
        }
        else {
            return CliError{"smbdirect-client: unknown option '" +
                                std::string(a) + "'",
                            true};
        }
    }
    if (!have_addr)
        return CliError{"", true};
    if (o.action == CliOptions::Action::fuzz) {
        fuzz.addr = opt.addr;
        fuzz.port = opt.port;
        fuzz.timeout = opt.connect.timeout;
        fuzz.file.size = opt.file.size;
    }
    else if (opt.io == IoMode::bench) {
        // the size of a benchmark transfer, not of an echoed PDU
        opt.bench.size = opt.size;
        if (opt.bench.size == 0 || opt.bench.depth == 0)
            return refused("--bench needs --size and --depth of at least 1");
    }
    return o;
}

} // namespace smbd::client
