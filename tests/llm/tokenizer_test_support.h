// What the tokenizer tests share: the MLC fixture's folder and case.json, and small files.
#pragma once

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "scratch_dir.h"
#include "test_support.h"

namespace graphrt_test {

inline std::string mlc_gpt2_folder() { return fixture_path("mlc/tiny_gpt2_chat"); }

inline nlohmann::json mlc_gpt2_case() {
  std::ifstream in(mlc_gpt2_folder() + "/case.json");
  return nlohmann::json::parse(in);
}

inline void write_text_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// True when `s` is well-formed UTF-8 (checked here byte by byte, apart from the library).
inline bool well_formed_utf8(const std::string& s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    i += n;
  }
  return true;
}

}  // namespace graphrt_test
