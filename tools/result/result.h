// The error and result shape of the userspace tools: an Error is a code to
// branch on and a sentence a person can act on; a Result is a value or an
// Error. Each tool defines its own codes (an error-code enum with its
// category) and brings these names into its namespace.
#ifndef SMBD_RESULT_H
#define SMBD_RESULT_H

#include <optional>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <variant>

namespace smbd {

struct Error {
    std::error_code code;
    std::string message;
};

// A tool's code: an enum with its std::is_error_code_enum specialization
// and make_error_code beside it.
template <class E>
concept ErrorCodeEnum = std::is_error_code_enum_v<E>;

template <ErrorCodeEnum E> Error make_error(E e, std::string message)
{
    return Error{make_error_code(e), std::move(message)};
}

// Either a value or an Error (std::expected is C++23).
template <class T> class [[nodiscard]] Result {
  public:
    Result(T value) : v_(std::move(value)) {}
    Result(Error error) : v_(std::move(error)) {}

    bool ok() const { return v_.index() == 0; }
    explicit operator bool() const { return ok(); }
    // value(), * and -> only on success: on failure they throw
    // std::bad_variant_access.
    T &value() { return std::get<0>(v_); }
    const T &value() const { return std::get<0>(v_); }
    T &operator*() { return value(); }
    const T &operator*() const { return value(); }
    T *operator->() { return &value(); }
    const T *operator->() const { return &value(); }
    // Only on failure: on success it throws std::bad_variant_access.
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
    // Only on failure: on success it throws std::bad_optional_access, as
    // Result<T>::error() throws, rather than read an empty optional.
    const Error &error() const { return e_.value(); }

  private:
    std::optional<Error> e_;
};

using Status = Result<void>;

} // namespace smbd

#endif // SMBD_RESULT_H
