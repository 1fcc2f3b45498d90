// The path handed to dlopen for a user-given file path.
#pragma once

#include <string>

namespace graphrt {

// dlopen searches the system library paths for a name without '/', so a bare
// "deploy.so" would never mean the file in the current directory; TVM's loader
// opens it there, and so does graphrt.
inline std::string dlopen_path(const std::string& path) {
  return path.find('/') == std::string::npos ? "./" + path : path;
}

}  // namespace graphrt
