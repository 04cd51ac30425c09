// smbdirect-client: connect to an SMB Direct server like a Windows client,
// negotiate, set up or bind a session, send PDUs and check their echoes, or
// write and read back data over RDMA, or benchmark READ/WRITE; or break one
// rule (--hostile) and check that the server disconnects; or fuzz (--fuzz).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "options.h"

using namespace smbd::client;

namespace {

void usage(FILE *out)
{
    std::fprintf(
        out,
        "usage: smbdirect-client --addr ADDR [options]\n"
        "  --addr ADDR            server address (IPv4/IPv6 or name)\n"
        "  --port PORT            RDMA port (default: 445 on InfiniBand and\n"
        "                         RoCE, 5445 on iWARP, as Windows picks it)\n"
        "  --source ADDR          local address to connect from (default: "
        "the route's)\n"
        "  --dialects LIST        SMB2 dialects offered, e.g. 0300,0302,0311 "
        "(default)\n"
        "  --new                  new session: SESSION_SETUP with SessionId 0 "
        "(default)\n"
        "  --bind SESSIONID       binding SESSION_SETUP to SESSIONID (0x... or "
        "decimal)\n"
        "  --expect-status STATUS SESSION_SETUP must fail with STATUS, then "
        "disconnect\n"
        "  --pdus N               echoed PDUs after SESSION_SETUP (default 1)\n"
        "  --size BYTES           bytes per PDU, SMB2 header included (default "
        "4096)\n"
        "  --posix                offer the POSIX extensions context (3.1.1)\n"
        "  --hostile MODE         break one rule; --list-hostile shows the "
        "modes\n"
        "  --wait SECONDS         wait for a provoked disconnect (default 30)\n"
        "  --timeout SECONDS      wait for each answer or credit (default 10)\n"
        "  --receive-credits N    receives posted, CreditsRequested bound "
        "(default 255)\n"
        "  --send-credits N       CreditsRequested (default 255)\n"
        "  --send-size BYTES      PreferredSendSize (default 1364)\n"
        "  --receive-size BYTES   MaxReceiveSize (default 8192)\n"
        "  --fragmented-size B    MaxFragmentedSize (default 1048576)\n"
        "SMB2 WRITE and READ over RDMA after SESSION_SETUP (instead of "
        "echoes):\n"
        "  --write-read SIZE      write SIZE bytes, read them back, check "
        "every byte\n"
        "  --io-count N           write-read rounds, each at the next SIZE "
        "bytes (default 1)\n"
        "  --offset BYTES         file offset of the first round (default 1 "
        "MiB - 1000)\n"
        "  --bench read|write     keep --depth transfers of --size bytes in "
        "flight for\n"
        "                         --seconds; prints one BENCHRESULT line\n"
        "  --depth N              benchmark transfers in flight (default 1)\n"
        "  --seconds S            benchmark duration (default 1)\n"
        "  --channel rdma|rdma-invalidate\n"
        "                         RDMA_V1 or RDMA_V1_INVALIDATE (default: the "
        "latter\n"
        "                         from dialect 3.0.2 on, the former on 3.0)\n"
        "  --descriptors N        Buffer Descriptor V1 entries per transfer "
        "(default 1)\n"
        "  --descriptor-extra B   the descriptors describe B bytes more than "
        "the data\n"
        "  --file-size BYTES      the server's file size (default 64 MiB)\n"
        "Randomized fuzzing: conversation i of SEED draws all it sends from "
        "(SEED, i)\n"
        "and breaks one stage of a valid conversation; a valid conversation "
        "must\n"
        "still succeed every 50 conversations. Prints one NETFUZZ summary "
        "line:\n"
        "  --fuzz SEED            fuzz instead of one run\n"
        "  --conversations N      conversations (default 100)\n"
        "  --first I              index of the first conversation (default 0)\n"
        "  --fuzz-stage STAGE     only negotiate, credits, fragments, "
        "smb2-negotiate,\n"
        "                         session-setup or rdma\n"
        "  --fuzz-wait MS         wait for an answer after a mutation (default "
        "300)\n"
        "  --quiet                print only the outcome\n"
        "  --json                 print one JSON object\n"
        "exit status: 0 when the expected outcome happened, 1 when not, 2 on "
        "usage errors\n");
}

void list_hostile()
{
    for (const auto &m : hostile_modes())
        std::printf("%-28s SMBD_REASON_%-18s %.*s\n",
                    std::string(m.name).c_str(),
                    std::string(m.reason_name).c_str(), int(m.rule.size()),
                    m.rule.data());
}

std::string json_string(std::string_view s)
{
    std::string out = "\"";
    for (char ch : s) {
        if (ch == '"' || ch == '\\') {
            out += '\\';
            out += ch;
        }
        else if (uint8_t(ch) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof(buf), "\\u%04x", ch);
            out += buf;
        }
        else {
            out += ch;
        }
    }
    return out + "\"";
}

