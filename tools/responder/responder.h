// The smbd side of the tests: behaves on /dev/smbd as patched Samba would.
// The master opens the device, sets the parameters, listens and forks a child
// per NEW_CONNECTION; the child claims the connection by its token, answers
// the SESSION_SETUP with a new SessionId it registers, serves SMB2 READ and
// WRITE over RDMA against an in-memory file (file_server.h) and echoes every
// other PDU back as a response. Runs in a thread of a test or as
// smbdirect-responder. It uses the device only through libsmbd's C API, as
// the Samba patches do, so that every scenario proves the library too.
#ifndef SMBD_TOOLS_RESPONDER_H
#define SMBD_TOOLS_RESPONDER_H

#include "device.h"
#include "file_server.h"

#include <libsmbd-tevent.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace smbd::responder {

struct Options {
    device::Params params = device::default_params();
    bool listen = true;
    // serve accepted connections in a forked child each (as smbd does)
    bool fork = true;
    // SessionIds the master registers itself, for flow 1 without flow 2
    std::vector<uint64_t> register_sessions;
    // stop after this many connections ended (0: until stop())
    unsigned connections = 0;
    // where the plain-words log goes; nullptr: nowhere
    std::FILE *log = stdout;
    // a line per READ/WRITE too (benchmarks turn it off)
    bool log_io = true;
    // bytes of the file READ and WRITE work on (every FileId is that file)
    uint64_t file_size = 64u << 20;
    // a tevent loop through libsmbd-tevent, as smbd runs, instead of poll()
    bool tevent = false;
    // a READ's response goes with its RDMA WRITE where the kernel offers
    // it (SMBD_FEATURE_RW_REPLY), not after its RDMA_DONE
    bool rw_reply = true;
    // each process's pool, in the module's buffers (SMBD_FEATURE_POOL_SIZE);
    // 0: the module's
    uint32_t pool_buffers = 0;
};

// What one process of the responder saw and did.
struct Summary {
    uint64_t connections_offered = 0; // NEW_CONNECTION
    uint64_t children = 0;            // forked to claim one
    uint64_t accepted = 0;            // NEW_CHANNEL after ACCEPT (flow 2)
    uint64_t bound = 0;               // NEW_CHANNEL by SessionId (flow 1)
    uint64_t sessions = 0;            // SessionIds registered
    uint64_t pdus_received = 0;
    uint64_t bytes_received = 0;
    uint64_t pdus_sent = 0;
    uint64_t bytes_sent = 0;
    uint64_t send_errors = 0;
    uint64_t send_waits = 0;         // a full send queue held PDUs back
    uint64_t reads = 0;              // SMB2 READ answered with success
    uint64_t writes = 0;             // SMB2 WRITE answered with success
    uint64_t io_refused = 0;         // READ/WRITE answered with an error
    uint64_t io_queued = 0;          // waited for a free pool buffer
    uint64_t rdma_ops = 0;           // RDMA_RW operations started
    uint64_t rdma_bytes_read = 0;    // pulled from peers (for WRITE)
    uint64_t rdma_bytes_written = 0; // pushed to peers (for READ)
    uint64_t rdma_errors = 0;        // failed to start or RDMA_DONE error
    uint64_t rw_replies = 0;         // READ answers sent with their WRITE
    uint64_t disconnected = 0;       // DISCONNECTED on this process's file
    // connections ended: DISCONNECTED here, and each child that exited
    // (for the connection it claimed)
    uint64_t ended = 0;
    std::map<std::string, uint64_t> reasons;
};

class Responder {
  public:
    explicit Responder(Options opts);
    ~Responder();
    Responder(const Responder &) = delete;
    Responder &operator=(const Responder &) = delete;

    // Opens /dev/smbd, SET_PARAMS, LISTEN unless told not to, and the
    // --register sessions. 0 or the errno of the step that failed.
    int start();
    // Serves until stop() or until opts.connections connections ended;
    // then stops its children. 0, or the errno that ended it.
    int run();
    // Makes run() return; async-signal-safe.
    void stop();

    // Valid once run() returned (or from the thread that runs it).
    const Summary &summary() const { return summary_; }
    void print_summary() const;

