#include "layer_api/user_mistakes.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "graphrt/error.h"
#include "graphrt/library.h"
#include "runtime_tables.h"

namespace graphrt {

namespace {

auto& tables() { return RuntimeTables::of(runtime()); }

const MisplacedFileKind* find_kind(const std::vector<MisplacedFileKind>& kinds, const uint8_t* head, size_t size) {
  for (const MisplacedFileKind& k : kinds)
    if (k.probe && k.probe(head, size)) return &k;
  return nullptr;
}

// The first bytes of a regular file (none when it is not one: a FIFO would block).
std::vector<uint8_t> file_head(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return {};
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return {};
  std::vector<uint8_t> head(kLibraryProbeBytes);
  head.resize(std::fread(head.data(), 1, head.size(), f));
  std::fclose(f);
  return head;
}

bool has_elf_magic(const uint8_t* head, size_t size) { return size >= 4 && std::memcmp(head, "\x7f" "ELF", 4) == 0; }

// .npy and .npz: numpy's formats, the inputs and outputs of a model.
bool is_npy(const uint8_t* head, size_t size) { return size >= 6 && std::memcmp(head, "\x93NUMPY", 6) == 0; }
bool is_zip(const uint8_t* head, size_t size) { return size >= 4 && std::memcmp(head, "PK\x03\x04", 4) == 0; }

}  // namespace

void register_misplaced_file_kind(Runtime& runtime, MisplacedFileKind kind) {
  auto& t = RuntimeTables::of(runtime);
  std::lock_guard<std::mutex> lock(t.mistakes_mutex);
  t.misplaced_files.push_back(std::move(kind));
}

void register_module_usage_hint(Runtime& runtime, const std::string& type_key, const std::string& hint) {
  auto& t = RuntimeTables::of(runtime);
  std::lock_guard<std::mutex> lock(t.mistakes_mutex);
  t.usage_hints[type_key] = hint;
}

void register_core_mistakes(Runtime& runtime) {
  register_misplaced_file_kind(runtime, {"an .npy array", "it holds a tensor (an input or an output), not a model", "",
                                         &is_npy});
  register_misplaced_file_kind(runtime, {"a zip archive (.npz)",
                                         "it holds tensors (inputs or outputs, as np.savez and tvmc write them), not "
                                         "a model", "", &is_zip});
}

void check_model_library_head(const uint8_t* head, size_t size, const std::string& origin) {
  check_model_library_head(runtime(), head, size, origin);
}

void check_model_library_head(Runtime& runtime, const uint8_t* head, size_t size, const std::string& origin) {
  if (has_elf_magic(head, size)) return;
  auto& t = RuntimeTables::of(runtime);
  std::lock_guard<std::mutex> lock(t.mistakes_mutex);
  const MisplacedFileKind* kind = find_kind(t.misplaced_files, head, size);
  if (!kind) return;
  Error e(origin + " is " + kind->what + ", not a model library: " + kind->advice);
  e.with("file", origin);
  if (!kind->option.empty()) e.with("option", kind->option);
  throw e;
}

void check_model_library_file(const std::string& path) {
  const std::vector<uint8_t> head = file_head(path);
  check_model_library_head(head.data(), head.size(), path);
}

std::string describe_misplaced_file(const std::string& path) {
  const std::vector<uint8_t> head = file_head(path);
  auto& t = tables();
  std::lock_guard<std::mutex> lock(t.mistakes_mutex);
  const MisplacedFileKind* kind = find_kind(t.misplaced_files, head.data(), head.size());
  return kind ? kind->what : "";
}

std::string module_usage_hint(const std::string& type_key) { return module_usage_hint(runtime(), type_key); }

std::string module_usage_hint(const Runtime& runtime, const std::string& type_key) {
  auto& t = RuntimeTables::of(runtime);
  std::lock_guard<std::mutex> lock(t.mistakes_mutex);
  auto it = t.usage_hints.find(type_key);
  return it == t.usage_hints.end() ? "" : it->second;
}

}  // namespace graphrt
