#include "iree_executable_library.h"

#include <sched.h>

#include <cstddef>
#include <cstring>

#include "graphrt/error.h"
#include "src/elf/elf_file.h"

namespace graphrt {
namespace elf {

// The ABI is a fixed binary layout: make any drift a compile error.
static_assert(sizeof(IreeEnvironment) == 96, "environment_v0 layout");
static_assert(offsetof(IreeEnvironment, processor_data) == 32, "environment_v0 layout");
static_assert(sizeof(IreeDispatchState) == 48, "dispatch_state_v0 layout");
static_assert(offsetof(IreeDispatchState, workgroup_count_x) == 12, "dispatch_state_v0 layout");
static_assert(offsetof(IreeDispatchState, max_concurrency) == 22, "dispatch_state_v0 layout");
static_assert(offsetof(IreeDispatchState, binding_ptrs) == 32, "dispatch_state_v0 layout");
static_assert(sizeof(IreeWorkgroupState) == 32, "workgroup_state_v0 layout");
static_assert(offsetof(IreeWorkgroupState, local_memory) == 16, "workgroup_state_v0 layout");

namespace {

// Byte offsets inside the library-owned structs, which are read field by
// field (bounds-checked) rather than trusted as C++ objects.
namespace lib {
constexpr size_t kHeader = 0, kImportCount = 8, kImportSymbols = 16, kExportCount = 24, kExportPtrs = 32,
                 kExportAttrs = 40, kExportNames = 64, kSize = 128;
}
namespace hdr {
constexpr size_t kVersion = 0, kName = 8, kSanitizer = 20, kSize = 24;
}
namespace attrs {
constexpr size_t kLocalPages = 8, kConstantCount = 10, kBindingCount = 11, kSizeX = 12, kSizeY = 16, kSizeZ = 20,
                 kSize = 64;
}
constexpr size_t kMaxBindings = 64;
constexpr size_t kMaxConstants = 64;
constexpr size_t kLocalMemoryPage = 4096;

// Import calls from the library arrive here; on SysV hosts the calling
// conventions already agree, so this is a plain forwarding call.
int import_thunk(int (*fn)(void*, void*, void*), void* params, void* context, void* reserved) {
  return fn(params, context, reserved);
}

using QueryFn = const void* (*)(uint32_t, const IreeEnvironment*);

Error lib_error(const std::string& what) { return Error("IREE executable library: " + what); }

}  // namespace

std::unique_ptr<IreeExecutableLibrary> IreeExecutableLibrary::load_file(const std::string& path) {
  return std::make_unique<IreeExecutableLibrary>(ElfImage::load_file(path));
}

std::unique_ptr<IreeExecutableLibrary> IreeExecutableLibrary::load_memory(const uint8_t* data, size_t size,
                                                                          const std::string& origin) {
  return std::make_unique<IreeExecutableLibrary>(ElfImage::load_memory(data, size, {}, origin));
}

IreeExecutableLibrary::IreeExecutableLibrary(std::shared_ptr<ElfImage> image) : image_(std::move(image)) {
  try {
    if (!image_->executable()) throw lib_error("image was loaded relocate-only and cannot run");
    void* query = image_->symbol(kIreeQuerySymbol);
    if (query == nullptr || !image_->is_code(query)) throw lib_error("no query function").with("symbol", kIreeQuerySymbol).with_kind(ErrorKind::kNotFound);
    const void* library = reinterpret_cast<QueryFn>(query)(kIreeLibraryVersion, &environment_);
    if (library == nullptr) throw lib_error("library does not support ABI version 6").with_kind(ErrorKind::kUnsupported);
    read_library(library);
  } catch (Error& e) {
    throw e.with("file", image_->origin());
  }
}

template <typename T>
T IreeExecutableLibrary::read_field(const void* base, size_t offset) const {
  const uint8_t* p = static_cast<const uint8_t*>(base) + offset;
  if (!image_->is_readable(p, sizeof(T))) throw lib_error("struct field outside the image").with("offset", hex(offset));
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

const char* IreeExecutableLibrary::checked_string(const char* s) const {
  for (size_t n = 0; n < 4096; ++n) {
    if (!image_->is_readable(s + n, 1)) throw lib_error("string outside the image");
    if (s[n] == '\0') return s;
  }
  throw lib_error("unterminated string");
}

void IreeExecutableLibrary::read_library(const void* library) {
  const uint8_t* lib = static_cast<const uint8_t*>(library);
  if (!image_->is_readable(lib, lib::kSize)) throw lib_error("library struct outside the image");
  const auto* header = read_field<const uint8_t*>(lib, lib::kHeader);
  if (!image_->is_readable(header, hdr::kSize)) throw lib_error("header outside the image");
  version_ = read_field<uint32_t>(header, hdr::kVersion);
  if (version_ != kIreeLibraryVersion) throw lib_error("unsupported version " + std::to_string(version_)).with_kind(ErrorKind::kUnsupported);
  name_ = checked_string(read_field<const char*>(header, hdr::kName));
  if (read_field<int32_t>(header, hdr::kSanitizer) != 0) throw lib_error("library was built with a sanitizer");
  check_imports(lib);
  read_exports(lib);
}

void IreeExecutableLibrary::check_imports(const uint8_t* lib) {
  const uint32_t count = read_field<uint32_t>(lib, lib::kImportCount);
  if (count == 0) return;
  const auto* symbols = read_field<const char* const*>(lib, lib::kImportSymbols);
  import_funcs_.assign(count, nullptr);
  import_contexts_.assign(count, nullptr);
  for (uint32_t i = 0; i < count; ++i) {
    const char* symbol = checked_string(read_field<const char*>(symbols, i * sizeof(char*)));
    // No import provider exists yet: optional imports ("?name") stay NULL,
    // which the library must handle; required ones cannot be satisfied.
    if (symbol[0] != '?') throw lib_error("library requires an import graphrt does not provide").with("symbol", symbol).with_kind(ErrorKind::kNotFound);
  }
  environment_.import_thunk = &import_thunk;
  environment_.import_funcs = import_funcs_.data();
  environment_.import_contexts = import_contexts_.data();
}

void IreeExecutableLibrary::read_exports(const uint8_t* lib) {
  const uint32_t count = read_field<uint32_t>(lib, lib::kExportCount);
  const auto* ptrs = read_field<const uint8_t*>(lib, lib::kExportPtrs);
  const auto* attr_table = read_field<const uint8_t*>(lib, lib::kExportAttrs);
  const auto* names = read_field<const uint8_t*>(lib, lib::kExportNames);
  for (uint32_t i = 0; i < count; ++i) {
    void* fn = read_field<void*>(ptrs, i * sizeof(void*));
    if (!image_->is_code(fn)) throw lib_error("export does not point into the image's code").with("ordinal", std::to_string(i));
    functions_.push_back(reinterpret_cast<IreeDispatchFn>(fn));
    IreeExportInfo info;
    if (names != nullptr) info.name = checked_string(read_field<const char*>(names, i * sizeof(char*)));
    if (attr_table != nullptr) {  // attrs are optional in old libraries: defaults then
      const uint8_t* a = attr_table + i * attrs::kSize;
      info.local_memory_pages = read_field<uint16_t>(a, attrs::kLocalPages);
      info.constant_count = read_field<uint8_t>(a, attrs::kConstantCount);
      info.binding_count = read_field<uint8_t>(a, attrs::kBindingCount);
      info.workgroup_size = {read_field<uint32_t>(a, attrs::kSizeX), read_field<uint32_t>(a, attrs::kSizeY),
                             read_field<uint16_t>(a, attrs::kSizeZ)};
    }
    exports_.push_back(info);
  }
}

const IreeExportInfo& IreeExecutableLibrary::export_info(size_t ordinal) const {
  if (ordinal >= exports_.size()) throw lib_error("export ordinal out of range").with("ordinal", std::to_string(ordinal)).with_kind(ErrorKind::kOutOfRange);
  return exports_[ordinal];
}

int IreeExecutableLibrary::find_export(const std::string& name) const {
  for (size_t i = 0; i < exports_.size(); ++i) {
    if (exports_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

namespace {

void check_dispatch(const IreeExportInfo& info, const IreeDispatch& call) {
  if (call.bindings.size() > kMaxBindings || call.constants.size() > kMaxConstants)
    throw lib_error("too many bindings or constants");
  if (info.binding_count != 0 && call.bindings.size() != info.binding_count)
    throw lib_error("export expects " + std::to_string(info.binding_count) + " bindings, got " +
                    std::to_string(call.bindings.size()));
  if (call.constants.size() != info.constant_count)
    throw lib_error("export expects " + std::to_string(info.constant_count) + " constants, got " +
                    std::to_string(call.constants.size()));
  if (!call.binding_lengths.empty() && call.binding_lengths.size() != call.bindings.size())
    throw lib_error("binding_lengths must match bindings");
  for (size_t i = 0; i < call.bindings.size(); ++i) {
    if (call.bindings[i] == nullptr) throw lib_error("null binding").with("binding", std::to_string(i));
  }
}

// Zero workgroup-size components mean "as declared", and 1 if undeclared:
// kernels step their loops by the size, so 0 would never terminate.
std::array<uint32_t, 3> effective_size(const IreeExportInfo& info, const IreeDispatch& call) {
  std::array<uint32_t, 3> size{};
  for (int d = 0; d < 3; ++d) {
    size[d] = call.workgroup_size[d] ? call.workgroup_size[d] : info.workgroup_size[d];
    if (size[d] == 0) size[d] = 1;
  }
  return size;
}

}  // namespace

void IreeExecutableLibrary::dispatch(size_t ordinal, const IreeDispatch& call) const {
  const IreeExportInfo& info = export_info(ordinal);
  try {
    check_dispatch(info, call);
  } catch (Error& e) {
    throw e.with("ordinal", std::to_string(ordinal)).with("file", image_->origin());
  }
  if (call.workgroup_count[2] > 0xffff) throw lib_error("workgroup_count z exceeds 16 bits");
  const std::array<uint32_t, 3> size = effective_size(info, call);
  std::vector<size_t> lengths = call.binding_lengths;
  lengths.resize(call.bindings.size(), 0);
  IreeDispatchState state{};
  state.workgroup_size_x = size[0];
  state.workgroup_size_y = size[1];
  state.workgroup_size_z = static_cast<uint16_t>(size[2]);
  state.constant_count = static_cast<uint16_t>(call.constants.size());
  state.workgroup_count_x = call.workgroup_count[0];
  state.workgroup_count_y = call.workgroup_count[1];
  state.workgroup_count_z = static_cast<uint16_t>(call.workgroup_count[2]);
  state.max_concurrency = 1;  // inline: one worker
  state.binding_count = static_cast<uint8_t>(call.bindings.size());
  state.constants = call.constants.empty() ? nullptr : call.constants.data();
  state.binding_ptrs = call.bindings.data();
  state.binding_lengths = lengths.data();

  // Workgroup-local scratch, 64-byte aligned, shared by the sequential workgroups.
  const size_t local_bytes = size_t(info.local_memory_pages) * kLocalMemoryPage;
  std::vector<uint8_t> local(local_bytes ? local_bytes + 64 : 0);
  void* local_ptr = nullptr;
  if (local_bytes) {
    size_t space = local.size();
    local_ptr = local.data();
    std::align(64, local_bytes, local_ptr, space);
  }
  alignas(64) IreeWorkgroupState wg{};
  wg.local_memory = local_ptr;
  wg.local_memory_size = static_cast<uint32_t>(local_bytes);
  const int cpu = sched_getcpu();
  wg.processor_id = cpu < 0 ? 0 : static_cast<uint32_t>(cpu);
  for (uint32_t z = 0; z < call.workgroup_count[2]; ++z) {
    for (uint32_t y = 0; y < call.workgroup_count[1]; ++y) {
      for (uint32_t x = 0; x < call.workgroup_count[0]; ++x) {
        wg.workgroup_id_x = x;
        wg.workgroup_id_y = y;
        wg.workgroup_id_z = static_cast<uint16_t>(z);
        const int rc = functions_[ordinal](&environment_, &state, &wg);
        if (rc != 0)
          throw lib_error("entry point returned " + std::to_string(rc))
              .with("ordinal", std::to_string(ordinal))
              .with("file", image_->origin());
      }
    }
  }
}

}  // namespace elf
}  // namespace graphrt
