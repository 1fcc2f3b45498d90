#include "graphrt/error.h"

namespace graphrt {

const char* error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalidArgument: return "invalid argument";
    case ErrorKind::kNotFound: return "not found";
    case ErrorKind::kOutOfRange: return "out of range";
    case ErrorKind::kUnsupported: return "unsupported";
    case ErrorKind::kResourceExhausted: return "resource exhausted";
    case ErrorKind::kDevice: return "device error";
    case ErrorKind::kInterrupted: return "interrupted";
    case ErrorKind::kTypeMismatch: return "type mismatch";
    case ErrorKind::kFailedPrecondition: return "failed precondition";
    case ErrorKind::kInternal: break;
  }
  return "internal";
}

Error::Error(std::string message)
    : std::runtime_error(message), message_(std::move(message)) {
  reformat();
}

Error::Error(ErrorKind kind, std::string message)
    : std::runtime_error(message), kind_(kind), message_(std::move(message)) {
  reformat();
}

Error& Error::with(const std::string& key, const std::string& value) {
  for (auto& pair : context_) {
    if (pair.first == key) return *this;  // innermost context wins
  }
  context_.emplace_back(key, value);
  reformat();
  return *this;
}

std::string Error::context_value(const std::string& key) const {
  for (const auto& pair : context_) {
    if (pair.first == key) return pair.second;
  }
  return "";
}

void Error::reformat() {
  formatted_ = message_;
  if (context_.empty()) return;
  formatted_ += " [";
  for (size_t i = 0; i < context_.size(); ++i) {
    if (i) formatted_ += ", ";
    formatted_ += context_[i].first + ": " + context_[i].second;
  }
  formatted_ += "]";
}

}  // namespace graphrt
