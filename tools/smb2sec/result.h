// Errors of the SMB2 security library: one code per way an input can be
// wrong, so that tests and logs name the rule, and a sentence with the
// numbers.
#ifndef SMBD_SMB2SEC_RESULT_H
#define SMBD_SMB2SEC_RESULT_H

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace smbd::smb2sec {

enum class Errc {
    invalid_argument, // the caller asked for something impossible
    truncated,        // shorter than its fixed part
    signature,        // not "NTLMSSP\0"
    message_type,     // an NTLMSSP message of another type
    field_range,      // a length/offset field points outside the message
    av_pairs,         // TargetInfo AV pairs malformed
    flags,            // the server's flags leave nothing usable
    der,              // DER encoding broken (length, tag, nesting)
    spnego,           // well-formed DER but not the SPNEGO token expected
    mic,              // a MIC or mechListMIC did not verify
    pdu_signature,    // an SMB2 signature did not verify or was absent
};

// "field_range"
const char *errc_name(Errc e);

struct Error {
    Errc code;
    std::string message;
};

// Either a value or an Error (std::expected is C++23); the shape of the
// client tool's Result, with this library's codes.
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

} // namespace smbd::smb2sec

#endif // SMBD_SMB2SEC_RESULT_H
