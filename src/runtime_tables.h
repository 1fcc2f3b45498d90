// What the Runtime owns: its registries, each under its own lock.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <vector>

#include "graphrt/runtime.h"
#include "layer_api/user_mistakes.h"

namespace graphrt {

struct Runtime::Tables {
  mutable std::mutex functions_mutex;
  std::map<std::string, PackedFunc> functions;

  mutable std::mutex library_loaders_mutex;
  std::map<std::string, LibraryLoader> library_loaders;
  std::map<std::string, LibraryProbe> library_probes;

  mutable std::mutex devices_mutex;
  std::map<int, std::shared_ptr<DeviceAPI>> devices;

  // user_mistakes.h: what misplaced files look like, what module kinds are for.
  mutable std::mutex mistakes_mutex;
  std::vector<MisplacedFileKind> misplaced_files;
  std::map<std::string, std::string> usage_hints;
};

// The core's access to a runtime's registries (a friend of Runtime, inline
// only: no symbol of its own).
struct RuntimeTables {
  static Runtime::Tables& of(const Runtime& runtime) { return *runtime.tables_; }
};

}  // namespace graphrt
