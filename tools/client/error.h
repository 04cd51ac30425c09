// Errors of the SMB Direct client: a code to branch on and a sentence a
// person can act on.
#ifndef SMBD_CLIENT_ERROR_H
#define SMBD_CLIENT_ERROR_H

#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <variant>

namespace smbd::client {

enum class Errc {
    invalid_argument = 1, // the caller asked for something impossible
    rdma,                 // an rdma_cm or verbs call failed
    unreachable,          // address/route resolution or connect failed
    timeout,              // nothing arrived in time
    peer_disconnected,    // the server closed the connection
    negotiate_rejected,   // MS-SMBD negotiate answered with a failure
    protocol,             // the server broke MS-SMBD or SMB2 framing
    smb2_status,          // an SMB2 response carried an error status
    mismatch,             // an echoed PDU differs from what was sent
    closed,               // the client closed the connection
};

const std::error_category &client_category();
std::error_code make_error_code(Errc e);

struct Error {
    std::error_code code;
    std::string message;
};

Error make_error(Errc e, std::string message);

// Either a value or an Error (std::expected is C++23).
template <class T> class [[nodiscard]] Result {
  public:
    Result(T value) : v_(std::move(value)) {}
    Result(Error error) : v_(std::move(error)) {}

    bool ok() const { return v_.index() == 0; }
    explicit operator bool() const { return ok(); }
    T &value() { return std::get<0>(v_); }
    const T &value() const { return std::get<0>(v_); }
    T &operator*() { return value(); }
    const T &operator*() const { return value(); }
    T *operator->() { return &value(); }
    const T *operator->() const { return &value(); }
    const Error &error() const { return std::get<1>(v_); }

  private:
    std::variant<T, Error> v_;
};

template <> class [[nodiscard]] Result<void> {
  public:
    Result() = default;
    Result(Error error) : e_(std::move(error)) {}

    bool ok() const { return !e_; }
    explicit operator bool() const { return ok(); }
    const Error &error() const { return *e_; }

  private:
    std::optional<Error> e_;
};

using Status = Result<void>;

} // namespace smbd::client

template <> struct std::is_error_code_enum<smbd::client::Errc> : true_type {
};

#endif // SMBD_CLIENT_ERROR_H
