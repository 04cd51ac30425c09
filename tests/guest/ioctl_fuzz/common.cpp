// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
// The fuzzer's random streams, names and errno sets.
#include "fuzz.h"

#include <cerrno>
#include <cstring>

namespace fuzz {

namespace {

uint64_t splitmix64(uint64_t &x)
{
    uint64_t z = (x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

} // namespace

Rng::Rng(uint64_t seed)
{
    for (auto &s : s_)
        s = splitmix64(seed);
}

uint64_t Rng::next()
{
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
}

uint64_t derive_seed(uint64_t seed, uint64_t process, uint64_t thread)
{
    uint64_t x = seed;
    uint64_t a = splitmix64(x) ^ (process + 1) * 0xd1b54a32d192ed03ull;
    uint64_t b = splitmix64(a) ^ (thread + 1) * 0xaef17502108ef2d9ull;
    return splitmix64(b);
}

const char *op_name(unsigned op)
{
    static const char *const names[OP_COUNT] = {
        "GET_INFO",
        "SET_PARAMS",
        "LISTEN",
        "ACCEPT",
        "REGISTER_SESSION",
        "UNREGISTER_SESSION",
        "GET_MEM_PARAMS",
        "GET_EVENTS",
        "SEND_PDU",
        "RDMA_RW",
        "DISCONNECT",
        "CONN_STATS",
        "IOCTL_RANDOM",
        "mmap",
        "munmap",
        "poll",
        "read",
        "open",
        "close",
        "fcntl",
    };
    return op < OP_COUNT ? names[op] : "?";
}

Errnos errnos(std::initializer_list<int> list)
{
    Errnos set;
    for (int e : list)
        set.set(static_cast<size_t>(e));
    return set;
}

Errnos documented()
{
    return errnos({EFAULT, EINVAL, E2BIG, ENOTTY, EPERM, EBUSY, EADDRINUSE,
                   ENOENT, ENOSPC, EMSGSIZE, EAGAIN, ENOBUFS, ENOTCONN, EINTR});
}

void Tokens::put(const uint8_t *token)
{
    const uint64_t i = next.fetch_add(1) % kTokens;
    uint64_t w[2];
    std::memcpy(w, token, sizeof(w));
    words[i][0].store(w[0]);
    words[i][1].store(w[1]);
}

bool Tokens::get(Rng &rng, uint8_t *token)
{
    const uint64_t n = next.load();
    if (n == 0)
        return false;
    // the latest is the likeliest still to be offered
    const uint64_t i = rng.percent(50) ? (n - 1) % kTokens
                                       : rng.below(n < kTokens ? n : kTokens);
    const uint64_t w[2] = {words[i][0].load(), words[i][1].load()};
    std::memcpy(token, w, sizeof(w));
    return true;
}

} // namespace fuzz
