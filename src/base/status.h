// Status and Expected<T>: the error currency of the C++ core. Anything that can
// fail on user input returns one of these; exceptions never cross the C API.
#pragma once

#include <cassert>
#include <sstream>
#include <string>
#include <utility>
#include <variant>

namespace oc {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,    // bad argument from the caller
  kNotSupported,       // valid request that we do not implement (names the op/flag)
  kInvalidFile,        // corrupt or mismatched file (names the offset/field)
  kNotFound,
  kOutOfRange,
  kFailedPrecondition, // wrong call order / state
  kResourceExhausted,  // allocation failed
  kIoError,
  kInternal,
  kDeadlineExceeded,   // a wait ran past its timeout (names the wait and the setting)
  kUnavailable,        // a peer (process, rank, host) failed or went away
};

const char* StatusCodeName(StatusCode code);

// Concatenates its arguments with operator<< into a string.
template <typename... Args>
std::string StrCat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string ToString() const;
  // Prefixes the message with context ("while loading x.om: ...").
  Status WithContext(const std::string& context) const;
  // The error code a C API should report for this failure, where the code
  // alone cannot say it (0: derive it from code()).
  int api_code() const { return api_code_; }
  Status WithApiCode(int api_code) const {
    Status s = *this;
    s.api_code_ = api_code;
    return s;
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  int api_code_ = 0;
};

template <typename... Args>
Status InvalidArgument(const Args&... a) { return Status(StatusCode::kInvalidArgument, StrCat(a...)); }
template <typename... Args>
Status NotSupported(const Args&... a) { return Status(StatusCode::kNotSupported, StrCat(a...)); }
template <typename... Args>
Status InvalidFile(const Args&... a) { return Status(StatusCode::kInvalidFile, StrCat(a...)); }
template <typename... Args>
Status NotFound(const Args&... a) { return Status(StatusCode::kNotFound, StrCat(a...)); }
template <typename... Args>
Status OutOfRange(const Args&... a) { return Status(StatusCode::kOutOfRange, StrCat(a...)); }
template <typename... Args>
Status FailedPrecondition(const Args&... a) { return Status(StatusCode::kFailedPrecondition, StrCat(a...)); }
template <typename... Args>
Status ResourceExhausted(const Args&... a) { return Status(StatusCode::kResourceExhausted, StrCat(a...)); }
template <typename... Args>
Status IoError(const Args&... a) { return Status(StatusCode::kIoError, StrCat(a...)); }
template <typename... Args>
Status Internal(const Args&... a) { return Status(StatusCode::kInternal, StrCat(a...)); }
template <typename... Args>
Status DeadlineExceeded(const Args&... a) { return Status(StatusCode::kDeadlineExceeded, StrCat(a...)); }
template <typename... Args>
Status Unavailable(const Args&... a) { return Status(StatusCode::kUnavailable, StrCat(a...)); }

// Either a value or a non-OK Status.
template <typename T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}
  Expected(Status status) : v_(std::move(status)) { assert(!std::get<Status>(v_).ok()); }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace oc

#define OC_CONCAT_INNER_(a, b) a##b
#define OC_CONCAT_(a, b) OC_CONCAT_INNER_(a, b)

#define OC_RETURN_IF_ERROR(expr)              \
  do {                                        \
    ::oc::Status oc_status_ = (expr);         \
    if (!oc_status_.ok()) return oc_status_;  \
  } while (0)

#define OC_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.status();             \
  lhs = std::move(tmp).value()

// OC_ASSIGN_OR_RETURN(auto x, Foo());
#define OC_ASSIGN_OR_RETURN(lhs, expr) \
  OC_ASSIGN_OR_RETURN_IMPL_(OC_CONCAT_(oc_expected_, __LINE__), lhs, expr)