  private:
    struct Send {
        uint64_t conn_id;
        std::vector<uint8_t> pdu;
        std::optional<uint32_t> invalidate;
    };
    // A READ/WRITE waiting for pool buffers, or with its RDMA under way.
    struct Io {
        uint64_t conn_id = 0;
        Decision decision;
        bool waited = false;
        smbd_dev_buf *buf = nullptr; // pool memory while it has some
        // the kernel is moving its data, or the glue has it: either must
        // end it before the connection's DISCONNECTED
        bool started = false;
        tevent_req *req = nullptr; // on a tevent loop: the glue has it
        // a READ whose response goes with its RDMA WRITE
        std::vector<uint8_t> reply;
    };
    struct Closer {
        void operator()(smbd_dev *d) const { smbd_dev_close(d); }
        void operator()(smbd_dev_events *e) const { smbd_dev_events_free(e); }
    };

    // responder.cpp: the device and a connection's life
    int open_device();
    int serve();
    bool finished() const;
    void handle(const smbd_dev_event &ev);
    void on_new_connection(const smbd_dev_event &ev);
    void on_new_channel(const smbd_dev_event &ev);
    void on_disconnected(const smbd_dev_event &ev);
    void on_send_room(uint64_t conn_id);
    uint64_t new_session_id();
    // children.cpp
    void fork_child(const smbd_dev_event &ev);
    // @mask: the signal mask to restore once the child has its own stop_fd_
    void serve_child(const uint8_t *token, const sigset_t &mask);
    void reap_children(bool wait);
    // poll_loop.cpp
    int serve_poll();
    int drain_events();
    // tevent_loop.cpp
    int serve_tevent();
    static void glue_event(const smbd_dev_event *ev, void *self);
    void start_tevent_transfers();
    static void glue_rdma_done(tevent_req *req);
    // smb2_io.cpp
    void setup_io();
    void reset_io();
    void on_io_request(uint64_t conn_id, std::span<const uint8_t> pdu);
    void answer(uint64_t conn_id, const Decision &d,
                std::vector<uint8_t> response);
    void count_answer(uint64_t conn_id, const Decision &d,
                      std::span<const uint8_t> response);
    void prepare_reply(Io &io);
    // @bytes as one PDU for @conn_id, its iovec in @iov
    static smbd_dev_pdu pdu_of(uint64_t conn_id,
                               const std::vector<uint8_t> &bytes,
                               std::optional<uint32_t> invalidate, iovec &iov);
    static std::vector<std::span<uint8_t>> memory(const Io &io);
    void start_transfers();
    smbd_dev_rdma rdma_op(uint64_t id) const;
    void transfer_failed(uint64_t id, int err);
    void on_rdma_done(uint64_t id, int32_t status, uint64_t bytes);
    void forget_io(uint64_t conn_id);
    void free_io();
    void flush_sends();
    void log(const char *fmt, ...) const __attribute__((format(printf, 2, 3)));

    Options opts_;
    std::unique_ptr<smbd_dev, Closer> dev_;
    std::unique_ptr<smbd_dev_events, Closer> events_;
    // while serve_tevent() runs
    tevent_context *ev_ = nullptr;
    smbd_tevent *glue_ = nullptr;
    int glue_error_ = 0;
    int stop_fd_ = -1;
    bool child_ = false;
    smbd_dev_info info_{};
    uint64_t next_session_ = 0;
    std::set<uint64_t> live_; // connections owned by this file
    std::set<int> children_;
    std::vector<Send> pending_;
    // refused for a full send queue (EAGAIN): they and the connection's
    // later PDUs wait, in order, for its SEND_ROOM
    std::map<uint64_t, std::vector<Send>> held_;
    std::map<uint64_t, uint16_t> dialects_; // per connection
    // READ/WRITE: set up at the first request, as the pool is then
    std::optional<FileServer> files_;
    std::deque<Io> queued_;
    std::map<uint64_t, Io> in_flight_; // by user_data
    // with pool memory, waiting for the kernel to take more (EAGAIN)
    std::deque<uint64_t> ready_;
    uint64_t next_io_ = 0;
    Summary summary_;
};

} // namespace smbd::responder

#endif // SMBD_TOOLS_RESPONDER_H
