// Hostile modes: names round-trip, and each names the reason the driver
// should record.
#include <gtest/gtest.h>

#include <linux/smbd.h>

#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "hostile.h"
#include "run.h"

using namespace smbd::client;

namespace {

TEST(ClientHostile, NamesRoundTrip)
{
    std::set<std::string> names;
    for (const auto &m : hostile_modes()) {
        EXPECT_EQ(parse_hostile(m.name), m.mode) << m.name;
        EXPECT_EQ(hostile_info(m.mode).name, m.name);
        EXPECT_FALSE(m.rule.empty()) << m.name;
        EXPECT_TRUE(names.insert(std::string(m.name)).second) << m.name;
    }
    EXPECT_EQ(names.size(), size_t(Hostile::pipelined_setup) + 1);
}

TEST(ClientHostile, UnknownNameRefused)
{
    EXPECT_FALSE(parse_hostile("negotiate").has_value());
    EXPECT_FALSE(parse_hostile("").has_value());
    EXPECT_FALSE(parse_hostile("FLOOD").has_value());
}

TEST(ClientHostile, ExpectedReasons)
{
    const std::pair<const char *, uint32_t> want[] = {
        {"negotiate-version", SMBD_REASON_BAD_NEGOTIATE},
        {"negotiate-short", SMBD_REASON_BAD_NEGOTIATE},
        {"negotiate-credits-zero", SMBD_REASON_BAD_NEGOTIATE},
        {"negotiate-small-receive", SMBD_REASON_BAD_NEGOTIATE},
        {"negotiate-small-fragmented", SMBD_REASON_BAD_NEGOTIATE},
        {"offset-past-buffer", SMBD_REASON_BAD_MESSAGE},
        {"offset-unaligned", SMBD_REASON_BAD_MESSAGE},
        {"data-credits-zero", SMBD_REASON_BAD_MESSAGE},
        {"remaining-over-limit", SMBD_REASON_BAD_REASSEMBLY},
        {"send-without-credit", SMBD_REASON_CREDIT_VIOLATION},
        {"never-grant", SMBD_REASON_CREDIT_TIMEOUT},
        {"stall-negotiate", SMBD_REASON_NEGOTIATE_TIMEOUT},
        {"stall-smb2", SMBD_REASON_SETUP_TIMEOUT},
        {"stall-session-setup", SMBD_REASON_SETUP_TIMEOUT},
        {"mid-fragment-disconnect", SMBD_REASON_PEER},
        {"ignore-keepalive", SMBD_REASON_KEEPALIVE_TIMEOUT},
        {"flood", SMBD_REASON_PEER},
        {"bad-smb2-negotiate", SMBD_REASON_BAD_SMB2},
        {"first-not-negotiate", SMBD_REASON_BAD_SMB2},
    };
    for (const auto &[name, reason] : want) {
        auto m = parse_hostile(name);
        ASSERT_TRUE(m.has_value()) << name;
        EXPECT_EQ(hostile_info(*m).reason, reason) << name;
    }
}

// The Flow the hostile modes are made of keeps its own copy of the
// progress callback, and refuses options that would not outlive it.
using Progress = std::function<void(const std::string &)>;
static_assert(!std::is_constructible_v<Flow, RunOptions &&, Progress>);
static_assert(std::is_constructible_v<Flow, const RunOptions &, Progress>);

TEST(ClientFlow, StepsReachTheProgressItWasGiven)
{
    RunOptions opt;
    std::vector<std::string> seen;
    // a lambda: the std::function made of it is a temporary
    Flow f(opt, [&](const std::string &s) { seen.push_back(s); });
    f.step("one");
    f.step("two");
    EXPECT_EQ(seen, (std::vector<std::string>{"one", "two"}));
    EXPECT_EQ(f.report().steps, seen);
}

} // namespace
