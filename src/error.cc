#include "graphrt/error.h"

namespace graphrt {

Error::Error(std::string message)
    : std::runtime_error(message), message_(std::move(message)) {
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
