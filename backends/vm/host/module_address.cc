#include "backends/vm/host/module_address.h"

#include "graphrt/error.h"

namespace graphrt {
namespace vm {
namespace {

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// RFC 3986 percent-decoding ("%33" -> "3"); '+' stays '+'.
std::string percent_decode(const std::string& s, const std::string& address) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    const bool room = i + 2 < s.size();
    const int hi = room ? hex_digit(s[i + 1]) : -1;
    const int lo = room ? hex_digit(s[i + 2]) : -1;
    if (hi < 0 || lo < 0) throw Error("malformed %-escape in module parameter '" + s + "'").with("address", address);
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

}  // namespace

ModuleAddress parse_module_address(const std::string& address) {
  ModuleAddress out;
  const size_t at = address.find('@');
  out.path = address.substr(0, at);
  GRAPHRT_CHECK(!out.path.empty(), "module address without a path: '" + address + "'");
  if (at == std::string::npos) return out;
  const std::string rest = address.substr(at + 1);
  const size_t q = rest.find('?');
  out.create_fn = trim(rest.substr(0, q));
  if (q == std::string::npos) return out;
  const std::string params = rest.substr(q + 1);
  size_t start = 0;
  while (start <= params.size()) {
    size_t amp = params.find('&', start);
    if (amp == std::string::npos) amp = params.size();
    const std::string item = trim(params.substr(start, amp - start));
    if (!item.empty()) {
      const size_t eq = item.find('=');
      if (eq == std::string::npos) {
        out.params.emplace_back(percent_decode(item, address), "");
      } else {
        out.params.emplace_back(percent_decode(trim(item.substr(0, eq)), address),
                                percent_decode(trim(item.substr(eq + 1)), address));
      }
    }
    start = amp + 1;
  }
  return out;
}

bool is_shared_library_path(const std::string& path) {
  const size_t dot = path.rfind('.');
  if (dot == std::string::npos) return false;
  const std::string ext = path.substr(dot + 1);
  return ext == "so" || ext == "dll" || ext == "dylib" || ext == "sos";
}

}  // namespace vm
}  // namespace graphrt
