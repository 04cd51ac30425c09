// SPDX-License-Identifier: GPL-2.0-only
// smbdctl: what smbdirect.ko is doing, for a person or (--json) a program:
// the module's parameters, its counters, the RDMA latency histogram, the
// roles and sessions, the RDMA listeners, and one line per connection.
//
// Sources: /sys/module/smbdirect/parameters, /sys/class/misc/smbd/counters
// and debugfs smbdirect/{connections,sessions,rdma_latency,listeners}
// (root; debugfs mounted).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fs = std::filesystem;

namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

const char *const kCounters = "/sys/class/misc/smbd/counters";

// The module's name: smbdirect, or smbdirect_samba on a kernel that has a
// smbdirect module of its own (driver/Kbuild); ours has pool_buffers.
std::string module_name()
{
    for (const char *name : {"smbdirect_samba", "smbdirect"})
        if (fs::exists(fs::path("/sys/module") / name / "parameters" /
                       "pool_buffers"))
            return name;
    return "";
}

const std::string kModule = module_name();
const fs::path kParams = fs::path("/sys/module") / kModule / "parameters";
const fs::path kDebugfs = fs::path("/sys/kernel/debug") / kModule;

// name=value for each file of @dir, sorted by name.
Pairs read_dir(const fs::path &dir)
{
    Pairs out;
    std::error_code ec;
    for (const auto &e : fs::directory_iterator(dir, ec)) {
        std::ifstream f(e.path());
        std::string v;
        if (std::getline(f, v))
            out.emplace_back(e.path().filename().string(), v);
    }
    std::sort(out.begin(), out.end());
    return out;
}

// A debugfs list: one record per line of key=value words; nullopt if the
// file cannot be read.
std::optional<std::vector<Pairs>> read_list(const char *name)
{
    std::vector<Pairs> out;
    std::ifstream f(fs::path(kDebugfs) / name);
    if (!f)
        return std::nullopt;
    std::string line;
    while (std::getline(f, line)) {
        Pairs rec;
        size_t pos = 0;
        while (pos < line.size()) {
            size_t end = line.find(' ', pos);
            if (end == std::string::npos)
                end = line.size();
            std::string word = line.substr(pos, end - pos);
            size_t eq = word.find('=');
            if (eq != std::string::npos)
                rec.emplace_back(word.substr(0, eq), word.substr(eq + 1));
            pos = end + 1;
        }
        out.push_back(std::move(rec));
    }
    return out;
}

bool is_number(const std::string &s)
{
    return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

std::string json_value(const std::string &s)
{
    if (is_number(s))
        return s;
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\')
            out += '\\';
        out += c;
    }
    return out + "\"";
}

void print_json_object(const Pairs &p)
{
    std::printf("{");
    for (size_t i = 0; i < p.size(); i++)
        std::printf("%s\"%s\": %s", i ? ", " : "", p[i].first.c_str(),
                    json_value(p[i].second).c_str());
    std::printf("}");
}

// Everything smbdctl shows; a debugfs list is nullopt when unreadable.
struct State {
    Pairs params;
    Pairs counters;
    std::optional<std::vector<Pairs>> conns;
    std::optional<std::vector<Pairs>> sessions;
    std::optional<std::vector<Pairs>> latency;
    std::optional<std::vector<Pairs>> listeners;
};

void print_json_list(const char *name,
                     const std::optional<std::vector<Pairs>> &list)
{
    std::printf(", \"%s\": ", name);
    if (!list) {
        std::printf("null");
        return;
    }
    std::printf("[");
    for (size_t i = 0; i < list->size(); i++) {
        std::printf("%s", i ? ", " : "");
        print_json_object((*list)[i]);
    }
    std::printf("]");
}

void print_json(const State &st)
{
    std::printf("{\"parameters\": ");
    print_json_object(st.params);
    std::printf(", \"counters\": ");
    print_json_object(st.counters);
    print_json_list("connections", st.conns);
    print_json_list("sessions", st.sessions);
    print_json_list("rdma_latency", st.latency);
    print_json_list("listeners", st.listeners);
    std::printf("}\n");
}

std::string get(const Pairs &p, const char *key)
{
    for (const auto &[k, v] : p)
        if (k == key)
            return v;
    return "-";
}

void print_unreadable(const char *what, const char *file)
{
    std::printf("\n%s: %s/%s is not readable (root, debugfs mounted?)\n", what,
                kDebugfs.c_str(), file);
}

void print_latency(const std::vector<Pairs> &buckets)
{
    std::printf("\nRDMA operation latency:\n");
    std::string lower = "0";
    for (const Pairs &b : buckets) {
        std::string upper = get(b, "lt_us");
        if (get(b, "count") != "0")
            std::printf("  %6s us .. %-6s %s\n", lower.c_str(),
                        upper == "inf" ? "" : (upper + " us").c_str(),
                        get(b, "count").c_str());
        lower = upper;
    }
}

