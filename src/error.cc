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

namespace {
// "message [key: value, key: value]", the one line a user reads: one entry
// per key, at the place the key first appeared, so that a reader sees
// "file: lib.o (in model.tar)" rather than the same key twice apart.
std::string format_error(const std::string& message, const std::vector<std::pair<std::string, std::string>>& context) {
  std::string formatted = message;
  if (context.empty()) return formatted;
  formatted += " [";
  bool first = true;
  for (size_t i = 0; i < context.size(); ++i) {
    const std::string& key = context[i].first;
    bool seen = false;
    for (size_t j = 0; j < i && !seen; ++j) seen = context[j].first == key;
    if (seen) continue;
    if (!first) formatted += ", ";
    first = false;
    formatted += key + ": " + context[i].second;
    for (size_t j = i + 1; j < context.size(); ++j) {
      if (context[j].first == key) formatted += " (in " + context[j].second + ")";
    }
  }
  return formatted + "]";
}
}  // namespace

Error::Error(ErrorKind kind, std::string message)
    : std::runtime_error(message), kind_(kind), message_(std::move(message)), formatted_(message_) {}

// A context value is a name (a file, a tensor, a record's key), often read from the input: one
// that could drive a terminal or is longer than any path is shown quoted and cut.
Error& Error::with(const std::string& key, const std::string& raw_value) {
  const std::string value = shown_name(raw_value, 4096);
  for (const auto& pair : context_) {
    if (pair.first == key && pair.second == value) return *this;
  }
  context_.emplace_back(key, value);
  formatted_ = format_error(message_, context_);
  return *this;
}


}  // namespace graphrt
