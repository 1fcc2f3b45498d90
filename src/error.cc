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
  for (const auto& pair : context_) {
    if (pair.first == key && pair.second == value) return *this;
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

// One entry per key, at the place the key first appeared, so that a reader
// sees "file: lib.o (in model.tar)" rather than the same key twice apart.
void Error::reformat() {
  formatted_ = message_;
  if (context_.empty()) return;
  formatted_ += " [";
  bool first = true;
  for (size_t i = 0; i < context_.size(); ++i) {
    const std::string& key = context_[i].first;
    bool seen = false;
    for (size_t j = 0; j < i && !seen; ++j) seen = context_[j].first == key;
    if (seen) continue;
    if (!first) formatted_ += ", ";
    first = false;
    formatted_ += key + ": " + context_[i].second;
    for (size_t j = i + 1; j < context_.size(); ++j) {
      if (context_[j].first == key) formatted_ += " (in " + context_[j].second + ")";
    }
  }
  formatted_ += "]";
}

}  // namespace graphrt
