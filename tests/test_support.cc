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

}  // namespace graphrt_test