void print_sessions(const std::vector<Pairs> &lines)
{
    std::printf("\nroles and sessions:\n");
    for (const Pairs &l : lines) {
        if (get(l, "master_pid") != "-")
            std::printf("  master pid %s, listener pid %s\n",
                        get(l, "master_pid").c_str(),
                        get(l, "listener_pid").c_str());
        else
            std::printf("  session %s owned by pid %s\n",
                        get(l, "session").c_str(), get(l, "owner_pid").c_str());
    }
}

void print_listeners(const std::vector<Pairs> &lines)
{
    std::printf("\nlisteners:%s\n",
                lines.empty() ? " none (no master smbd registered)" : "");
    for (const Pairs &l : lines)
        std::printf("  %s for %s\n", get(l, "addr").c_str(),
                    get(l, "serves").c_str());
}

void print_conn(const Pairs &c)
{
    std::printf("  #%s %s %s %s -> %s, owner pid %s, dialect %s, session %s\n",
                get(c, "id").c_str(), get(c, "state").c_str(),
                get(c, "transport").c_str(), get(c, "remote").c_str(),
                get(c, "local").c_str(), get(c, "owner_pid").c_str(),
                get(c, "dialect").c_str(), get(c, "session").c_str());
    std::printf("      credits: %s to send, %s receives posted (%s granted, "
                "target %s)\n",
                get(c, "send_credits").c_str(), get(c, "recv_posted").c_str(),
                get(c, "recv_granted").c_str(), get(c, "recv_target").c_str());
    std::printf("      received %s PDUs (%s bytes), sent %s PDUs (%s bytes), "
                "%s unread; %s keepalives sent, %s credit stalls\n",
                get(c, "pdus_received").c_str(),
                get(c, "bytes_received").c_str(), get(c, "pdus_sent").c_str(),
                get(c, "bytes_sent").c_str(), get(c, "pdus_queued").c_str(),
                get(c, "keepalives_sent").c_str(),
                get(c, "credit_stalls").c_str());
    std::printf(
        "      RDMA: %s reads (%s bytes), %s writes (%s bytes), %s failed, "
        "%s in flight, budget %s free\n",
        get(c, "rdma_reads").c_str(), get(c, "rdma_read_bytes").c_str(),
        get(c, "rdma_writes").c_str(), get(c, "rdma_write_bytes").c_str(),
        get(c, "rdma_errors").c_str(), get(c, "rdma_inflight").c_str(),
        get(c, "rdma_budget").c_str());
}

void print_text(const State &st)
{
    std::printf(
        "smbdirect: RDMA port %s for InfiniBand and RoCE, %s for "
        "iWARP%s; pools of at most %s x %s bytes, one per open file\n",
        get(st.params, "ib_port").c_str(), get(st.params, "iwarp_port").c_str(),
        get(st.params, "ib_on_iwarp_port") == "Y" ? " and InfiniBand and RoCE"
                                                  : "",
        get(st.params, "pool_buffers").c_str(),
        get(st.params, "buffer_size").c_str());
    std::printf("\ncounters (since the module was loaded):\n");
    for (const auto &[k, v] : st.counters)
        if (v != "0" || k.rfind("disconnect_", 0) != 0)
            std::printf("  %-28s %s\n", k.c_str(), v.c_str());
    if (st.latency)
        print_latency(*st.latency);
    else
        print_unreadable("RDMA operation latency", "rdma_latency");
    if (st.sessions)
        print_sessions(*st.sessions);
    else
        print_unreadable("roles and sessions", "sessions");
    if (st.listeners)
        print_listeners(*st.listeners);
    else
        print_unreadable("listeners", "listeners");
    if (!st.conns) {
        print_unreadable("connections", "connections");
        return;
    }
    std::printf("\nconnections: %zu\n", st.conns->size());
    for (const Pairs &c : *st.conns)
        print_conn(c);
}

} // namespace

int main(int argc, char **argv)
{
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "--json")) {
            json = true;
        }
        else {
            std::fprintf(stderr,
                         "usage: smbdctl [--json]\n"
                         "Prints smbdirect.ko's parameters, counters, RDMA "
                         "latency histogram, sessions and connections.\n");
            return std::strcmp(argv[i], "--help") ? 2 : 0;
        }
    }
    if (kModule.empty()) {
        std::fprintf(stderr, "smbdctl: smbdirect.ko is not loaded\n");
        return 1;
    }
    State st{read_dir(kParams),         read_dir(kCounters),
             read_list("connections"),  read_list("sessions"),
             read_list("rdma_latency"), read_list("listeners")};
    if (json)
        print_json(st);
    else
        print_text(st);
    return 0;
}