std::string ended_text(const RunReport &r)
{
    if (r.observed.peer_disconnected)
        return "the server disconnected";
    if (r.observed.closed_locally)
        return "the client disconnected";
    return "never connected";
}

double seconds(const IoReport &io)
{
    return std::chrono::duration<double>(io.elapsed).count();
}

// The benchmark's one line (make bench parses it).
void print_bench(const RunOptions &opt, const RunReport &r)
{
    const IoReport &io = *r.io;
    uint64_t bytes = io.bytes_read + io.bytes_written;
    double s = seconds(io);
    std::printf("BENCHRESULT op=%s size=%u depth=%u ops=%llu bytes=%llu "
                "seconds=%.3f mbps=%.1f\n",
                opt.bench.write ? "write" : "read", opt.bench.size,
                opt.bench.depth, (unsigned long long)io.ops,
                (unsigned long long)bytes, s,
                s > 0 ? double(bytes) / s / 1e6 : 0.0);
}

std::string channel_name(uint32_t channel)
{
    return channel == smbd::smb2rw::CHANNEL_RDMA_V1_INVALIDATE
               ? "rdma-invalidate"
               : "rdma";
}

void print_json(const RunReport &r)
{
    const auto &o = r.observed;
    const auto &h = hostile_info(r.hostile);
    std::printf(
        "{\"ok\":%s,\"outcome\":%s,\"hostile\":%s,\"expected_reason\":%s,",
        r.ok ? "true" : "false", json_string(r.outcome).c_str(),
        json_string(h.name).c_str(),
        json_string("SMBD_REASON_" + std::string(h.reason_name)).c_str());
    std::printf("\"device\":%s,\"elapsed_ms\":%lld,\"ended\":%s,",
                json_string(r.device).c_str(), (long long)r.elapsed.count(),
                json_string(ended_text(r)).c_str());
    if (r.smbd_negotiated)
        std::printf("\"smbd\":{\"credits_granted\":%u,\"credits_requested\":%u,"
                    "\"max_read_write_size\":%u,\"preferred_send_size\":%u,"
                    "\"max_receive_size\":%u,\"max_fragmented_size\":%u,"
                    "\"max_send_size\":%u,\"receive_credit_target\":%u},",
                    r.smbd.credits_granted, r.smbd.credits_requested,
                    r.smbd.max_read_write_size, r.smbd.preferred_send_size,
                    r.smbd.max_receive_size, r.smbd.max_fragmented_size,
                    r.params.max_send_size, r.params.receive_credit_target);
    if (r.smb2)
        std::printf("\"smb2\":{\"dialect\":\"%s\",\"capabilities\":%u,"
                    "\"security_mode\":%u,\"max_read_size\":%u,"
                    "\"max_write_size\":%u,\"security_blob_len\":%zu},",
                    dialect_text(r.smb2->dialect).c_str(), r.smb2->capabilities,
                    r.smb2->security_mode, r.smb2->max_read_size,
                    r.smb2->max_write_size, r.smb2->security_blob.size());
    if (r.io)
        std::printf("\"io\":{\"channel\":\"%s\",\"invalidation_expected\":%s,"
                    "\"ops\":%llu,\"bytes_written\":%llu,\"bytes_read\":%llu,"
                    "\"bytes_verified\":%llu,\"invalidations\":%llu,"
                    "\"seconds\":%.3f},",
                    channel_name(r.channel).c_str(),
                    r.invalidation_expected ? "true" : "false",
                    (unsigned long long)r.io->ops,
                    (unsigned long long)r.io->bytes_written,
                    (unsigned long long)r.io->bytes_read,
                    (unsigned long long)r.io->bytes_verified,
                    (unsigned long long)r.io->invalidations, seconds(*r.io));
    std::printf(
        "\"session_id\":%llu,\"pdus_verified\":%u,"
        "\"pdus_sent\":%llu,\"pdus_received\":%llu,"
        "\"bytes_sent\":%llu,\"bytes_received\":%llu,"
        "\"messages_sent\":%llu,\"messages_received\":%llu,"
        "\"credits_granted\":%llu,\"credits_received\":%llu,"
        "\"credit_waits\":%llu,\"keepalive_requests\":%u,"
        "\"keepalive_answers\":%u,\"peer_disconnected\":%s}\n",
        (unsigned long long)r.session_id, r.pdus_verified,
        (unsigned long long)o.pdus_sent, (unsigned long long)o.pdus_received,
        (unsigned long long)o.bytes_sent, (unsigned long long)o.bytes_received,
        (unsigned long long)o.messages_sent,
        (unsigned long long)o.messages_received,
        (unsigned long long)o.credits_granted,
        (unsigned long long)o.credits_received,
        (unsigned long long)o.credit_waits, o.keepalive_requests,
        o.keepalive_answers, o.peer_disconnected ? "true" : "false");
}

