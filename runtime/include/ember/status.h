//===- status.h - Status and Result for the Ember runtime ------*- C++ -*-===//
//
// Every runtime boundary returns a Status (or a Result<T>); no exception
// crosses the C API and bad input never aborts. A message says what failed and
// where (file, slot, feature, position).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_STATUS_H
#define EMBER_STATUS_H

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace ember {

enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument = 1,   // bad user input: names, shapes, dtypes, ids
  kNotFound = 2,          // missing file, input or output name
  kOutOfRange = 3,        // an id outside its table, an index past an end
  kDataLoss = 4,          // corrupt or truncated plan / weight file
  kFailedPrecondition = 5,// e.g. plan version or backend not supported here
  kUnimplemented = 6,     // a kernel or feature this build does not have
  kResourceExhausted = 7, // out of memory
  kUnavailable = 8,       // a device or peer rank cannot be reached
  kDeadlineExceeded = 9,  // a collective or rendezvous timed out
  kInternal = 10,         // a bug in Ember
};

const char *statusCodeName(StatusCode code);

class [[nodiscard]] Status {
public:
  Status() = default;
  Status(StatusCode code, std::string message)
      : code_(code), message_(std::move(message)) {}

  static Status ok() { return Status(); }

  bool isOk() const { return code_ == StatusCode::kOk; }
  explicit operator bool() const { return isOk(); }
  StatusCode code() const { return code_; }
  const std::string &message() const { return message_; }
  /// "InvalidArgument: <message>", or "OK".
  std::string toString() const;

  /// Prepends context: Status(kDataLoss, "bad crc").withContext("weights.bin")
  /// has the message "weights.bin: bad crc".
  Status withContext(const std::string &context) const;

private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status invalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
inline Status notFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status outOfRange(std::string m) { return {StatusCode::kOutOfRange, std::move(m)}; }
inline Status dataLoss(std::string m) { return {StatusCode::kDataLoss, std::move(m)}; }
inline Status failedPrecondition(std::string m) { return {StatusCode::kFailedPrecondition, std::move(m)}; }
inline Status unimplemented(std::string m) { return {StatusCode::kUnimplemented, std::move(m)}; }
inline Status resourceExhausted(std::string m) { return {StatusCode::kResourceExhausted, std::move(m)}; }
inline Status unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
inline Status deadlineExceeded(std::string m) { return {StatusCode::kDeadlineExceeded, std::move(m)}; }
inline Status internalError(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

/// A value or the Status that explains why there is none.
template <typename T> class [[nodiscard]] Result {
public:
  Result(T value) : value_(std::move(value)) {}
  Result(Status status) : status_(std::move(status)) {
    assert(!status_.isOk() && "a Result built from a Status must hold an error");
  }

  bool isOk() const { return value_.has_value(); }
  explicit operator bool() const { return isOk(); }
  const Status &status() const { return status_; }

  T &value() & { assert(isOk()); return *value_; }
  const T &value() const & { assert(isOk()); return *value_; }
  T &&value() && { assert(isOk()); return std::move(*value_); }
  T &operator*() & { return value(); }
  const T &operator*() const & { return value(); }
  T *operator->() { return &value(); }
  const T *operator->() const { return &value(); }

private:
  std::optional<T> value_;
  Status status_;
};

} // namespace ember

/// Returns the Status of an expression from the enclosing function if it fails.
#define EMBER_RETURN_IF_ERROR(expr)                                            \
  do {                                                                         \
    ::ember::Status ember_status_ = (expr);                                    \
    if (!ember_status_.isOk())                                                 \
      return ember_status_;                                                    \
  } while (0)

#define EMBER_CONCAT_INNER_(a, b) a##b
#define EMBER_CONCAT_(a, b) EMBER_CONCAT_INNER_(a, b)

/// `EMBER_ASSIGN_OR_RETURN(auto x, makeX());` declares x from a Result or
/// returns its error Status.
#define EMBER_ASSIGN_OR_RETURN(lhs, expr)                                      \
  EMBER_ASSIGN_OR_RETURN_IMPL_(EMBER_CONCAT_(ember_result_, __LINE__), lhs, expr)
#define EMBER_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr)                           \
  auto tmp = (expr);                                                           \
  if (!tmp.isOk())                                                             \
    return tmp.status();                                                       \
  lhs = std::move(tmp).value()

#endif // EMBER_STATUS_H
