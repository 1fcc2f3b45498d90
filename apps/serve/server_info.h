// What the server says about itself in its metadata (REST and gRPC alike).
#pragma once

#include <string>
#include <vector>

namespace graphrt_serve {

struct ServerInfo {
  std::string name = "graphrt-serve";
  std::string version;
  // The protocol extensions the REST front end implements (server metadata lists them).
  std::vector<std::string> extensions = {"binary_tensor_data", "model_repository"};
};

}  // namespace graphrt_serve