void print_summary(const RunReport &r)
{
    const auto &o = r.observed;
    std::printf("%s: %s\n", r.ok ? "OK" : "FAILED", r.outcome.c_str());
    std::printf(
        "traffic: %llu PDUs (%llu bytes) sent, %llu PDUs (%llu bytes) "
        "received, in %llu and %llu SMB Direct messages (%llu and %llu "
        "without data)\n",
        (unsigned long long)o.pdus_sent, (unsigned long long)o.bytes_sent,
        (unsigned long long)o.pdus_received,
        (unsigned long long)o.bytes_received,
        (unsigned long long)o.messages_sent,
        (unsigned long long)o.messages_received,
        (unsigned long long)o.empty_sent, (unsigned long long)o.empty_received);
    std::printf(
        "credits: granted %llu to the server, received %llu from it; "
        "%llu sends waited for a credit; at the end %u send credits held, "
        "%u receives posted (%u granted)\n",
        (unsigned long long)o.credits_granted,
        (unsigned long long)o.credits_received,
        (unsigned long long)o.credit_waits, r.credits.send_credits,
        r.credits.recv_posted, r.credits.recv_granted);
    std::printf("keepalive: %u requests from the server, %u answered\n",
                o.keepalive_requests, o.keepalive_answers);
    if (r.io)
        std::printf("rdma: channel %s, %llu transfers, %llu bytes written, "
                    "%llu read, %llu verified, %llu responses invalidated a "
                    "token, in %.3f s\n",
                    channel_name(r.channel).c_str(),
                    (unsigned long long)r.io->ops,
                    (unsigned long long)r.io->bytes_written,
                    (unsigned long long)r.io->bytes_read,
                    (unsigned long long)r.io->bytes_verified,
                    (unsigned long long)r.io->invalidations, seconds(*r.io));
    std::printf("end: %s after %lld ms\n", ended_text(r).c_str(),
                (long long)r.elapsed.count());
}

// --fuzz: a line per conversation unless --quiet, then the NETFUZZ line.
int run_fuzzer(const CliOptions &o)
{
    FuzzReport r = run_fuzz(o.fuzz, [&](const std::string &line) {
        if (!o.quiet) {
            std::printf("%s\n", line.c_str());
            std::fflush(stdout);
        }
    });
    if (!r.ok) {
        std::printf("FAILED: %s\n", r.failure.c_str());
        if (!r.replay.empty())
            std::printf("replay: %s\n", r.replay.c_str());
    }
    std::printf("%s\n", fuzz_summary(o.fuzz, r).c_str());
    return r.ok ? 0 : 1;
}

} // namespace

int main(int argc, char **argv)
{
    auto parsed = parse_args(argc, argv);
    if (auto *e = std::get_if<CliError>(&parsed)) {
        if (!e->message.empty())
            std::fprintf(stderr, "%s\n", e->message.c_str());
        if (e->usage)
            usage(stderr);
        return 2;
    }
    CliOptions &o = *std::get_if<CliOptions>(&parsed);
    RunOptions &opt = o.run;
    switch (o.action) {
    case CliOptions::Action::help:
        usage(stdout);
        return 0;
    case CliOptions::Action::list_hostile:
        list_hostile();
        return 0;
    case CliOptions::Action::fuzz:
        return run_fuzzer(o);
    case CliOptions::Action::run:
        break;
    }

    // a per-run salt and ClientGuid, as a real client draws them
    std::srand(
        unsigned(std::chrono::steady_clock::now().time_since_epoch().count()));
    for (auto &b : opt.smb2.salt)
        b = uint8_t(std::rand());
    for (auto &b : opt.smb2.client_guid)
        b = uint8_t(std::rand());
    // a new file pattern each run: a READ cannot pass on an old run's data
    opt.file.seed = (uint64_t(std::rand()) << 32) | uint32_t(std::rand());
    if (opt.io == IoMode::bench) {
        RunReport r = run(opt);
        if (!r.ok || !r.io) {
            std::fprintf(stderr, "smbdirect-client: FAILED: %s\n",
                         r.outcome.c_str());
            return 1;
        }
        print_bench(opt, r);
        return 0;
    }

    auto progress = [&](const std::string &line) {
        if (!o.quiet && !o.json) {
            std::printf("%s\n", line.c_str());
            std::fflush(stdout);
        }
    };
    RunReport r = run(opt, progress);
    if (o.json)
        print_json(r);
    else if (o.quiet)
        std::printf("%s: %s\n", r.ok ? "OK" : "FAILED", r.outcome.c_str());
    else
        print_summary(r);
    return r.ok ? 0 : 1;
}
