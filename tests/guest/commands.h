// Every command the module offers, each with a request that passes its
// validation and the result that request gets on a fresh file. The generic
// ABI rules (size, flags, reserved) are checked against this table.
#ifndef SMBD_TESTS_GUEST_COMMANDS_H
#define SMBD_TESTS_GUEST_COMMANDS_H

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <vector>

#include "guest.h"

namespace guest {

struct Command {
    const char *name;
    unsigned long cmd;
    // the struct, valid, in a buffer with `extra` zero bytes after it
    std::function<Request(size_t extra)> request;
    std::vector<size_t> reserved; // offsets of __u32 reserved fields
    int baseline;                 // errno of the valid request
    uint32_t first_size = 0;      // the first version's size, if it grew
};

const std::vector<Command> &offered_commands();

inline void PrintTo(const Command &c, std::ostream *os) { *os << c.name; }

} // namespace guest

#endif // SMBD_TESTS_GUEST_COMMANDS_H
