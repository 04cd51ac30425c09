// smbdctl: what smbdirect.ko is doing, for a person or (--json) a program:
// the module's parameters, its counters and one line per connection.
//
// Sources: /sys/module/smbdirect/parameters, /sys/class/misc/smbd/counters
// and debugfs smbdirect/connections (root; debugfs mounted).
#include <cstdio>
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace fs = std::filesystem;

namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

const char *const kParams = "/sys/module/smbdirect/parameters";
const char *const kCounters = "/sys/class/misc/smbd/counters";
const char *const kConnections = "/sys/kernel/debug/smbdirect/connections";

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

// One connection per line of key=value words.
std::vector<Pairs> read_connections(bool &available)
{
    std::vector<Pairs> out;
    std::ifstream f(kConnections);
    available = bool(f);
    std::string line;
    while (std::getline(f, line)) {
        Pairs conn;
        size_t pos = 0;
        while (pos < line.size()) {
            size_t end = line.find(' ', pos);
            if (end == std::string::npos)
                end = line.size();
            std::string word = line.substr(pos, end - pos);
            size_t eq = word.find('=');
            if (eq != std::string::npos)
                conn.emplace_back(word.substr(0, eq), word.substr(eq + 1));
            pos = end + 1;
        }
        out.push_back(std::move(conn));
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

void print_json(const Pairs &params, const Pairs &counters,
                const std::vector<Pairs> &conns, bool conns_available)
{
    std::printf("{\"parameters\": ");
    print_json_object(params);
    std::printf(", \"counters\": ");
    print_json_object(counters);
    std::printf(", \"connections\": ");
    if (!conns_available) {
        std::printf("null}\n");
        return;
    }
    std::printf("[");
    for (size_t i = 0; i < conns.size(); i++) {
        std::printf("%s", i ? ", " : "");
        print_json_object(conns[i]);
    }
    std::printf("]}\n");
}

std::string get(const Pairs &p, const char *key)
{
    for (const auto &[k, v] : p)
        if (k == key)
            return v;
    return "-";
}

void print_text(const Pairs &params, const Pairs &counters,
                const std::vector<Pairs> &conns, bool conns_available)
{
    std::printf("smbdirect: port %s, pool %s x %s bytes per open file\n",
                get(params, "port").c_str(), get(params, "pool_buffers").c_str(),
                get(params, "buffer_size").c_str());
    std::printf("\ncounters (since the module was loaded):\n");
    for (const auto &[k, v] : counters)
        if (v != "0" || k.rfind("disconnect_", 0) != 0)
            std::printf("  %-28s %s\n", k.c_str(), v.c_str());
    if (!conns_available) {
        std::printf("\nconnections: %s is not readable (root, debugfs mounted?)\n",
                    kConnections);
        return;
    }
    std::printf("\nconnections: %zu\n", conns.size());
    for (const Pairs &c : conns) {
        std::printf("  #%s %s %s -> %s, owner pid %s, dialect %s, session %s\n",
                    get(c, "id").c_str(), get(c, "state").c_str(),
                    get(c, "remote").c_str(), get(c, "local").c_str(),
                    get(c, "owner_pid").c_str(), get(c, "dialect").c_str(),
                    get(c, "session").c_str());
        std::printf("      credits: %s to send, %s receives posted (%s granted, target %s)\n",
                    get(c, "send_credits").c_str(), get(c, "recv_posted").c_str(),
                    get(c, "recv_granted").c_str(), get(c, "recv_target").c_str());
        std::printf("      received %s PDUs (%s bytes), sent %s PDUs (%s bytes), "
                    "%s unread; %s keepalives sent, %s credit stalls\n",
                    get(c, "pdus_received").c_str(), get(c, "bytes_received").c_str(),
                    get(c, "pdus_sent").c_str(), get(c, "bytes_sent").c_str(),
                    get(c, "pdus_queued").c_str(), get(c, "keepalives_sent").c_str(),
                    get(c, "credit_stalls").c_str());
    }
}

} // namespace

int main(int argc, char **argv)
{
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "--json")) {
            json = true;
        } else {
            std::fprintf(stderr, "usage: smbdctl [--json]\n"
                                 "Prints smbdirect.ko's parameters, counters and "
                                 "connections.\n");
            return std::strcmp(argv[i], "--help") ? 2 : 0;
        }
    }
    if (!fs::exists(kParams)) {
        std::fprintf(stderr, "smbdctl: smbdirect.ko is not loaded\n");
        return 1;
    }
    Pairs params = read_dir(kParams);
    Pairs counters = read_dir(kCounters);
    bool available = false;
    std::vector<Pairs> conns = read_connections(available);
    if (json)
        print_json(params, counters, conns, available);
    else
        print_text(params, counters, conns, available);
    return 0;
}
