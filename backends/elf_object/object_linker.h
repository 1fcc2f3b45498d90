// LinkedObjects: relocatable objects (ET_REL) linked in-process into one
// loaded image, without a toolchain: what `g++ -shared` followed by dlopen
// would give, for the objects TVM's export_library puts in a .tar.
//
// Pipeline: lay out the allocated sections of every object (code, then
// read-only data + the GOT, then data + bss + COMMON, each section at its
// alignment, each group on its own pages) -> resolve symbols between the
// objects first, then through LoadOptions::imports only -> copy section bytes
// -> apply relocations (GOT slots and jump stubs built here) -> final
// protections (W^X: code R+X, read-only data and GOT R, data RW) ->
// .init_array. The destructor runs .fini_array in reverse and unmaps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "src/elf/elf_image.h"
#include "src/elf/elf_object.h"
#include "src/elf/elf_types.h"

namespace graphrt {
namespace elf {

class LinkedObjects {
 public:
  // Links `objects` (their bytes must stay valid during the call only).
  // Throws graphrt::Error naming the member and symbol at fault.
  static std::unique_ptr<LinkedObjects> link(const std::vector<ElfObject>& objects, const LoadOptions& options,
                                             const std::string& origin);
  ~LinkedObjects();
  LinkedObjects(const LinkedObjects&) = delete;
  LinkedObjects& operator=(const LinkedObjects&) = delete;

  // Address of an exported symbol (a defined GLOBAL/WEAK symbol of default
  // or protected visibility), or nullptr.
  void* symbol(const std::string& name) const;
  std::optional<SymbolInfo> find_symbol(const std::string& name) const;
  // Exported names; functions only when `functions_only`.
  std::vector<std::string> symbol_names(bool functions_only = false) const;
  // Symbols resolved through the import table.
  const std::vector<std::string>& imports() const { return imports_; }
  const std::string& origin() const { return origin_; }
  bool executable() const { return executable_; }
  bool contains(const void* p, size_t n) const;
  bool is_code(const void* p) const;
  // Bytes readable (or writable) from p to the end of its run of pages.
  size_t readable_bytes_from(const void* p, bool writable) const;
  // The linked image's pages as runs of one protection, in address order.
  std::vector<PageRun> page_runs() const;
  // Every exported symbol with its address, size and type.
  const std::map<std::string, SymbolInfo>& exports() const { return exports_; }

  struct State;  // loader internals (object_linker.cc)

 private:
  struct Key {
    explicit Key() = default;
  };

 public:
  LinkedObjects(Key, std::string origin);

 private:
  void run_finalizers() noexcept;

  std::string origin_;
  bool executable_ = false;
  std::vector<std::string> imports_;
  std::map<std::string, SymbolInfo> exports_;
  std::unique_ptr<State> state_;
};

}  // namespace elf
}  // namespace graphrt
