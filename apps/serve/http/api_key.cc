#include "http/api_key.h"

#include <fstream>

#include "graphrt/error.h"

namespace graphrt_serve {

namespace {

// Every byte of the longer string is looked at whatever the contents.
bool equal_in_constant_time(const std::string& a, const std::string& b) {
  const size_t n = a.size() > b.size() ? a.size() : b.size();
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

}  // namespace

bool api_key_accepts(const std::string& key, const std::string& authorization_header) {
  if (key.empty()) return true;
  static const std::string kBearer = "Bearer ";
  const bool bearer = authorization_header.compare(0, kBearer.size(), kBearer) == 0;
  const std::string given = bearer ? authorization_header.substr(kBearer.size()) : std::string();
  return equal_in_constant_time(given, key) && bearer;
}

std::string read_api_key_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw graphrt::Error(graphrt::ErrorKind::kNotFound, "cannot read the API key file").with("file", path);
  std::string key;
  std::getline(in, key);
  while (!key.empty() && (key.back() == '\r' || key.back() == ' ' || key.back() == '\t')) key.pop_back();
  if (key.empty()) throw graphrt::Error("the API key file's first line is empty").with("file", path);
  return key;
}

}  // namespace graphrt_serve
