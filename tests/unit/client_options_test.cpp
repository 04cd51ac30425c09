// The smbdirect-client command line: every option lands in its field, the
// defaults stay, and each refusal says what the scripts and users see.
#include <gtest/gtest.h>

#include <vector>

#include "options.h"

using namespace smbd::client;

namespace {

std::variant<CliOptions, CliError> parse(std::vector<const char *> args)
{
    std::vector<const char *> argv{"smbdirect-client"};
    argv.insert(argv.end(), args.begin(), args.end());
    return parse_args(int(argv.size()), argv.data());
}

CliOptions parsed(std::vector<const char *> args)
{
    auto r = parse(args);
    if (auto *e = std::get_if<CliError>(&r)) {
        ADD_FAILURE() << "refused: " << e->message;
        return {};
    }
    return std::get<CliOptions>(r);
}

CliError refused(std::vector<const char *> args)
{
    auto r = parse(args);
    if (auto *e = std::get_if<CliError>(&r))
        return *e;
    ADD_FAILURE() << "accepted";
    return {};
}

TEST(ClientOptions, DefaultsAreTheRunsAndTheFuzzers)
{
    CliOptions o = parsed({"--addr", "10.0.0.1"});
    EXPECT_EQ(o.action, CliOptions::Action::run);
    EXPECT_EQ(o.run.addr, "10.0.0.1");
    EXPECT_EQ(o.run.port, kPortByTransport);
    EXPECT_EQ(o.run.pdus, 1u);
    EXPECT_EQ(o.run.size, 4096u);
    EXPECT_EQ(o.run.hostile, Hostile::none);
    EXPECT_EQ(o.run.io, IoMode::none);
    EXPECT_EQ(o.run.wait, std::chrono::seconds(30));
    EXPECT_FALSE(o.run.bind);
    EXPECT_FALSE(o.quiet);
    EXPECT_FALSE(o.json);
    EXPECT_EQ(o.fuzz.program, "smbdirect-client");
    EXPECT_EQ(o.fuzz.conversations, 100u);
}

TEST(ClientOptions, ReplaysNameTheProgramAsItWasRun)
{
    const char *argv[] = {"/opt/bin/client", "--addr", "h",
                          "--fuzz",          "1",      nullptr};
    auto r = parse_args(5, argv);
    ASSERT_TRUE(std::holds_alternative<CliOptions>(r));
    EXPECT_EQ(std::get<CliOptions>(r).fuzz.program, "/opt/bin/client");
}

TEST(ClientOptions, NoArgumentsAtAllIsTheUsage)
{
    // execve() with an empty argv: argc 0 and argv[0] the terminating NULL
    const char *argv[] = {nullptr};
    auto r = parse_args(0, argv);
    ASSERT_TRUE(std::holds_alternative<CliError>(r));
    EXPECT_TRUE(std::get<CliError>(r).usage);
}

TEST(ClientOptions, EveryRunOptionLandsInItsField)
{
    CliOptions o = parsed({"--addr",
                           "h",
                           "--port",
                           "5445",
                           "--source",
                           "10.55.0.7",
                           "--dialects",
                           "0300,3.1.1",
                           "--bind",
                           "0x1234",
                           "--expect-status",
                           "0xc0000203",
                           "--pdus",
                           "8",
                           "--size",
                           "100",
                           "--posix",
                           "--hostile",
                           "never-grant",
                           "--wait",
                           "5",
                           "--timeout",
                           "7",
                           "--receive-credits",
                           "16",
                           "--send-credits",
                           "9",
                           "--send-size",
                           "4096",
                           "--receive-size",
                           "2048",
                           "--fragmented-size",
                           "131072",
                           "--descriptors",
                           "3",
                           "--descriptor-extra",
                           "4096",
                           "--file-size",
                           "1048576",
                           "--channel",
                           "rdma",
                           "--quiet",
                           "--json"});
    const RunOptions &r = o.run;
    EXPECT_EQ(r.port, 5445);
    EXPECT_EQ(r.connect.source, "10.55.0.7");
    EXPECT_EQ(r.smb2.dialects,
              (std::vector<uint16_t>{SMB2_DIALECT_300, SMB2_DIALECT_311}));
    EXPECT_TRUE(r.bind);
    EXPECT_EQ(r.bind_session, 0x1234u);
    EXPECT_EQ(r.expect_status, 0xc0000203u);
    EXPECT_EQ(r.pdus, 8u);
    EXPECT_EQ(r.size, 100u);
    EXPECT_TRUE(r.smb2.posix);
    EXPECT_EQ(r.hostile, Hostile::never_grant);
    EXPECT_EQ(r.wait, std::chrono::seconds(5));
    EXPECT_EQ(r.connect.timeout, std::chrono::seconds(7));
    EXPECT_EQ(r.connect.receive_credit_max, 16);
    EXPECT_EQ(r.connect.send_credit_target, 9);
    EXPECT_EQ(r.connect.preferred_send_size, 4096u);
    EXPECT_EQ(r.connect.max_receive_size, 2048u);
    EXPECT_EQ(r.connect.max_fragmented_size, 131072u);
    EXPECT_EQ(r.descriptors, 3u);
    EXPECT_EQ(r.descriptor_extra, 4096u);
    EXPECT_EQ(r.file.size, 1048576u);
    EXPECT_EQ(r.channel, smbd::smb2rw::CHANNEL_RDMA_V1);
    EXPECT_TRUE(o.quiet);
    EXPECT_TRUE(o.json);
    // --new after --bind: a new session again
    EXPECT_FALSE(parsed({"--addr", "h", "--bind", "1", "--new"}).run.bind);
}

TEST(ClientOptions, WriteReadAndBench)
{
    CliOptions w =
        parsed({"--addr", "h", "--write-read", "3000000", "--io-count", "4",
                "--offset", "0", "--channel", "rdma-invalidate"});
    EXPECT_EQ(w.run.io, IoMode::write_read);
    EXPECT_EQ(w.run.write_read.size, 3000000u);
    EXPECT_EQ(w.run.write_read.rounds, 4u);
    EXPECT_EQ(w.run.write_read.offset, 0u);
    EXPECT_EQ(w.run.channel, smbd::smb2rw::CHANNEL_RDMA_V1_INVALIDATE);

    CliOptions b = parsed({"--addr", "h", "--bench", "write", "--size", "65536",
                           "--depth", "8", "--seconds", "0.5"});
    EXPECT_EQ(b.run.io, IoMode::bench);
    EXPECT_TRUE(b.run.bench.write);
    EXPECT_EQ(b.run.bench.size, 65536u); // --size is the transfer's
    EXPECT_EQ(b.run.bench.depth, 8u);
    EXPECT_EQ(b.run.bench.duration, std::chrono::milliseconds(500));
}

TEST(ClientOptions, FuzzTakesTheRunsAddressAndLimits)
{
    CliOptions o =
        parsed({"--fuzz", "7", "--addr", "h", "--port", "445", "--timeout", "3",
                "--file-size", "4096", "--conversations", "20", "--first", "5",
                "--fuzz-stage", "rdma", "--fuzz-wait", "50"});
    EXPECT_EQ(o.action, CliOptions::Action::fuzz);
    EXPECT_EQ(o.fuzz.seed, 7u);
    EXPECT_EQ(o.fuzz.addr, "h");
    EXPECT_EQ(o.fuzz.port, 445);
    EXPECT_EQ(o.fuzz.timeout, std::chrono::seconds(3));
    EXPECT_EQ(o.fuzz.file.size, 4096u);
    EXPECT_EQ(o.fuzz.conversations, 20u);
    EXPECT_EQ(o.fuzz.first, 5u);
    EXPECT_EQ(o.fuzz.stage, FuzzStage::rdma);
    EXPECT_EQ(o.fuzz.wait, std::chrono::milliseconds(50));
}

TEST(ClientOptions, HelpAndListEndTheParsingWhereTheyStand)
{
    EXPECT_EQ(parsed({"--help", "--bogus"}).action, CliOptions::Action::help);
    EXPECT_EQ(parsed({"-h"}).action, CliOptions::Action::help);
    EXPECT_EQ(parsed({"--list-hostile"}).action,
              CliOptions::Action::list_hostile);
    EXPECT_EQ(refused({"--bogus", "--help"}).message,
              "smbdirect-client: unknown option '--bogus'");
}

TEST(ClientOptions, RefusalsSayWhat)
{
    const std::pair<std::vector<const char *>, const char *> want[] = {
        {{"--addr"}, "smbdirect-client: --addr needs a value"},
        {{"--addr", "h", "--port", "65536"},
         "smbdirect-client: --port: '65536' is not a number up to 65535"},
        {{"--addr", "h", "--pdus", "-1"},
         "smbdirect-client: --pdus: '-1' is not a number up to "
         "4294967295"},
        {{"--addr", "h", "--dialects", "0400"},
         "smbdirect-client: --dialects: '0400' is not a list like "
         "0300,0302,0311"},
        {{"--addr", "h", "--hostile", "nope"},
         "smbdirect-client: unknown hostile mode 'nope'; --list-hostile "
         "shows them"},
        {{"--addr", "h", "--bench", "copy"},
         "smbdirect-client: --bench read or --bench write"},
        {{"--addr", "h", "--seconds", "0"},
         "smbdirect-client: --seconds: '0' is not a duration in seconds"},
        {{"--addr", "h", "--channel", "tcp"},
         "smbdirect-client: --channel rdma or --channel rdma-invalidate"},
        {{"--addr", "h", "--fuzz-stage", "all"},
         "smbdirect-client: unknown fuzz stage 'all'"},
        {{"--addr", "h", "--bench", "read", "--size", "0"},
         "smbdirect-client: --bench needs --size and --depth of at least "
         "1"},
    };
    for (const auto &[args, message] : want) {
        CliError e = refused(args);
        EXPECT_EQ(e.message, message);
        EXPECT_FALSE(e.usage) << message;
    }
}

TEST(ClientOptions, UnknownOptionOrNoAddressShowsTheUsage)
{
    CliError e = refused({"--addr", "h", "--frobnicate"});
    EXPECT_EQ(e.message, "smbdirect-client: unknown option '--frobnicate'");
    EXPECT_TRUE(e.usage);
    e = refused({"--pdus", "3"});
    EXPECT_EQ(e.message, "");
    EXPECT_TRUE(e.usage);
    // a fuzz run checks no benchmark sizes
    EXPECT_EQ(
        parsed({"--addr", "h", "--fuzz", "1", "--bench", "read", "--size", "0"})
            .action,
        CliOptions::Action::fuzz);
}

} // namespace
