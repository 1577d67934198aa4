//===- status.cpp - Status ------------------------------------------------===//
#include "ember/status.h"

namespace ember {

const char *statusCodeName(StatusCode code) {
  switch (code) {
  case StatusCode::kOk: return "OK";
  case StatusCode::kInvalidArgument: return "InvalidArgument";
  case StatusCode::kNotFound: return "NotFound";
  case StatusCode::kOutOfRange: return "OutOfRange";
  case StatusCode::kDataLoss: return "DataLoss";
  case StatusCode::kFailedPrecondition: return "FailedPrecondition";
  case StatusCode::kUnimplemented: return "Unimplemented";
  case StatusCode::kResourceExhausted: return "ResourceExhausted";
  case StatusCode::kUnavailable: return "Unavailable";
  case StatusCode::kDeadlineExceeded: return "DeadlineExceeded";
  case StatusCode::kInternal: return "Internal";
  }
  return "Unknown";
}

std::string Status::toString() const {
  if (isOk())
    return "OK";
  return std::string(statusCodeName(code_)) + ": " + message_;
}

Status Status::withContext(const std::string &context) const {
  if (isOk())
    return *this;
  return Status(code_, context + ": " + message_);
}

} // namespace ember
