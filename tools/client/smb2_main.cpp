// smbdirect-smb2: SMB2 conversations with a real server as a Windows
// client holds them (an authenticated, signed session over TCP or SMB
// Direct, RDMA channels, compounds, binding), each a named check that
// prints its steps and ends in one line:
//   SMB2 <check> PASS|FAIL <detail>
// The exit status is 0 when every check passed, 1 when one failed, 2 for
// bad usage.
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "options.h"
#include "smb2_checks.h"

using namespace smbd::client;

namespace {

void usage(FILE *out)
{
    std::fprintf(
        out,
        "usage: smbdirect-smb2 --addr ADDR --user USER --password PASS "
        "--share SHARE [options] CHECK...\n"
        "  --addr ADDR        server address\n"
        "  --tcp              first connection over TCP (default: SMB "
        "Direct)\n"
        "  --tcp-port PORT    (default 445)\n"
        "  --rdma-port PORT   (default: 445 on RoCE, 5445 on iWARP)\n"
        "  --domain DOMAIN    of the user (default: none, a local account)\n"
        "  --dialects LIST    offered, e.g. 0300,0302,0311 (default)\n"
        "  --no-sign          sign only when the server requires it\n"
        "  --size BYTES       per RDMA transfer (default 1048576)\n"
        "  --timeout SECONDS  for each answer (default 10)\n"
        "  --list             the checks\n");
}

} // namespace

int main(int argc, char **argv)
{
    Smb2CheckOptions opt;
    std::vector<std::string> checks;
    for (int i = 1; i < argc; i++) {
        std::string_view a = argv[i];
        bool has_value = i + 1 < argc;
        uint64_t n = 0;
        // the option named, whether or not its value was taken
        auto bad = [name = argv[i]](const char *what) {
            std::fprintf(stderr, "smbdirect-smb2: %s: %s\n", name, what);
            return 2;
        };
        if (a == "--help" || a == "-h") {
            usage(stdout);
            return 0;
        }
        if (a == "--list") {
            for (const Smb2Check &c : smb2_checks())
                std::printf("%-14s %s\n", c.name, c.what);
            return 0;
        }
        if (a == "--tcp") {
            opt.carrier = Carrier::tcp;
            continue;
        }
        if (a == "--no-sign") {
            opt.session.sign = false;
            continue;
        }
        if (a.starts_with("--") && !has_value)
            return bad("needs a value");
        if (a == "--addr")
            opt.addr = argv[++i];
        else if (a == "--user")
            opt.creds.user = argv[++i];
        else if (a == "--password")
            opt.creds.password = argv[++i];
        else if (a == "--domain")
            opt.creds.domain = argv[++i];
        else if (a == "--share")
            opt.share = argv[++i];
        else if (a == "--dialects") {
            if (!parse_dialects(argv[++i], opt.smb2.dialects))
                return bad("not a list of dialects such as 0302,0311");
        }
        else if (a == "--tcp-port" || a == "--rdma-port") {
            if (!parse_u64(argv[++i], 0xFFFF, n) || n == 0)
                return bad("not a port");
            (a == "--tcp-port" ? opt.tcp_port : opt.rdma_port) = uint16_t(n);
        }
        else if (a == "--size") {
            if (!parse_u64(argv[++i], 8u << 20, n) || n == 0)
                return bad("not a size of 1 byte to 8 MiB");
            opt.size = uint32_t(n);
        }
        else if (a == "--timeout") {
            if (!parse_u64(argv[++i], 3600, n) || n == 0)
                return bad("not a number of seconds up to 3600");
            opt.timeout = std::chrono::seconds(n);
        }
        else if (a.starts_with("-"))
            return bad("unknown option");
        else
            checks.emplace_back(a);
    }
    if (opt.addr.empty() || opt.creds.user.empty() || opt.share.empty() ||
        checks.empty()) {
        usage(stderr);
        return 2;
    }
    int failed = 0;
    for (const std::string &name : checks) {
        auto st = run_smb2_check(name, opt, [&](const std::string &s) {
            std::printf("  %s: %s\n", name.c_str(), s.c_str());
            std::fflush(stdout);
        });
        std::printf("SMB2 %s %s%s\n", name.c_str(), st ? "PASS" : "FAIL",
                    st ? "" : (" " + st.error().message).c_str());
        std::fflush(stdout);
        failed += !st;
    }
    return failed ? 1 : 0;
}
