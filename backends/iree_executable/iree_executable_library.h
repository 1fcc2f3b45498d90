// IREE HAL executable libraries (embedded-ELF form, library ABI version 0.6)
// on top of ElfImage.
//
// An IREE CPU executable exports one symbol:
//   const library_header** iree_hal_executable_library_query(
//       uint32_t max_version, const IreeEnvironment* environment);
// It returns the library (whose first field is the header pointer) only when
// max_version == 6. Each entry point ("export") has the signature
//   int dispatch(const IreeEnvironment* environment,
//                const IreeDispatchState* dispatch_state,
//                const IreeWorkgroupState* workgroup_state);
// returning 0 on success, and is called once per workgroup id (z, y, x loops).
// Bindings are passed as a dense array of host pointers + byte lengths in
// binding-ordinal order; push constants as uint32 words.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "src/elf/elf_image.h"

namespace graphrt {
namespace elf {

constexpr uint32_t kIreeLibraryVersion = 6;
constexpr const char* kIreeQuerySymbol = "iree_hal_executable_library_query";

// LP64 layouts of the v0 ABI structs (offsets are asserted in the .cc).
struct IreeEnvironment {
  const uint32_t* constants;
  int (*import_thunk)(int (*fn)(void*, void*, void*), void* params, void* context, void* reserved);
  int (*const* import_funcs)(void*, void*, void*);
  const void** import_contexts;
  uint64_t processor_data[8];
};

struct IreeDispatchState {
  uint32_t workgroup_size_x;
  uint32_t workgroup_size_y;
  uint16_t workgroup_size_z;
  uint16_t constant_count;
  uint32_t workgroup_count_x;
  uint32_t workgroup_count_y;
  uint16_t workgroup_count_z;
  uint8_t max_concurrency;
  uint8_t binding_count;
  const uint32_t* constants;
  void* const* binding_ptrs;
  const size_t* binding_lengths;
};

struct IreeWorkgroupState {
  uint32_t workgroup_id_x;
  uint32_t workgroup_id_y;
  uint16_t workgroup_id_z;
  uint16_t reserved;
  uint32_t processor_id;
  void* local_memory;
  uint32_t local_memory_size;
};

using IreeDispatchFn = int (*)(const IreeEnvironment*, const IreeDispatchState*, const IreeWorkgroupState*);

// What the library declares about one export.
struct IreeExportInfo {
  std::string name;  // may be empty: older libraries carry no names
  uint8_t binding_count = 0;
  uint8_t constant_count = 0;
  uint16_t local_memory_pages = 0;  // x 4096 bytes
  std::array<uint32_t, 3> workgroup_size{{1, 1, 1}};
};

// One dispatch of an export.
struct IreeDispatch {
  std::vector<void*> bindings;           // one host pointer per binding, ordinal order
  std::vector<size_t> binding_lengths;   // bytes; empty = unknown (passed as 0)
  std::vector<uint32_t> constants;       // push constants
  std::array<uint32_t, 3> workgroup_count{{1, 1, 1}};
  // 0 = use the export's declared size (the kernel needs >= 1 per dimension).
  std::array<uint32_t, 3> workgroup_size{{0, 0, 0}};
};

class IreeExecutableLibrary {
 public:
  // Loads an embedded-ELF executable for this host and queries its library.
  static std::unique_ptr<IreeExecutableLibrary> load_file(const std::string& path);
  static std::unique_ptr<IreeExecutableLibrary> load_memory(const uint8_t* data, size_t size,
                                                            const std::string& origin = "<memory>");
  // Wraps an already loaded, executable image.
  explicit IreeExecutableLibrary(std::shared_ptr<ElfImage> image);

  uint32_t version() const { return version_; }
  const std::string& name() const { return name_; }
  size_t export_count() const { return exports_.size(); }
  const IreeExportInfo& export_info(size_t ordinal) const;
  // Ordinal of the export named `name`, or -1.
  int find_export(const std::string& name) const;

  // Runs export `ordinal` over every workgroup (inline, on this thread).
  // Throws graphrt::Error on argument mismatch or a non-zero kernel return.
  void dispatch(size_t ordinal, const IreeDispatch& call) const;

  const ElfImage& image() const { return *image_; }

 private:
  void read_library(const void* library);
  void read_exports(const uint8_t* library);
  void check_imports(const uint8_t* library);
  template <typename T>
  T read_field(const void* base, size_t offset) const;
  const char* checked_string(const char* s) const;

  std::shared_ptr<ElfImage> image_;
  IreeEnvironment environment_{};
  uint32_t version_ = 0;
  std::string name_;
  std::vector<IreeExportInfo> exports_;
  std::vector<IreeDispatchFn> functions_;
  // Backing storage for environment_.import_funcs / import_contexts.
  std::vector<int (*)(void*, void*, void*)> import_funcs_;
  std::vector<const void*> import_contexts_;
};

}  // namespace elf
}  // namespace graphrt
