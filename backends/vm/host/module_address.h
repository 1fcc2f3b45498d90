// Module addresses as IREE's tools spell them: `path[@create_fn][?k=v&k2=v2]`.
// Split at the first '@' (path / rest), then the rest at the first '?'
// (creation function / params). Params are '&'-separated, trimmed; a param
// without '=' has an empty value; keys and values are percent-decoded
// ("scale=%33" gives "3"). An empty creation function means the ABI's
// default name.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace graphrt {
namespace vm {

struct ModuleAddress {
  std::string path;
  std::string create_fn;
  std::vector<std::pair<std::string, std::string>> params;
};

ModuleAddress parse_module_address(const std::string& address);
// True for .so/.dll/.dylib/.sos paths (loaded as dynamic native modules).
bool is_shared_library_path(const std::string& path);

}  // namespace vm
}  // namespace graphrt
