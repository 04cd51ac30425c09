// The smbdirect-client command line, parsed into one struct without
// printing or exiting, so that main() only dispatches and the parsing is
// unit-tested (tests/unit/client_options_test.cpp).
#ifndef SMBD_CLIENT_OPTIONS_H
#define SMBD_CLIENT_OPTIONS_H

#include <string>
#include <string_view>
#include <variant>

#include "fuzz.h"
#include "run.h"

namespace smbd::client {

struct CliOptions {
    enum class Action { run, fuzz, help, list_hostile };
    Action action = Action::run;
    RunOptions run;
    FuzzOptions fuzz; // its address, port, timeout and file size: run's
    bool quiet = false;
    bool json = false;
};

// A command line refused (exit status 2): @message for stderr, if any,
// then the usage if @usage.
struct CliError {
    std::string message;
    bool usage = false;
};

// A number up to @max (decimal or 0x...), nothing else; false when not.
bool parse_u64(const char *s, uint64_t max, uint64_t &out);
// A comma-separated list of dialects ("0302,3.1.1"), at least one.
bool parse_dialects(std::string_view list, std::vector<uint16_t> &out);

// --help and --list-hostile end the parsing where they stand.
std::variant<CliOptions, CliError> parse_args(int argc,
                                              const char *const *argv);

} // namespace smbd::client

#endif // SMBD_CLIENT_OPTIONS_H
