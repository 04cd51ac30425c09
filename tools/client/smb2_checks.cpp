#include "smb2_checks.h"

#include <arpa/inet.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

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
    Smb2Run(std::string_view check, const Smb2CheckOptions &opt,
            const Step &step)
        : opt_(opt), step_(step)
    {
        neg_ = opt.smb2;
        // one ClientGuid for every channel of the run
        random_bytes(neg_.client_guid);
        // a file of its own: a check may leave one a server keeps busy
        file_ = "smb2-" + std::string(check) + "-" + std::to_string(getpid());
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
    const Smb2NegotiateOptions &negotiate_options() const { return neg_; }

    // A connection negotiated with the run's options, or with @neg; over
    // SMB Direct with @smbd's MS-SMBD parameters, if given.
    Result<Channel> open(Carrier carrier,
                         const Smb2NegotiateOptions *neg = nullptr,
                         const ConnectOptions *smbd = nullptr)
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
            ConnectOptions co = smbd ? *smbd : ConnectOptions{};
            co.timeout = opt_.timeout;
            auto c = Client::connect(opt_.addr, opt_.rdma_port, co);
            if (!c)
                return c.error();
            ch.rdma = std::move(*c);
            if (auto st = ch.rdma->negotiate(); !st)
                return st.error();
            step("SMB Direct negotiated MaxReadWriteSize " +
                 std::to_string(ch.rdma->smbd_response().max_read_write_size));
            t = ch.rdma.get();
        }
        ch.conn = std::make_unique<Connection>(*t, opt_.timeout);
        auto n = ch.conn->negotiate(neg ? *neg : neg_);
        if (!n)
            return n.error();
        step(std::string(carrier == Carrier::tcp ? "TCP" : "SMB Direct") +
             " connection negotiated SMB " + dialect_text(n->dialect) +
             (n->security_mode & SMB2_NEGOTIATE_SIGNING_REQUIRED
                  ? ", signing required"
                  : ", signing enabled"));
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

// RdmaIo over @ch's SMB Direct connection for @file: @slots transfers in
// flight, each of up to @max_size bytes, with @channel.
Result<std::unique_ptr<RdmaIo>> channel_io(Channel &ch, const FileId &file,
                                           uint32_t channel, uint32_t max_size,
                                           uint32_t slots = 1)
{
    IoOptions io;
    io.dialect = ch.conn->dialect();
    io.channel = channel;
    io.slots = slots;
    io.max_size = max_size;
    io.file_id = file;
    return RdmaIo::create(*ch.rdma, io);
}

// The share's root directory, opened to watch (CHANGE_NOTIFY).
Result<CreateResponse> open_root(Tree &tree)
{
    CreateRequest root;
    root.desired_access = FILE_LIST_DIRECTORY;
    root.file_attributes = 0;
    root.disposition = FILE_OPEN;
    root.options = FILE_DIRECTORY_FILE;
    return tree.create(root);
}

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

// An inline READ at @offset: the bytes written there.
Status read_back(Run &run, Tree &tree, const FileId &file, uint64_t offset)
{
    auto r = tree.read(file, offset, kInlineSize);
    if (!r)
        return r.error();
    return same_as_written(run.seed(), offset, *r, kInlineSize);
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
    if (auto st = read_back(run, tree, file, offset); !st)
        return st;
    run.step("inline WRITE and READ of " + std::to_string(kInlineSize) +
             " bytes at " + std::to_string(offset));
    return {};
}

// Write-read rounds over RDMA with @channel through @c, a channel of
// @tree's session.
Status rdma_rounds(Run &run, Client &c, Tree tree, const FileId &file,
                   uint32_t channel, uint32_t size)
{
    TreeIoPath path(tree);
    IoOptions io;
    io.dialect = tree.connection().dialect();
    io.channel = channel;
    io.max_size = size;
    io.file_id = file;
    auto rio = RdmaIo::create(c, io, &path);
    if (!rio)
        return rio.error();
    FileOptions f;
    f.seed = run.seed();
    WriteReadOptions wr;
    wr.size = size;
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

// A session and its tree on @conn, and the file a check opened, if any.
struct Opened {
    std::unique_ptr<Session> session;
    std::optional<Tree> tree;
    FileId file{};
};

Result<Opened> open_tree(Run &run, Connection &conn)
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
    return o;
}

// The same with the check's file created.
Result<Opened> open_file(Run &run, Connection &conn)
{
    auto o = open_tree(run, conn);
    if (!o)
        return o.error();
    auto f = run.create(*o->tree);
    if (!f)
        return f.error();
    o->file = *f;
    return o;
}

// TREE_DISCONNECT and LOGOFF on @conn.
Status leave(Opened &o, Connection &conn)
{
    if (auto st = o.tree->disconnect(); !st)
        return st;
    return logoff(*o.session, conn);
}

Status close_all(Run &run, Opened &o, Connection &conn)
{
    if (auto st = o.tree->close(o.file); !st)
        return st;
    if (auto st = leave(o, conn); !st)
        return st;
    run.step("CLOSE, TREE_DISCONNECT, LOGOFF");
    return {};
}

