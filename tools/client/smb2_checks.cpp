#include "smb2_checks.h"

#include <sys/random.h>
#include <unistd.h>

#include "client.h"
#include "io_run.h"
#include "pattern.h"
#include "smb2_tree.h"
#include "tcp_transport.h"

namespace smbd::client {

namespace {

using namespace smbd::smb2rw;
using Step = std::function<void(const std::string &)>;

// The FileId of a related compound's previous CREATE (MS-SMB2 3.2.4.1.4).
constexpr FileId kRelatedFile = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                 0xff, 0xff, 0xff, 0xff};
// Inline transfers: within every server's MaxReadSize/MaxWriteSize.
constexpr uint32_t kInlineSize = 64u << 10;
// Off a page and a 1 MiB boundary, so that data crosses them unaligned.
constexpr uint64_t kOffset = (1u << 20) - 1000;

// One connection and what carries it.
struct Channel {
    std::unique_ptr<TcpTransport> tcp;
    std::unique_ptr<Client> rdma;
    std::unique_ptr<Connection> conn;
};

} // namespace

class Smb2Run {
  public:
    Smb2Run(const Smb2CheckOptions &opt, const Step &step)
        : opt_(opt), step_(step)
    {
        neg_ = opt.smb2;
        // one ClientGuid for every channel of the run
        while (getrandom(neg_.client_guid.data(), neg_.client_guid.size(), 0) !=
               ssize_t(neg_.client_guid.size()))
            ;
        file_ = "smb2-check-" + std::to_string(getpid());
        seed_ = uint64_t(getpid());
    }

    const Smb2CheckOptions &opt() const { return opt_; }
    void step(const std::string &s) const
    {
        if (step_)
            step_(s);
    }
    std::string unc() const { return "\\\\" + opt_.addr + "\\" + opt_.share; }
    uint64_t seed() const { return seed_; }

    Result<Channel> open(Carrier carrier)
    {
        Channel ch;
        PduTransport *t = nullptr;
        if (carrier == Carrier::tcp) {
            auto c =
                TcpTransport::connect(opt_.addr, opt_.tcp_port, opt_.timeout);
            if (!c)
                return c.error();
            ch.tcp = std::move(*c);
            t = ch.tcp.get();
        }
        else {
            ConnectOptions co;
            co.timeout = opt_.timeout;
            auto c = Client::connect(opt_.addr, opt_.rdma_port, co);
            if (!c)
                return c.error();
            ch.rdma = std::move(*c);
            if (auto st = ch.rdma->negotiate(); !st)
                return st.error();
            t = ch.rdma.get();
        }
        ch.conn = std::make_unique<Connection>(*t, opt_.timeout);
        auto n = ch.conn->negotiate(neg_);
        if (!n)
            return n.error();
        step(std::string(carrier == Carrier::tcp ? "TCP" : "SMB Direct") +
             " connection negotiated SMB " + dialect_text(n->dialect));
        return ch;
    }

    // A new file for the check, deleted when closed.
    Result<FileId> create(Tree &tree) const
    {
        auto c = tree.create(create_request());
        if (!c)
            return c.error();
        step("CREATE " + file_);
        return c->file_id;
    }
    CreateRequest create_request() const
    {
        CreateRequest r;
        r.name = file_;
        r.desired_access = GENERIC_READ | GENERIC_WRITE | DELETE;
        r.disposition = FILE_OVERWRITE_IF;
        r.options = FILE_NON_DIRECTORY_FILE | FILE_DELETE_ON_CLOSE;
        return r;
    }

  private:
    const Smb2CheckOptions &opt_;
    const Step &step_;
    Smb2NegotiateOptions neg_;
    std::string file_;
    uint64_t seed_;
};

