// Dynamic symbols of a shared object as binutils' nm lists them: an
// independent reading of what a library imports or exports.
#pragma once

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

namespace graphrt_test {

struct NmSymbol {
  std::string name;     // without an @VERSION suffix
  std::string version;  // "" when unversioned
  char type;            // nm's letter: U, w, T, W, ...
};

// `nm -D <flags> <path>`; ok=false when nm cannot be run.
inline std::vector<NmSymbol> nm_dynamic(const std::string& path, const std::string& flags, bool* ok) {
  std::vector<NmSymbol> out;
  const std::string cmd = "nm -D " + flags + " '" + path + "' 2>/dev/null";
  FILE* pipe = popen(cmd.c_str(), "r");
  *ok = pipe != nullptr;
  if (!pipe) return out;
  char line[4096];
  while (fgets(line, sizeof(line), pipe)) {
    std::istringstream fields(line);
    std::vector<std::string> parts;
    for (std::string f; fields >> f;) parts.push_back(f);
    if (parts.size() < 2) continue;
    const std::string& full = parts.back();
    const std::string& type = parts[parts.size() - 2];
    const size_t at = full.find('@');
    out.push_back({full.substr(0, at), at == std::string::npos ? "" : full.substr(full.find_first_not_of('@', at)),
                   type.size() == 1 ? type[0] : '?'});
  }
  *ok = pclose(pipe) == 0;
  return out;
}

}  // namespace graphrt_test
