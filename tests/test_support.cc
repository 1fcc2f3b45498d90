#include "test_support.h"

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <sys/stat.h>

namespace graphrt_test {

static bool is_dir(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string fixtures_dir() {
  const char* env = std::getenv("GRAPHRT_FIXTURES");
  if (env && is_dir(env)) return env;
#ifdef GRAPHRT_FIXTURES_DIR
  if (is_dir(GRAPHRT_FIXTURES_DIR)) return GRAPHRT_FIXTURES_DIR;
#endif
  return "";
}

bool fixtures_required() {
#if defined(GRAPHRT_FIXTURES_REQUIRED) && GRAPHRT_FIXTURES_REQUIRED
  return true;
#else
  const char* ci = std::getenv("CI");
  const char* required = std::getenv("GRAPHRT_REQUIRE_FIXTURES");
  return (ci && std::string(ci) == "true") || (required && std::string(required) == "1");
#endif
}

std::string fixture_path(const std::string& relative) { return fixtures_dir() + "/" + relative; }

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

Npy read_npy(const std::string& path) {
  std::vector<uint8_t> bytes = read_file(path);
  if (bytes.size() < 10 || bytes[0] != 0x93 || std::string(bytes.begin() + 1, bytes.begin() + 6) != "NUMPY")
    throw std::runtime_error("not a .npy file: " + path);
  size_t header_len;
  size_t header_start;
  if (bytes[6] == 1) {
    header_len = bytes[8] | (bytes[9] << 8);
    header_start = 10;
  } else {
    header_len = bytes[8] | (bytes[9] << 8) | (bytes[10] << 16) | (size_t(bytes[11]) << 24);
    header_start = 12;
  }
  std::string header(bytes.begin() + header_start, bytes.begin() + header_start + header_len);
  Npy npy;
  size_t d = header.find("'descr':");
  size_t q1 = header.find('\'', d + 8);
  size_t q2 = header.find('\'', q1 + 1);
  npy.descr = header.substr(q1 + 1, q2 - q1 - 1);
  if (header.find("'fortran_order': True") != std::string::npos)
    throw std::runtime_error("fortran order .npy not supported: " + path);
  size_t s = header.find("'shape':");
  size_t p1 = header.find('(', s);
  size_t p2 = header.find(')', p1);
  std::string dims = header.substr(p1 + 1, p2 - p1 - 1);
  size_t pos = 0;
  while (pos < dims.size()) {
    size_t comma = dims.find(',', pos);
    std::string tok = dims.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (tok.find_first_of("0123456789") != std::string::npos) npy.shape.push_back(std::stoll(tok));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  npy.data.assign(bytes.begin() + header_start + header_len, bytes.end());
  return npy;
}

}  // namespace graphrt_test
