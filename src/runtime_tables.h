// What the Runtime owns: its registries, each under its own lock.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "graphrt/runtime.h"

namespace graphrt {

struct Runtime::Tables {
  mutable std::mutex functions_mutex;
  std::map<std::string, PackedFunc> functions;

  mutable std::mutex library_loaders_mutex;
  std::map<std::string, LibraryLoader> library_loaders;
  std::map<std::string, LibraryProbe> library_probes;

  mutable std::mutex devices_mutex;
  std::map<int, std::shared_ptr<DeviceAPI>> devices;
};

// The core's access to a runtime's registries (a friend of Runtime, inline
// only: no symbol of its own).
struct RuntimeTables {
  static Runtime::Tables& of(const Runtime& runtime) { return *runtime.tables_; }
};

}  // namespace graphrt
