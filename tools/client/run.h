// One client run as the CLI performs it: connect, MS-SMBD negotiate, SMB2
// NEGOTIATE, SESSION_SETUP (new or binding), then N echoed PDUs, or SMB2
// WRITE and READ over RDMA (verified rounds or a benchmark), close; or the
// same flow breaking one rule (a hostile mode) and expecting the server to
// disconnect.
#ifndef SMBD_CLIENT_RUN_H
#define SMBD_CLIENT_RUN_H

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "client.h"
#include "hostile.h"
#include "io_run.h"

namespace smbd::client {

enum class IoMode { none, write_read, bench };

struct RunOptions {
    std::string addr;
    uint16_t port = kPortByTransport;
    ConnectOptions connect;
    Smb2NegotiateOptions smb2;
    bool bind = false; // binding SESSION_SETUP for bind_session
    uint64_t bind_session = 0;
    uint32_t pdus = 1;    // echoed PDUs after SESSION_SETUP
    uint32_t size = 4096; // bytes per PDU, SMB2 header included
    Hostile hostile = Hostile::none;
    // SESSION_SETUP is expected to fail with this status, then the server
    // to disconnect (a binding to a session nobody registered)
    std::optional<uint32_t> expect_status;
    // how long to wait for a disconnect the hostile mode provokes
    std::chrono::milliseconds wait{30000};
    // SMB2 READ/WRITE over RDMA after SESSION_SETUP, in place of echoes
    IoMode io = IoMode::none;
    WriteReadOptions write_read;
    BenchOptions bench;
    FileOptions file;
    uint32_t descriptors = 1;
    uint32_t descriptor_extra = 0;
    // nothing: RDMA_V1_INVALIDATE from dialect 3.0.2 on, RDMA_V1 on 3.0
    std::optional<uint32_t> channel;
};

struct RunReport {
    bool ok = false;                // the expected outcome happened
    std::string outcome;            // what happened in the end, in words
    std::vector<std::string> steps; // each step on the way
    Hostile hostile = Hostile::none;
    bool smbd_negotiated = false;
    smbd_negotiate_resp smbd{}; // the server's negotiate response
    smbd_conn_params params{};
    std::optional<Smb2NegotiateResponse> smb2;
    uint64_t session_id = 0;
    uint32_t pdus_verified = 0;
    std::chrono::milliseconds elapsed{0};
    std::string device;
    Observed observed;
    smbd_credits credits{};
    // READ/WRITE over RDMA, when asked for
    std::optional<IoReport> io;
    uint32_t channel = 0;
    bool invalidation_expected = false;
};

// @progress, if given, sees each step as it happens.
RunReport run(const RunOptions &opt,
              const std::function<void(const std::string &)> &progress = {});

// The steps of a run, of which each hostile mode (hostile.cpp) is made.
// A step that fails, or that ends the run, finishes the report and returns
// false.
class Flow {
  public:
    using Progress = std::function<void(const std::string &)>;
    // @opt is kept by reference and must outlive the Flow, so a temporary
    // is refused; @progress is copied.
    Flow(const RunOptions &opt, Progress progress);
    Flow(RunOptions &&, Progress) = delete;
    // Connect, play the mode, close.
    RunReport run();

    const RunOptions &opt() const { return opt_; }
    Client &client() { return *c_; }
    const RunReport &report() const { return r_; }

    void step(const std::string &line);
    void finish(bool ok, const std::string &outcome);
    void fail(const std::string &what, const Error &e);
    // The mode's rule is broken; the server must now end the connection.
    void expect_disconnect(bool process_completions = true);

    bool smbd_negotiate();
    bool smb2_negotiate();
    // SESSION_SETUP, new or binding, or the refusal --expect-status names
    bool session_setup();
    SessionSetupOptions setup_options() const;
    bool session()
    {
        return smbd_negotiate() && smb2_negotiate() && session_setup();
    }
    // After the session: SMB2 READ/WRITE over RDMA when asked for, and
    // false; true: the mode's PDUs go next.
    bool pdus_next();

    // The echoed PDUs: the i-th, checking the answer to one (@spec: the
    // i-th unless told), sending each and checking its echo, and what was
    // checked in words.
    EchoSpec echo(uint32_t i) const;
    bool verify(uint32_t i, const Result<std::vector<uint8_t>> &got);
    bool verify(uint32_t i, const Result<std::vector<uint8_t>> &got,
                const EchoSpec &spec);
    bool echo_each();
    std::string echoed_text() const;

  private:
    void rdma_io();

    const RunOptions &opt_;
    Progress progress_;
    const HostileInfo &info_;
    std::unique_ptr<Client> c_;
    RunReport r_;
};

} // namespace smbd::client

#endif // SMBD_CLIENT_RUN_H