// The RDMA channels the dialect allows, each once.
Status rdma_channels(Run &run, Client &c, Tree tree, const FileId &file)
{
    uint32_t size = run.opt().size;
    if (auto st = rdma_rounds(run, c, tree, file, CHANNEL_RDMA_V1, size); !st)
        return st;
    if (!channel_allowed(CHANNEL_RDMA_V1_INVALIDATE,
                         tree.connection().dialect()))
        return {};
    return rdma_rounds(run, c, tree, file, CHANNEL_RDMA_V1_INVALIDATE, size);
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

// The scenario's cue, once @what is done: a line on standard input.
Status await_cue(Run &run, const std::string &what)
{
    run.step(what + "; waiting for a line on standard input");
    char line[64];
    if (!std::fgets(line, sizeof(line), stdin))
        return make_error(Errc::invalid_argument,
                          "standard input ended before the line");
    return {};
}

// RDMA WRITE and READ on @ch as large as its NEGOTIATE allows (at most
// 8 MiB, the largest SMB2 transfer a client issues): a server must serve
// every size it offers, whatever memory it moves them through.
Status max_io_rounds(Run &run, Channel &ch, Tree tree, const FileId &file)
{
    const auto &neg = ch.conn->negotiated();
    uint32_t size =
        std::min({neg.max_read_size, neg.max_write_size, uint32_t{8} << 20});
    run.step("MaxReadSize " + std::to_string(neg.max_read_size) +
             ", MaxWriteSize " + std::to_string(neg.max_write_size));
    return rdma_rounds(run, *ch.rdma, tree, file, CHANNEL_RDMA_V1, size);
}

Status check_max_io(Run &run)
{
    auto ch = run.open(Carrier::rdma);
    if (!ch)
        return ch.error();
    auto o = open_file(run, *ch->conn);
    if (!o)
        return o.error();
    if (auto st = max_io_rounds(run, *ch, *o->tree, o->file); !st)
        return st;
    return close_all(run, *o, *ch->conn);
}

// max-io, then, after a line on standard input (the scenario changes the
// server's configuration meanwhile), a second SMB Direct channel binds to
// the session and moves transfers as large as its own NEGOTIATE allows:
// the binding goes to the process serving the session, whose memory for
// them was sized before the change.
Status check_bind_max_io_on_cue(Run &run)
{
    auto first = run.open(Carrier::rdma);
    if (!first)
        return first.error();
    auto o = open_file(run, *first->conn);
    if (!o)
        return o.error();
    if (auto st = max_io_rounds(run, *first, *o->tree, o->file); !st)
        return st;
    if (auto st = await_cue(run, "session up"); !st)
        return st;
    auto second = run.open(Carrier::rdma);
    if (!second)
        return second.error();
    if (auto st = o->session->bind(*second->conn, run.opt().creds); !st)
        return st;
    run.step("binding SESSION_SETUP on a second SMB Direct channel");
    if (auto st =
            max_io_rounds(run, *second, o->tree->on(*second->conn), o->file);
        !st)
        return st;
    return close_all(run, *o, *first->conn);
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
    if (auto st = read_back(run, *o->tree, o->file, kOffset); !st)
        return st;
    run.step("READ over TCP of what RDMA wrote");
    return close_all(run, *o, *tcp->conn);
}

// CREATE, WRITE, READ and CLOSE as one related compound.
Status check_compound(Run &run)
{
    auto ch = run.open(run.opt().carrier);
    if (!ch)
        return ch.error();
    Connection &conn = *ch->conn;
    auto o = open_tree(run, conn);
    if (!o)
        return o.error();
    Tree &tree = *o->tree;

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
        auto got = final_response(conn, (*ids)[i], kCommands[i]);
        if (!got)
            return got.error();
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
    return leave(*o, conn);
}

// A READ or WRITE of @size bytes at @offset whose data @slot of @io holds,
// described as RdmaIo describes it, for a compound.
Result<std::vector<uint8_t>> rdma_request(RdmaIo &io, const Tree &tree,
                                          const FileId &file, uint32_t slot,
                                          bool write, uint64_t offset,
                                          uint32_t size)
{
    auto descs = io.describe(slot, size);
    if (!descs)
        return descs.error();
    if (write) {
        WriteRequest w;
        w.hdr = tree.header(SMB2_WRITE, size);
        w.offset = offset;
        w.file_id = file;
        w.channel = io.options().channel;
        w.remaining_bytes = size;
        w.channel_info = *descs;
        return build_write_request(w);
    }
    ReadRequest r;
    r.hdr = tree.header(SMB2_READ, size);
    r.length = size;
    r.offset = offset;
    r.file_id = file;
    r.channel = io.options().channel;
    r.channel_info = *descs;
    return build_read_request(r);
}

ReadRequest inline_read(const Tree &tree, const FileId &file, uint64_t offset,
                        uint32_t size)
{
    ReadRequest r;
    r.hdr = tree.header(SMB2_READ, size);
    r.length = size;
    r.offset = offset;
    r.file_id = file;
    return r;
}

// The response to a READ whose data RDMA brought into @slot: all of it
// there, the file's bytes at @offset, nothing written around it.
Status rdma_read_answered(Run &run, const ReceivedPdu &got, RdmaIo &io,
                          uint32_t slot, uint64_t offset, uint32_t size)
{
    if (auto st = smb2_check_status(got.bytes, SMB2_READ); !st)
        return st;
    ReadResponse r;
    if (Rule rule = parse_read_response(got.bytes, r); rule != Rule::ok)
        return make_error(Errc::protocol,
                          std::string("READ response: ") + rule_text(rule));
    if (r.data_length != 0 || r.data_remaining != size)
        return make_error(Errc::mismatch,
                          "a READ over RDMA answered DataLength " +
                              std::to_string(r.data_length) +
                              " DataRemaining " +
                              std::to_string(r.data_remaining) +
                              ", expected 0 and " + std::to_string(size));
    uint64_t at = offset;
    for (std::span<uint8_t> piece : io.data(slot, size)) {
        if (auto bad = file_pattern_mismatch(run.seed(), at, piece))
            return make_error(Errc::mismatch,
                              "the RDMA READ at " + std::to_string(offset) +
                                  " brought other bytes than the file's "
                                  "(first at " +
                                  std::to_string(at + *bad) + ")");
        at += piece.size();
    }
    return io.check_untouched(slot, size);
}

Status inline_read_answered(Run &run, const ReceivedPdu &got, uint64_t offset,
                            uint32_t size)
{
    if (auto st = smb2_check_status(got.bytes, SMB2_READ); !st)
        return st;
    ReadResponse r;
    if (Rule rule = parse_read_response(got.bytes, r); rule != Rule::ok)
        return make_error(Errc::protocol,
                          std::string("READ response: ") + rule_text(rule));
    return same_as_written(run.seed(), offset, r.data, size);
}

// Two-element compounds at the edges of one message of @limit bytes: a
// READ of each size (0: an ECHO), and which of the two is refused.
struct FragmentedCompound {
    const char *what;
    std::vector<uint32_t> reads;
    bool first_refused;
    bool last_refused;
};

std::vector<FragmentedCompound> fragmented_compounds(uint32_t limit)
{
    // a READ response is 80 bytes and its data, padded to 8 in a compound:
    // 1001 bytes make 1081, padded to 1088
    constexpr uint32_t kHead = SMB2_HDR_SIZE + READ_RESP_FIXED;
    const uint32_t rest = limit - 1088 - kHead;
    // an ERROR response takes 80 bytes padded (an ECHO response 72)
    const uint32_t before_echo = limit - 80 - kHead;
    return {
        {"two 64 KiB READs, which fit alone: the second refused",
         {kInlineSize, kInlineSize},
         false,
         true},
        {"READs of 1001 bytes (padded) and of the rest of the message: "
         "both answered",
         {1001, rest},
         false,
         false},
        {"the same with one byte more: the second refused",
         {1001, rest + 1},
         false,
         true},
        {"a READ that leaves an ECHO the room of an error answer: both "
         "answered",
         {before_echo, 0},
         false,
         false},
        {"a READ that leaves the ECHO after it 40 bytes: refused, the ECHO "
         "answered",
         {before_echo + 40, 0},
         true,
         false},
    };
}

// A client that reassembles no more than MS-SMBD's least MaxFragmentedSize
// (recent Linux clients take 173910 bytes): every response must fit it, or
// be refused, never be sent too large.
Status check_max_fragmented(Run &run)
{
    constexpr uint32_t kLimit = SMBD_MIN_FRAGMENTED_SIZE;
    ConnectOptions co;
    co.max_fragmented_size = kLimit;
    auto ch = run.open(Carrier::rdma, nullptr, &co);
    if (!ch)
        return ch.error();
    Connection &conn = *ch->conn;
    auto o = open_file(run, conn);
    if (!o)
        return o.error();
    Tree &tree = *o->tree;
    for (uint64_t at = kOffset; at < kOffset + 2 * uint64_t{kLimit};
         at += kInlineSize) {
        std::vector<uint8_t> data(kInlineSize);
        fill_file_pattern(run.seed(), at, data);
        if (auto w = tree.write(o->file, at, data); !w)
            return w.error();
    }
    // the SMB2 header and the READ response's fixed part
    const uint32_t fits = kLimit - SMB2_HDR_SIZE - READ_RESP_FIXED;
    auto r = tree.read(o->file, kOffset, fits);
    if (!r)
        return r.error();
    if (auto st = same_as_written(run.seed(), kOffset, *r, fits); !st)
        return st;
    run.step("inline READ of " + std::to_string(fits) +
             " bytes: a response of exactly " + std::to_string(kLimit));
    if (auto got = tree.call(
            build_read_request(inline_read(tree, o->file, kOffset, fits + 1)),
            NT_STATUS_INVALID_PARAMETER);
        !got)
        return got.error();
    run.step("one byte more: STATUS_INVALID_PARAMETER");

    // compounds, whose responses travel as one message
    for (const FragmentedCompound &c : fragmented_compounds(kLimit)) {
        std::vector<std::vector<uint8_t>> chain;
        uint64_t at = kOffset;
        for (uint32_t size : c.reads) {
            chain.push_back(
                size ? build_read_request(inline_read(tree, o->file, at, size))
                     : build_echo(tree.header(SMB2_ECHO)));
            at += size;
        }
        auto ids = conn.send_compound(std::move(chain), false);
        if (!ids)
            return ids.error();
        at = kOffset;
        for (size_t i = 0; i < ids->size(); i++) {
            uint32_t size = c.reads[i];
            bool refused = i == 0 ? c.first_refused : c.last_refused;
            auto got = final_response(
                conn, (*ids)[i], size ? SMB2_READ : SMB2_ECHO,
                refused ? NT_STATUS_INVALID_PARAMETER : NT_STATUS_SUCCESS);
            if (!got)
                return Error{got.error().code,
                             std::string(c.what) + ": " + got.error().message};
            if (size && !refused)
                if (auto st = inline_read_answered(run, *got, at, size); !st)
                    return st;
            at += size;
        }
        run.step(c.what);
    }
    if (auto st = read_back(run, tree, o->file, kOffset + kInlineSize); !st)
        return st;
    run.step("the connection goes on: a READ answered");
    return close_all(run, *o, conn);
}

// Compounds that mix RDMA and inline elements (MS-SMB2 3.3.5.2.7): each
// element's data where its own channel says, RDMA in any position.
Status check_compound_rdma(Run &run)
{
    auto ch = run.open(Carrier::rdma);
    if (!ch)
        return ch.error();
    Connection &conn = *ch->conn;
    auto o = open_file(run, conn);
    if (!o)
        return o.error();
    Tree &tree = *o->tree;
    const uint64_t a = kOffset, b = kOffset + (1u << 20),
                   c = kOffset + (2u << 20);
    for (uint64_t at : {a, b}) {
        std::vector<uint8_t> data(kInlineSize);
        fill_file_pattern(run.seed(), at, data);
        if (auto w = tree.write(o->file, at, data); !w)
            return w.error();
    }
    auto rio = channel_io(*ch, o->file, CHANNEL_RDMA_V1, kInlineSize, 2);
    if (!rio)
        return rio.error();
    RdmaIo &rdma = **rio;
    const uint32_t n = kInlineSize;

    // an RDMA READ, then an inline one: the second's data inline, not
    // over the first's descriptors
    rdma.poison(0, n);
    auto first = rdma_request(rdma, tree, o->file, 0, false, a, n);
    if (!first)
        return first.error();
    auto ids = conn.send_compound(
        {*first, build_read_request(inline_read(tree, o->file, b, n))}, false);
    if (!ids)
        return ids.error();
    auto r0 = conn.response((*ids)[0]);
    if (!r0)
        return r0.error();
    if (auto st = rdma_read_answered(run, *r0, rdma, 0, a, n); !st)
        return st;
    auto r1 = conn.response((*ids)[1]);
    if (!r1)
        return r1.error();
    if (auto st = inline_read_answered(run, *r1, b, n); !st)
        return st;
    run.step("compound of an RDMA READ and an inline READ");

    // two RDMA READs: the first is no last element
    rdma.poison(0, n);
    rdma.poison(1, n);
    auto q0 = rdma_request(rdma, tree, o->file, 0, false, a, n);
    auto q1 = rdma_request(rdma, tree, o->file, 1, false, b, n);
    if (!q0 || !q1)
        return (!q0 ? q0 : q1).error();
    ids = conn.send_compound({*q0, *q1}, false);
    if (!ids)
        return ids.error();
    for (uint32_t i = 0; i < 2; i++) {
        auto got = conn.response((*ids)[i]);
        if (!got)
            return got.error();
        if (auto st = rdma_read_answered(run, *got, rdma, i, i ? b : a, n); !st)
            return st;
    }
    run.step("compound of two RDMA READs");

    // an RDMA WRITE, then an RDMA READ of what it wrote
    uint64_t at = c;
    for (std::span<uint8_t> piece : rdma.data(0, n)) {
        fill_file_pattern(run.seed(), at, piece);
        at += piece.size();
    }
    rdma.poison(1, n);
    auto w = rdma_request(rdma, tree, o->file, 0, true, c, n);
    auto rd = rdma_request(rdma, tree, o->file, 1, false, c, n);
    if (!w || !rd)
        return (!w ? w : rd).error();
    ids = conn.send_compound({*w, *rd}, false);
    if (!ids)
        return ids.error();
    auto wr = final_response(conn, (*ids)[0], SMB2_WRITE);
    if (!wr)
        return wr.error();
    WriteResponse wresp;
    if (parse_write_response(wr->bytes, wresp) != Rule::ok || wresp.count != n)
        return make_error(Errc::mismatch,
                          "the RDMA WRITE in the compound wrote " +
                              std::to_string(wresp.count) + " of " +
                              std::to_string(n) + " bytes");
    auto rr = conn.response((*ids)[1]);
    if (!rr)
        return rr.error();
    if (auto st = rdma_read_answered(run, *rr, rdma, 1, c, n); !st)
        return st;
    run.step("compound of an RDMA WRITE and an RDMA READ of its bytes");
    return close_all(run, *o, conn);
}

// final_response() to @id, a @command request @what describes, as a step.
Result<ReceivedPdu> answered(Run &run, Connection &conn, uint64_t id,
                             uint16_t command, uint32_t want,
                             const std::string &what)
{
    auto got = final_response(conn, id, command, want);
    if (!got)
        return Error{got.error().code, what + ": " + got.error().message};
    run.step(what + ": " + nt_status_text(want));
    return got;
}

// The pool held whole: a compound whose RDMA WRITE pulled MaxWriteSize
// bytes (all of a pool that small) and whose CHANGE_NOTIFY waits last, so
// that the request and its data stay. An RDMA WRITE then waits for pool
// memory: it goes async, and CANCEL ends it; one left waiting is
// answered STATUS_INSUFFICIENT_RESOURCES in time. Once the compound is
// cancelled an RDMA READ reads back what the compound's WRITE wrote.
Status check_pool_wait(Run &run)
{
    auto ch = run.open(Carrier::rdma);
    if (!ch)
        return ch.error();
    Connection &conn = *ch->conn;
    const auto &neg = conn.negotiated();
    const uint32_t hold =
        std::min({neg.max_write_size, neg.max_read_size, uint32_t{8} << 20});
    const uint32_t n = 1u << 20;
    auto o = open_file(run, conn);
    if (!o)
        return o.error();
    Tree &tree = *o->tree;
    uint64_t sid = o->session->id();
    auto dir = open_root(tree);
    if (!dir)
        return dir.error();
    auto rio = channel_io(*ch, o->file, CHANNEL_RDMA_V1, hold, 2);
    if (!rio)
        return rio.error();
    RdmaIo &rdma = **rio;

    uint64_t at = 0;
    for (std::span<uint8_t> piece : rdma.data(0, hold)) {
        fill_file_pattern(run.seed(), at, piece);
        at += piece.size();
    }
    auto w = rdma_request(rdma, tree, o->file, 0, true, 0, hold);
    if (!w)
        return w.error();
    auto ids = conn.send_compound(
        {*w, build_change_notify(tree.header(SMB2_CHANGE_NOTIFY), dir->file_id,
                                 FILE_NOTIFY_CHANGE_FILE_NAME, 4096)},
        false);
    if (!ids)
        return ids.error();
    if (auto a = conn.wait_interim((*ids)[1]); !a)
        return a.error();
    run.step("a compound of an RDMA WRITE of " + std::to_string(hold) +
             " bytes and a CHANGE_NOTIFY that waits");

    // WRITEs, whose RDMA READ is the first thing they wait for (a READ
    // reads the file first, which a CANCEL cannot stop)
    auto write = [&]() -> Result<uint64_t> {
        rdma.poison(1, n);
        auto r = rdma_request(rdma, tree, o->file, 1, true, 0, n);
        if (!r)
            return r.error();
        return conn.send(*r);
    };
    auto first = write();
    if (!first)
        return first.error();
    if (auto a = conn.wait_interim(*first); !a)
        return a.error();
    if (auto st = conn.cancel(*first, sid); !st)
        return st;
    if (auto st = answered(run, conn, *first, SMB2_WRITE, NT_STATUS_CANCELLED,
                           "an RDMA WRITE waiting for pool memory, "
                           "cancelled");
        !st)
        return st.error();
    auto second = write();
    if (!second)
        return second.error();
    if (auto st = answered(run, conn, *second, SMB2_WRITE,
                           NT_STATUS_INSUFFICIENT_RESOURCES,
                           "an RDMA WRITE left waiting for pool memory");
        !st)
        return st.error();

    if (auto st = conn.cancel((*ids)[1], sid); !st)
        return st;
    if (auto st = answered(run, conn, (*ids)[1], SMB2_CHANGE_NOTIFY,
                           NT_STATUS_CANCELLED, "the compound's CHANGE_NOTIFY");
        !st)
        return st.error();
    if (auto wr = final_response(conn, (*ids)[0], SMB2_WRITE); !wr)
        return wr.error();
    // neither refused WRITE wrote a byte
    rdma.poison(1, n);
    auto r = rdma_request(rdma, tree, o->file, 1, false, 0, n);
    if (!r)
        return r.error();
    auto last = conn.send(*r);
    if (!last)
        return last.error();
    auto rr = conn.response(*last);
    if (!rr)
        return rr.error();
    if (auto st = rdma_read_answered(run, *rr, rdma, 1, 0, n); !st)
        return st;
    run.step("the pool free again: an RDMA READ of what the compound's "
             "WRITE wrote");
    if (auto st = tree.close(dir->file_id); !st)
        return st;
    return close_all(run, *o, conn);
}

// A session over TCP, then an SMB Direct connection negotiated with
// @channel whose binding to it must fail with STATUS_USER_SESSION_DELETED;
// @what names the case.
Status binding_refused(Run &run, const Smb2NegotiateOptions &channel,
                       const std::string &what)
{
    auto tcp = run.open(Carrier::tcp);
    if (!tcp)
        return tcp.error();
    auto s = Session::setup(*tcp->conn, run.opt().creds, run.opt().session);
    if (!s)
        return s.error();
    auto rdma = run.open(Carrier::rdma, &channel);
    if (!rdma)
        return rdma.error();
    auto st = (*s)->bind(*rdma->conn, run.opt().creds);
    if (st)
        return make_error(Errc::mismatch, what + " was bound to the session");
    if (st.error().message.find(nt_status_text(
            NT_STATUS_USER_SESSION_DELETED)) == std::string::npos)
        return make_error(Errc::mismatch,
                          "binding " + what +
                              " failed otherwise: " + st.error().message);
    run.step("binding " + what + ": STATUS_USER_SESSION_DELETED");
    return logoff(**s, *tcp->conn);
}

// Windows' flow with another ClientGuid on the binding channel: MS-SMB2
// 3.3.5.5.2 answers STATUS_USER_SESSION_DELETED.
Status check_bind_wrong_guid(Run &run)
{
    Smb2NegotiateOptions other = run.negotiate_options();
    other.client_guid[0] ^= 0xff;
    return binding_refused(run, other, "a channel with another ClientGuid");
}

// A TCP session no channel may bind to (its dialect below SMB 3, the
// server's multichannel off, a guest's): smbd does not register it with
// the kernel, which answers the SMB Direct channel binding to it itself
// (the scenario checks the driver's count).
Status check_bind_unbindable(Run &run)
{
    Smb2NegotiateOptions smb3 = run.negotiate_options();
    smb3.dialects = {SMB2_DIALECT_300, SMB2_DIALECT_302, SMB2_DIALECT_311};
    return binding_refused(run, smb3,
                           "an SMB Direct channel to an unbindable session");
}

// The reverse of Windows' flow: the session over SMB Direct, then a TCP
// connection of the same ClientGuid binds to it, which it can only in the
// smbd that holds the session.
Status check_bind_tcp(Run &run)
{
    auto rdma = run.open(Carrier::rdma);
    if (!rdma)
        return rdma.error();
    auto o = open_file(run, *rdma->conn);
    if (!o)
        return o.error();
    if (auto st = inline_round(run, *o->tree, o->file, kOffset); !st)
        return st;
    auto tcp = run.open(Carrier::tcp);
    if (!tcp)
        return tcp.error();
    if (auto st = o->session->bind(*tcp->conn, run.opt().creds); !st)
        return st;
    run.step("binding SESSION_SETUP over TCP to the SMB Direct session");
    Tree over_tcp = o->tree->on(*tcp->conn);
    if (auto st = read_back(run, over_tcp, o->file, kOffset); !st)
        return st;
    run.step("READ over TCP of what SMB Direct wrote");
    return close_all(run, *o, *rdma->conn);
}

// ECHOs on @conn, an SMB Direct connection that no longer posts receives
// (Client::set_repost_receives(false)), until every receive it had posted
// took a message: then the server has no credit left to send with.
Status spend_server_credits(Run &run, Connection &conn, Client &rdma)
{
    rdma.set_repost_receives(false);
    uint32_t answered = 0;
    while (rdma.credits().recv_posted > 0) {
        std::vector<uint8_t> echo = build_echo(smb2_request_header(0, 0));
        auto id = conn.send(echo);
        if (!id)
            return id.error();
        auto got = conn.response(*id);
        // a credit message of the server's may have taken the last one
        if (!got && got.error().code == make_error_code(Errc::timeout) &&
            rdma.credits().recv_posted == 0)
            break;
        if (!got)
            return got.error();
        answered++;
    }
    run.step("the SMB Direct channel grants no more credits: " +
             std::to_string(answered) + " ECHOs answered with the last");
    return {};
}

// MS-SMB2 3.3.4.6: a lease break the client did not get on one channel is
// sent again on another. The session over SMB Direct holds a file's lease
// (read, write and handle caching) and a TCP channel; then the SMB Direct
// channel grants the server no more credits, so that nothing it sends
// there can go out, and another client opens the file: the break must come
// over TCP once the server gave up on SMB Direct (smbd waits six times its
// retransmission timeout, the kernel 30 s for credits), not be taken for
// delivered because the kernel took a copy.
Status check_break_retry(Run &run)
{
    ConnectOptions few;
    few.receive_credit_max = 16;
    auto rdma = run.open(Carrier::rdma, nullptr, &few);
    if (!rdma)
        return rdma.error();
    auto o = open_tree(run, *rdma->conn);
    if (!o)
        return o.error();
    std::array<uint8_t, 16> key{};
    random_bytes(key);
    CreateRequest cr = run.create_request();
    cr.oplock_level = SMB2_OPLOCK_LEVEL_LEASE;
    cr.contexts = lease_context_v2(key, SMB2_LEASE_RWH);
    auto leased = o->tree->create(cr);
    if (!leased)
        return leased.error();
    if (leased->lease_state != SMB2_LEASE_RWH)
        return make_error(Errc::mismatch,
                          "the server granted lease state " +
                              std::to_string(leased->lease_state.value_or(0)) +
                              ", not read, write and handle caching");
    o->file = leased->file_id;
    run.step("CREATE over SMB Direct with a lease: read, write and handle "
             "caching");
    auto tcp = run.open(Carrier::tcp);
    if (!tcp)
        return tcp.error();
    if (auto st = o->session->bind(*tcp->conn, run.opt().creds); !st)
        return st;
    Tree over_tcp = o->tree->on(*tcp->conn);
    run.step("binding SESSION_SETUP over TCP");
    if (auto st = spend_server_credits(run, *rdma->conn, *rdma->rdma); !st)
        return st;

    // another client opens the file: the lease's write caching breaks
    Smb2NegotiateOptions other = run.negotiate_options();
    other.client_guid[0] ^= 0xff;
    auto opener = run.open(Carrier::tcp, &other);
    if (!opener)
        return opener.error();
    auto p = open_tree(run, *opener->conn);
    if (!p)
        return p.error();
    CreateRequest second = run.create_request();
    second.disposition = FILE_OPEN;
    second.options = FILE_NON_DIRECTORY_FILE;
    second.hdr = p->tree->header(SMB2_CREATE);
    auto create = build_create(second);
    if (!create)
        return create.error();
    auto open_id = opener->conn->send(*create);
    if (!open_id)
        return open_id.error();
    run.step("another client's CREATE of the file, which breaks the lease");

    constexpr auto kWait = std::chrono::seconds(25);
    auto note = tcp->conn->notification(kWait);
    if (!note && note.error().code == make_error_code(Errc::timeout))
        return make_error(Errc::mismatch,
                          "no lease break over TCP within 25 s: the one sent "
                          "over the SMB Direct channel, which could not "
                          "carry it, was not sent again");
    if (!note)
        return note.error();
    auto lb = parse_lease_break(note->bytes);
    if (!lb)
        return lb.error();
    if (lb->key != key || lb->current_state != SMB2_LEASE_RWH ||
        (lb->new_state & SMB2_LEASE_WRITE_CACHING) ||
        !(lb->flags & SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED))
        return make_error(Errc::mismatch,
                          "the lease break over TCP is not the one expected: "
                          "state " +
                              std::to_string(lb->current_state) + " to " +
                              std::to_string(lb->new_state));
    run.step("the lease break came over TCP: state " +
             std::to_string(lb->current_state) + " to " +
             std::to_string(lb->new_state));
    auto ack = over_tcp.call(build_lease_break_ack(
        over_tcp.header(SMB2_OPLOCK_BREAK), key, lb->new_state));
    if (!ack)
        return ack.error();
    if (auto r = parse_lease_break_response(ack->bytes);
        !r || r->key != key || r->state != lb->new_state)
        return r ? make_error(Errc::mismatch,
                              "the lease break acknowledgment was answered "
                              "for another lease or state")
                 : r.error();
    auto opened = final_response(*opener->conn, *open_id, SMB2_CREATE);
    if (!opened)
        return opened.error();
    auto second_file = parse_create_response(opened->bytes);
    if (!second_file)
        return second_file.error();
    run.step("acknowledged over TCP; the other client's CREATE answered");
    if (auto st = p->tree->close(second_file->file_id); !st)
        return st;
    if (auto st = leave(*p, *opener->conn); !st)
        return st;
    o->tree.emplace(over_tcp);
    return close_all(run, *o, *tcp->conn);
}

// A durable handle (a lease and DH2Q) left behind by an SMB Direct
// connection that ends without a word: smbd keeps the open for the client
// to reclaim, and the parent forks its scavenger to wait out the timeout
// (make e2e's smb2-scavenger-device looks at what that process holds).
Status check_durable_disconnect(Run &run)
{
    auto ch = run.open(Carrier::rdma);
    if (!ch)
        return ch.error();
    auto o = open_tree(run, *ch->conn);
    if (!o)
        return o.error();
    std::array<uint8_t, 16> key{}, create_guid{};
    random_bytes(key);
    random_bytes(create_guid);
    CreateRequest cr = run.create_request();
    // a handle to keep: no delete on close
    cr.options = FILE_NON_DIRECTORY_FILE;
    cr.oplock_level = SMB2_OPLOCK_LEVEL_LEASE;
    cr.contexts =
        chain_create_contexts({lease_context_v2(key, SMB2_LEASE_RWH),
                               durable_context_v2(create_guid, 60000)});
    auto c = o->tree->create(cr);
    if (!c)
        return c.error();
    if (!c->durable_timeout)
        return make_error(Errc::mismatch,
                          "the server granted no durable handle");
    run.step("CREATE over SMB Direct with a lease and a durable handle, "
             "kept for " +
             std::to_string(*c->durable_timeout) + " ms");
    ch->rdma->close();
    run.step("the SMB Direct connection closed without CLOSE or LOGOFF");
    return {};
}

// A request that waits (CHANGE_NOTIFY on the share's root): its interim
// response, then a signed CANCEL by its AsyncId (the AES-GMAC nonce marks
// it), then its final response, STATUS_CANCELLED.
Status check_cancel(Run &run)
{
    auto ch = run.open(run.opt().carrier);
    if (!ch)
        return ch.error();
    Connection &conn = *ch->conn;
    auto o = open_tree(run, conn);
    if (!o)
        return o.error();
    Tree &tree = *o->tree;
    auto dir = open_root(tree);
    if (!dir)
        return dir.error();
    std::vector<uint8_t> notify = build_change_notify(
        tree.header(SMB2_CHANGE_NOTIFY), dir->file_id,
        FILE_NOTIFY_CHANGE_FILE_NAME | FILE_NOTIFY_CHANGE_DIR_NAME, 4096);
    auto id = conn.send(notify);
    if (!id)
        return id.error();
    auto async = conn.wait_interim(*id);
    if (!async)
        return async.error();
    run.step("CHANGE_NOTIFY went async: AsyncId " + std::to_string(*async));
    if (auto st = conn.cancel(*id, o->session->id()); !st)
        return st;
    if (auto st = answered(run, conn, *id, SMB2_CHANGE_NOTIFY,
                           NT_STATUS_CANCELLED, "the cancelled CHANGE_NOTIFY");
        !st)
        return st.error();
    if (auto st = tree.close(dir->file_id); !st)
        return st;
    return leave(*o, conn);
}

// A client with a TCP session opens a new session over SMB Direct with
// the same ClientGuid, as Windows (one ClientGuid per machine) and a
// reconnecting Linux client do: the smbd that holds the ClientGuid serves
// that session too, so that another TCP connection, which Samba passes to
// that smbd by its ClientGuid, binds to it.
Status check_rdma_after_tcp(Run &run)
{
    auto tcp = run.open(Carrier::tcp);
    if (!tcp)
        return tcp.error();
    auto first = open_tree(run, *tcp->conn);
    if (!first)
        return first.error();
    auto rdma = run.open(Carrier::rdma);
    if (!rdma)
        return rdma.error();
    auto o = open_file(run, *rdma->conn);
    if (!o)
        return o.error();
    if (auto st = inline_round(run, *o->tree, o->file, kOffset); !st)
        return st;
    auto tcp2 = run.open(Carrier::tcp);
    if (!tcp2)
        return tcp2.error();
    if (auto st = o->session->bind(*tcp2->conn, run.opt().creds); !st)
        return st;
    run.step("binding SESSION_SETUP over a second TCP connection to the "
             "SMB Direct session");
    Tree over_tcp = o->tree->on(*tcp2->conn);
    if (auto st = read_back(run, over_tcp, o->file, kOffset); !st)
        return st;
    run.step("READ over TCP of what SMB Direct wrote");
    if (auto st = close_all(run, *o, *rdma->conn); !st)
        return st;
    return logoff(*first->session, *tcp->conn);
}

// rdma-after-tcp with a cue between the two sessions: once its TCP
// session is up, this check waits for a line on standard input, while the
// scenario makes the smbd holding the ClientGuid unable to take the SMB
// Direct connection (stopped, or not serving SMB Direct). The child forked
// for the SMB Direct session then serves it itself. The TCP connection
// ends without a LOGOFF: its smbd may be stopped.
Status check_rdma_after_tcp_on_cue(Run &run)
{
    auto tcp = run.open(Carrier::tcp);
    if (!tcp)
        return tcp.error();
    auto first = open_tree(run, *tcp->conn);
    if (!first)
        return first.error();
    if (auto st = await_cue(run, "TCP session up"); !st)
        return st;
    auto rdma = run.open(Carrier::rdma);
    if (!rdma)
        return rdma.error();
    auto o = open_file(run, *rdma->conn);
    if (!o)
        return o.error();
    if (auto st = inline_round(run, *o->tree, o->file, kOffset); !st)
        return st;
    return close_all(run, *o, *rdma->conn);
}

// A WRITE over RDMA to a file opened for reading only: access denied, and
// (the scenario checks the driver's counter) no byte pulled by RDMA.
Status check_denied_write(Run &run)
{
    auto ch = run.open(Carrier::rdma);
    if (!ch)
        return ch.error();
    Connection &conn = *ch->conn;
    auto o = open_tree(run, conn);
    if (!o)
        return o.error();
    Tree &tree = *o->tree;
    // no delete on close: a server may refuse any other open then
    CreateRequest rw = run.create_request();
    rw.options = FILE_NON_DIRECTORY_FILE;
    auto writer = tree.create(rw);
    if (!writer)
        return writer.error();
    if (auto st = tree.close(writer->file_id); !st)
        return st;
    CreateRequest ro = run.create_request();
    ro.desired_access = GENERIC_READ;
    ro.disposition = FILE_OPEN;
    ro.options = FILE_NON_DIRECTORY_FILE;
    auto reader = tree.create(ro);
    if (!reader)
        return reader.error();
    auto rio = channel_io(*ch, reader->file_id, CHANNEL_RDMA_V1, kInlineSize);
    if (!rio)
        return rio.error();
    auto w =
        rdma_request(**rio, tree, reader->file_id, 0, true, 0, kInlineSize);
    if (!w)
        return w.error();
    auto got = tree.call(std::move(*w), NT_STATUS_ACCESS_DENIED);
    if (!got)
        return got.error();
    run.step("RDMA WRITE to a file opened for reading: "
             "STATUS_ACCESS_DENIED");
    if (auto st = tree.close(reader->file_id); !st)
        return st;
    CreateRequest del = run.create_request();
    del.desired_access = DELETE;
    del.disposition = FILE_OPEN;
    auto doomed = tree.create(del);
    if (!doomed)
        return doomed.error();
    if (auto st = tree.close(doomed->file_id); !st)
        return st;
    return leave(*o, conn);
}

// A READ or WRITE whose channel info the server must refuse.
struct ChannelCase {
    const char *what;
    bool write;
    uint32_t length;
    std::span<const uint8_t> info;
};

std::vector<uint8_t> channel_request(const ChannelCase &c, const Tree &t,
                                     const FileId &file)
{
    if (c.write) {
        WriteRequest w;
        w.hdr = t.header(SMB2_WRITE, c.length);
        w.file_id = file;
        w.channel = CHANNEL_RDMA_V1;
        w.remaining_bytes = c.length;
        w.channel_info = c.info;
        return build_write_request(w);
    }
    ReadRequest r = inline_read(t, file, 0, c.length);
    r.channel = CHANNEL_RDMA_V1;
    r.channel_info = c.info;
    return build_read_request(r);
}

Status channel_refused(Run &run, const ChannelCase &c, Tree &t,
                       const FileId &file)
{
    auto got = t.call(channel_request(c, t, file), NT_STATUS_INVALID_PARAMETER);
    if (!got)
        return Error{got.error().code,
                     std::string(c.what) + ": " + got.error().message};
    run.step(std::string(c.what) + ": STATUS_INVALID_PARAMETER");
    return {};
}

// A file written for channel checks, and one descriptor of memory for a
// transfer of kInlineSize bytes.
struct Described {
    std::unique_ptr<RdmaIo> io; // holds the memory the descriptor names
    std::vector<uint8_t> descs;
};

// Two inline WRITEs of kInlineSize, so that no end of file answers a READ
// first, and RDMA_V1 memory over @ch described for kInlineSize bytes.
Result<Described> written_file(Run &run, Channel &ch, Tree &tree,
                               const FileId &file)
{
    std::vector<uint8_t> data(size_t{2} * kInlineSize);
    fill_file_pattern(run.seed(), 0, data);
    if (auto w = tree.write(file, 0, std::span(data).first(kInlineSize)); !w)
        return w.error();
    if (auto w =
            tree.write(file, kInlineSize, std::span(data).last(kInlineSize));
        !w)
        return w.error();
    auto rio = channel_io(ch, file, CHANNEL_RDMA_V1, kInlineSize);
    if (!rio)
        return rio.error();
    auto descs = (*rio)->describe(0, kInlineSize);
    if (!descs)
        return descs.error();
    return Described{std::move(*rio), std::move(*descs)};
}

// Every answer to an RDMA_V1_INVALIDATE request revokes its token, also
// an error that comes before the channel is looked at (a TreeId the
// session does not have) or from it (descriptors shorter than the READ):
// the client does not invalidate the memory itself.
Status refused_invalidate(Run &run, Channel &ch, Tree &tree, const FileId &file)
{
    Connection &conn = *ch.conn;
    if (!channel_allowed(CHANNEL_RDMA_V1_INVALIDATE, conn.dialect()))
        return {};
    auto rio = channel_io(ch, file, CHANNEL_RDMA_V1_INVALIDATE, kInlineSize);
    if (!rio)
        return rio.error();
    if (!(*rio)->invalidation_reported()) {
        run.step("RDMA_V1_INVALIDATE answers not checked: this device's "
                 "receive completions do not show an invalidation");
        return {};
    }
    struct Case {
        const char *what;
        uint32_t status;
        bool other_tree;
        uint32_t length;
    };
    const Case cases[] = {
        {"an RDMA_V1_INVALIDATE READ on a TreeId the session lacks",
         NT_STATUS_NETWORK_NAME_DELETED, true, kInlineSize},
        {"an RDMA_V1_INVALIDATE READ longer than its descriptors",
         NT_STATUS_INVALID_PARAMETER, false, kInlineSize + 1},
    };
    for (const Case &c : cases) {
        auto descs = (*rio)->describe(0, kInlineSize);
        if (!descs)
            return descs.error();
        uint32_t token = smbd_get_le32(&(*descs)[8]);
        ReadRequest r = inline_read(tree, file, 0, c.length);
        r.channel = CHANNEL_RDMA_V1_INVALIDATE;
        r.channel_info = *descs;
        if (c.other_tree)
            r.hdr.tree_id ^= 0x5a5a;
        auto pdu = build_read_request(r);
        auto id = conn.send(pdu);
        if (!id)
            return id.error();
        auto got = answered(run, conn, *id, SMB2_READ, c.status, c.what);
        if (!got)
            return got.error();
        if (got->invalidated_rkey != token)
            return make_error(Errc::mismatch,
                              std::string(c.what) +
                                  ": its answer came without a send with "
                                  "invalidate of its token");
        run.step("and with a send with invalidate of its token");
    }
    return {};
}

// READ and WRITE channel info the server must refuse with
// STATUS_INVALID_PARAMETER (MS-SMB2 3.3.5.12, 3.3.5.13): none, cut short,
// describing less than the transfer, a transfer of no bytes; an RDMA
// channel over TCP.
Status check_channel_validation(Run &run)
{
    auto ch = run.open(Carrier::rdma);
    if (!ch)
        return ch.error();
    auto o = open_file(run, *ch->conn);
    if (!o)
        return o.error();
    Tree &tree = *o->tree;
    auto written = written_file(run, *ch, tree, o->file);
    if (!written)
        return written.error();
    // one descriptor for the whole transfer
    std::span<const uint8_t> one(written->descs);
    const ChannelCase cases[] = {
        {"a READ with an RDMA channel and no channel info", false, kInlineSize,
         one.first(0)},
        {"a READ with 8 bytes of channel info", false, kInlineSize,
         one.first(8)},
        {"a READ longer than its descriptors", false, kInlineSize + 1, one},
        {"a WRITE with an RDMA channel and no channel info", true, kInlineSize,
         one.first(0)},
        {"a WRITE longer than its descriptors", true, kInlineSize + 1, one},
        {"a READ of no bytes with an RDMA channel", false, 0, one},
        {"a WRITE of no bytes with an RDMA channel", true, 0, one},
    };
    for (const ChannelCase &c : cases)
        if (auto st = channel_refused(run, c, tree, o->file); !st)
            return st;
    if (auto st = refused_invalidate(run, *ch, tree, o->file); !st)
        return st;

    // over TCP no channel moves data by RDMA
    auto tcp = run.open(Carrier::tcp);
    if (!tcp)
        return tcp.error();
    auto t = open_file(run, *tcp->conn);
    if (!t)
        return t.error();
    for (bool write : {false, true}) {
        ChannelCase c{write ? "a WRITE with an RDMA channel over TCP"
                            : "a READ with an RDMA channel over TCP",
                      write, kInlineSize, one};
        if (auto st = channel_refused(run, c, *t->tree, t->file); !st)
            return st;
    }
    if (auto st = close_all(run, *t, *tcp->conn); !st)
        return st;
    return close_all(run, *o, *ch->conn);
}

// Where every byte must be signed or encrypted (@required says which),
// RDMA would move data outside the messages (no RDMA transform is
// negotiated): READ and WRITE with an RDMA channel are refused, inline
// I/O goes on.
Status rdma_refused(Run &run, Channel &ch, Opened &o,
                    const std::string &required)
{
    Tree &tree = *o.tree;
    auto written = written_file(run, ch, tree, o.file);
    if (!written)
        return written.error();
    for (bool write : {false, true}) {
        std::string what =
            std::string(write ? "an RDMA WRITE" : "an RDMA READ") + " where " +
            required + " is required";
        ChannelCase c{what.c_str(), write, kInlineSize, written->descs};
        if (auto st = channel_refused(run, c, tree, o.file); !st)
            return st;
    }
    if (auto st = inline_round(run, tree, o.file, kOffset); !st)
        return st;
    return close_all(run, o, *ch.conn);
}

// "server signing = mandatory"
Status check_signed_no_rdma(Run &run)
{
    auto ch = run.open(Carrier::rdma);
    if (!ch)
        return ch.error();
    if (!(ch->conn->negotiated().security_mode &
          SMB2_NEGOTIATE_SIGNING_REQUIRED))
        return make_error(Errc::mismatch,
                          "the server does not require signing: run this "
                          "check against one that does");
    auto o = open_file(run, *ch->conn);
    if (!o)
        return o.error();
    return rdma_refused(run, *ch, *o, "signing");
}

// "server smb encrypt = required": the session encrypts every message
// (AES-128-GCM on 3.1.1, AES-128-CCM on 3.0.2 with --dialects 0302)
Status check_encrypted_no_rdma(Run &run)
{
    auto ch = run.open(Carrier::rdma);
    if (!ch)
        return ch.error();
    auto o = open_file(run, *ch->conn);
    if (!o)
        return o.error();
    if (!o->session->encrypts())
        return make_error(Errc::mismatch,
                          "the server does not require encryption: run this "
                          "check against one that does");
    run.step("the session encrypts every message");
    return rdma_refused(run, *ch, *o, "encryption");
}

// FSCTL_QUERY_NETWORK_INTERFACE_INFO on the share, each interface a step.
Result<std::vector<NetworkInterface>> query_interfaces(Run &run, Tree &tree)
{
    auto got =
        tree.call(build_query_interfaces(tree.header(SMB2_IOCTL), 0x10000));
    if (!got)
        return got.error();
    auto ifaces = parse_query_interfaces_response(got->bytes);
    if (!ifaces)
        return ifaces.error();
    if (ifaces->empty())
        return make_error(Errc::protocol,
                          "the server lists no network interface");
    for (const NetworkInterface &n : *ifaces)
        run.step("interface " + n.address + " ifindex " +
                 std::to_string(n.if_index) +
                 (n.capability & IFACE_RSS_CAPABLE ? " RSS" : "") +
                 (n.capability & IFACE_RDMA_CAPABLE ? " RDMA" : ""));
    return ifaces;
}

// @addr as inet_ntop() writes it, as the interfaces are listed: "fd55::1"
// for "fd55:0::1".
std::string canonical_address(const std::string &addr)
{
    unsigned char bin[sizeof(in6_addr)];
    char text[INET6_ADDRSTRLEN];
    for (int family : {AF_INET, AF_INET6})
        if (inet_pton(family, addr.c_str(), bin) == 1 &&
            inet_ntop(family, bin, text, sizeof(text)))
            return text;
    return addr;
}

// Windows opens RDMA channels to the interfaces marked RDMA_CAPABLE:
// @want says whether the server should mark the one this run reaches
// (and, when not, any).
Status interfaces_marked(Run &run, bool want)
{
    auto ch = run.open(run.opt().carrier);
    if (!ch)
        return ch.error();
    auto o = open_tree(run, *ch->conn);
    if (!o)
        return o.error();
    auto ifaces = query_interfaces(run, *o->tree);
    if (!ifaces)
        return ifaces.error();
    const std::string reached = canonical_address(run.opt().addr);
    bool ours = false;
    bool any = false;
    for (const NetworkInterface &n : *ifaces) {
        bool rdma = n.capability & IFACE_RDMA_CAPABLE;
        any |= rdma;
        ours |= rdma && n.address == reached;
    }
    if (want && !ours)
        return make_error(Errc::mismatch,
                          run.opt().addr + " is not marked RDMA capable");
    if (!want && any)
        return make_error(Errc::mismatch,
                          "an interface is marked RDMA capable");
    return leave(*o, *ch->conn);
}

Status check_interfaces_rdma(Run &run) { return interfaces_marked(run, true); }
Status check_interfaces_no_rdma(Run &run)
{
    return interfaces_marked(run, false);
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
        {"compound-rdma",
         "compounds of RDMA and inline READs and WRITEs, RDMA in any "
         "position (over SMB Direct)",
         check_compound_rdma},
        {"cancel", "a CHANGE_NOTIFY that waits, cancelled by its AsyncId",
         check_cancel},
        {"bind-wrong-guid",
         "Windows' flow with another ClientGuid on the binding channel",
         check_bind_wrong_guid},
        {"bind-tcp", "a session over SMB Direct, a TCP channel binding to it",
         check_bind_tcp},
        {"break-retry",
         "a lease break the SMB Direct channel cannot carry comes again "
         "over the session's TCP channel",
         check_break_retry},
        {"durable-disconnect",
         "a durable handle left open by an SMB Direct connection that "
         "ends without a word",
         check_durable_disconnect},
        {"rdma-after-tcp",
         "a new SMB Direct session of a ClientGuid a TCP session holds",
         check_rdma_after_tcp},
        {"rdma-after-tcp-on-cue",
         "rdma-after-tcp that waits for a line on standard input between "
         "the two sessions",
         check_rdma_after_tcp_on_cue},
        {"denied-write",
         "an RDMA WRITE to a file opened for reading only (over SMB Direct)",
         check_denied_write},
        {"max-io",
         "RDMA WRITE and READ of the largest size the server offers (over "
         "SMB Direct)",
         check_max_io},
        {"bind-max-io-on-cue",
         "max-io, then after a line on standard input max-io again on a "
         "second SMB Direct channel bound to the session",
         check_bind_max_io_on_cue},
        {"max-fragmented",
         "responses within the client's MaxFragmentedSize of 131072: "
         "larger ones refused, a compound's counted whole (over SMB Direct)",
         check_max_fragmented},
        {"pool-wait",
         "RDMA WRITEs waiting for a pool held by a compound: cancelled, "
         "then refused in time (run against a pool of MaxWriteSize)",
         check_pool_wait},
        {"bind-unbindable",
         "an SMB Direct channel binding to a TCP session that cannot "
         "have one (SMB 2, multichannel off, guest)",
         check_bind_unbindable},
        {"signed-no-rdma",
         "RDMA READ and WRITE refused where signing is required, inline "
         "I/O served",
         check_signed_no_rdma},
        {"encrypted-no-rdma",
         "RDMA READ and WRITE refused where encryption is required, "
         "encrypted inline I/O served",
         check_encrypted_no_rdma},
        {"interfaces-rdma",
         "FSCTL_QUERY_NETWORK_INTERFACE_INFO marks the address reached "
         "RDMA capable",
         check_interfaces_rdma},
        {"interfaces-no-rdma",
         "FSCTL_QUERY_NETWORK_INTERFACE_INFO marks no interface RDMA "
         "capable",
         check_interfaces_no_rdma},
        {"channel-validation",
         "READ and WRITE channel info the server must refuse, over SMB "
         "Direct and over TCP",
         check_channel_validation},
    };
    return checks;
}

Status run_smb2_check(std::string_view name, const Smb2CheckOptions &opt,
                      const Step &step)
{
    for (const Smb2Check &c : smb2_checks())
        if (name == c.name) {
            Smb2Run run(name, opt, step);
            return c.run(run);
        }
    return make_error(Errc::invalid_argument,
                      "no check named '" + std::string(name) + "'");
}

} // namespace smbd::client