namespace {

using Run = Smb2Run;

// @data against the file pattern at @offset.
Status same_as_written(uint64_t seed, uint64_t offset,
                       std::span<const uint8_t> data, uint32_t size)
{
    if (data.size() != size)
        return make_error(Errc::mismatch, "READ of " + std::to_string(size) +
                                              " bytes got " +
                                              std::to_string(data.size()));
    if (auto bad = file_pattern_mismatch(seed, offset, data))
        return make_error(Errc::mismatch,
                          "byte " + std::to_string(offset + *bad) +
                              " read back differs from the byte written");
    return {};
}

// An inline WRITE, then a READ of the same range.
Status inline_round(Run &run, Tree &tree, const FileId &file, uint64_t offset)
{
    std::vector<uint8_t> data(kInlineSize);
    fill_file_pattern(run.seed(), offset, data);
    auto w = tree.write(file, offset, data);
    if (!w)
        return w.error();
    if (*w != data.size())
        return make_error(Errc::mismatch,
                          "WRITE of " + std::to_string(data.size()) +
                              " bytes wrote " + std::to_string(*w));
    auto r = tree.read(file, offset, kInlineSize);
    if (!r)
        return r.error();
    if (auto st = same_as_written(run.seed(), offset, *r, kInlineSize); !st)
        return st;
    run.step("inline WRITE and READ of " + std::to_string(kInlineSize) +
             " bytes at " + std::to_string(offset));
    return {};
}

// Write-read rounds over RDMA with @channel through @c, a channel of
// @tree's session.
Status rdma_rounds(Run &run, Client &c, Tree tree, const FileId &file,
                   uint32_t channel)
{
    TreeIoPath path(tree);
    IoOptions io;
    io.dialect = tree.connection().dialect();
    io.channel = channel;
    io.max_size = run.opt().size;
    io.file_id = file;
    auto rio = RdmaIo::create(c, io, &path);
    if (!rio)
        return rio.error();
    FileOptions f;
    f.seed = run.seed();
    WriteReadOptions wr;
    wr.size = run.opt().size;
    wr.rounds = 2;
    wr.offset = kOffset;
    IoReport report;
    if (auto st = write_read(**rio, f, wr, run.opt().timeout, report); !st)
        return st;
    run.step("RDMA WRITE and READ (" +
             std::string(channel == CHANNEL_RDMA_V1 ? "RDMA_V1"
                                                    : "RDMA_V1_INVALIDATE") +
             "): " + std::to_string(report.bytes_verified) +
             " bytes verified, " + std::to_string(report.invalidations) +
             " tokens invalidated by the server");
    return {};
}

// Session, tree and file on @ch; the file's id in *file.
struct Opened {
    std::unique_ptr<Session> session;
    std::optional<Tree> tree;
    FileId file{};
};

Result<Opened> open_file(Run &run, Connection &conn)
{
    Opened o;
    auto s = Session::setup(conn, run.opt().creds, run.opt().session);
    if (!s)
        return s.error();
    o.session = std::move(*s);
    run.step("SESSION_SETUP as " + run.opt().creds.user + ": SessionId " +
             std::to_string(o.session->id()) +
             (o.session->signing() ? ", signed" : ", unsigned"));
    auto t = Tree::connect(*o.session, conn, run.unc());
    if (!t)
        return t.error();
    o.tree = *t;
    run.step("TREE_CONNECT " + run.unc() + ": TreeId " +
             std::to_string(t->id()));
    auto f = run.create(*o.tree);
    if (!f)
        return f.error();
    o.file = *f;
    return o;
}

Status close_all(Run &run, Opened &o, Connection &conn)
{
    if (auto st = o.tree->close(o.file); !st)
        return st;
    if (auto st = o.tree->disconnect(); !st)
        return st;
    if (auto st = logoff(*o.session, conn); !st)
        return st;
    run.step("CLOSE, TREE_DISCONNECT, LOGOFF");
    return {};
}

// The RDMA channels the dialect allows, each once.
Status rdma_channels(Run &run, Client &c, Tree tree, const FileId &file)
{
    if (auto st = rdma_rounds(run, c, tree, file, CHANNEL_RDMA_V1); !st)
        return st;
    if (!channel_allowed(CHANNEL_RDMA_V1_INVALIDATE,
                         tree.connection().dialect()))
        return {};
    return rdma_rounds(run, c, tree, file, CHANNEL_RDMA_V1_INVALIDATE);
}

// A session on the first connection: inline I/O, and on SMB Direct RDMA
// I/O with each channel.
Status check_session(Run &run)
{
    auto ch = run.open(run.opt().carrier);
    if (!ch)
        return ch.error();
    auto o = open_file(run, *ch->conn);
    if (!o)
        return o.error();
    if (auto st = inline_round(run, *o->tree, o->file, kOffset); !st)
        return st;
    if (ch->rdma)
        if (auto st = rdma_channels(run, *ch->rdma, *o->tree, o->file); !st)
            return st;
    return close_all(run, *o, *ch->conn);
}

// Windows' flow: the session over TCP, then an SMB Direct connection
// binds to it and moves the data by RDMA; TCP reads back what RDMA wrote.
Status check_windows_flow(Run &run)
{
    auto tcp = run.open(Carrier::tcp);
    if (!tcp)
        return tcp.error();
    auto o = open_file(run, *tcp->conn);
    if (!o)
        return o.error();
    auto rdma = run.open(Carrier::rdma);
    if (!rdma)
        return rdma.error();
    if (auto st = o->session->bind(*rdma->conn, run.opt().creds); !st)
        return st;
    run.step("binding SESSION_SETUP on SMB Direct: a second channel, "
             "signed with its own key");
    Tree over_rdma = o->tree->on(*rdma->conn);
    if (auto st = rdma_channels(run, *rdma->rdma, over_rdma, o->file); !st)
        return st;
    auto r = o->tree->read(o->file, kOffset, kInlineSize);
    if (!r)
        return r.error();
    if (auto st = same_as_written(run.seed(), kOffset, *r, kInlineSize); !st)
        return st;
    run.step("READ over TCP of what RDMA wrote");
    return close_all(run, *o, *tcp->conn);
}

// CREATE, WRITE, READ and CLOSE as one related compound; then two READs
// as an unrelated one.
Status check_compound(Run &run)
{
    auto ch = run.open(run.opt().carrier);
    if (!ch)
        return ch.error();
    Connection &conn = *ch->conn;
    auto s = Session::setup(conn, run.opt().creds, run.opt().session);
    if (!s)
        return s.error();
    auto t = Tree::connect(**s, conn, run.unc());
    if (!t)
        return t.error();
    Tree &tree = *t;

    CreateRequest cr = run.create_request();
    cr.hdr = tree.header(SMB2_CREATE);
    auto create = build_create(cr);
    if (!create)
        return create.error();
    std::vector<uint8_t> data(kInlineSize);
    fill_file_pattern(run.seed(), kOffset, data);
    WriteRequest w;
    w.hdr = tree.header(SMB2_WRITE, data.size());
    w.length = uint32_t(data.size());
    w.offset = kOffset;
    w.file_id = kRelatedFile;
    w.data = data;
    ReadRequest r;
    r.hdr = tree.header(SMB2_READ, kInlineSize);
    r.length = kInlineSize;
    r.offset = kOffset;
    r.file_id = kRelatedFile;
    std::vector<std::vector<uint8_t>> chain;
    chain.push_back(std::move(*create));
    chain.push_back(build_write_request(w));
    chain.push_back(build_read_request(r));
    chain.push_back(build_close(tree.header(SMB2_CLOSE), kRelatedFile));
    auto ids = conn.send_compound(std::move(chain), true);
    if (!ids)
        return ids.error();
    static constexpr uint16_t kCommands[] = {SMB2_CREATE, SMB2_WRITE, SMB2_READ,
                                             SMB2_CLOSE};
    for (size_t i = 0; i < ids->size(); i++) {
        auto got = conn.response((*ids)[i]);
        if (!got)
            return got.error();
        if (auto st = smb2_check_status(got->bytes, kCommands[i]); !st)
            return st;
        if (kCommands[i] != SMB2_READ)
            continue;
        ReadResponse rr;
        if (Rule rule = parse_read_response(got->bytes, rr); rule != Rule::ok)
            return make_error(Errc::protocol,
                              std::string("READ response: ") + rule_text(rule));
        if (auto st =
                same_as_written(run.seed(), kOffset, rr.data, kInlineSize);
            !st)
            return st;
    }
    run.step("related compound CREATE, WRITE, READ, CLOSE: " +
             std::to_string(kInlineSize) + " bytes read back");
    if (auto st = tree.disconnect(); !st)
        return st;
    return logoff(**s, conn);
}

} // namespace

const std::vector<Smb2Check> &smb2_checks()
{
    static const std::vector<Smb2Check> checks = {
        {"session",
         "a signed session: inline WRITE/READ, and over SMB Direct RDMA "
         "WRITE/READ with each channel",
         check_session},
        {"windows-flow",
         "a session over TCP, an SMB Direct channel binding to it, RDMA "
         "I/O on it, read back over TCP",
         check_windows_flow},
        {"compound",
         "related CREATE, WRITE, READ, CLOSE in one compound request",
         check_compound},
    };
    return checks;
}

Status run_smb2_check(std::string_view name, const Smb2CheckOptions &opt,
                      const Step &step)
{
    for (const Smb2Check &c : smb2_checks())
        if (name == c.name) {
            Smb2Run run(opt, step);
            return c.run(run);
        }
    return make_error(Errc::invalid_argument,
                      "no check named '" + std::string(name) + "'");
}

} // namespace smbd::client
