#include "abi/tvm_object_abi.h"

#include "graphrt/export.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>

namespace graphrt {

namespace {

constexpr uint32_t kRuntimeArrayTypeIndex = 4;
constexpr uint32_t kRuntimeNDArrayTypeIndex = 2;

struct TvmObjectHeader {
  uint32_t type_index;
  std::atomic<int32_t> ref_counter;
  void (*deleter)(TvmObjectHeader*);
};
static_assert(sizeof(TvmObjectHeader) == 16, "TVM Object header is 16 bytes on LP64");

// TVM's NDArray::Container: Object header, then DLTensor, then a
// manager_ctx pointer (DLPack interop), then the shape storage it owns.
struct TvmNDArrayContainer {
  TvmObjectHeader header;
  DLTensor dl;
  void* manager_ctx;
  NDArray keep_alive;  // graphrt-side owner; placed after TVM's fields
};

struct TvmArrayNode {
  TvmObjectHeader header;
  int64_t size;
  int64_t capacity;
};

void delete_ndarray(TvmObjectHeader* obj) {
  std::unique_ptr<TvmNDArrayContainer> owned(reinterpret_cast<TvmNDArrayContainer*>(obj));
}

void delete_array(TvmObjectHeader* obj) {
  auto* array = reinterpret_cast<TvmArrayNode*>(obj);
  auto** slots = reinterpret_cast<TvmObjectHeader**>(array + 1);
  for (int64_t i = 0; i < array->size; ++i) {
    if (slots[i] && slots[i]->ref_counter.fetch_sub(1) == 1) slots[i]->deleter(slots[i]);
  }
  std::unique_ptr<char[]> storage(reinterpret_cast<char*>(array));
  array->~TvmArrayNode();
}

}  // namespace

void* tvm_array_of_ndarrays(const std::vector<NDArray>& arrays) {
  size_t bytes = sizeof(TvmArrayNode) + arrays.size() * sizeof(void*);
  std::unique_ptr<char[]> storage(new char[bytes]);
  auto* array = new (storage.get()) TvmArrayNode();
  array->header.type_index = kRuntimeArrayTypeIndex;
  array->header.ref_counter.store(1);
  array->header.deleter = &delete_array;
  array->size = static_cast<int64_t>(arrays.size());
  array->capacity = array->size;
  auto** slots = reinterpret_cast<TvmObjectHeader**>(array + 1);
  for (size_t i = 0; i < arrays.size(); ++i) {
    auto container = std::make_unique<TvmNDArrayContainer>();
    container->header.type_index = kRuntimeNDArrayTypeIndex;
    container->header.ref_counter.store(1);
    container->header.deleter = &delete_ndarray;
    container->dl = *arrays[i].handle();
    container->manager_ctx = nullptr;
    container->keep_alive = arrays[i];
    slots[i] = &container.release()->header;
  }
  storage.release();
  return array;
}

void tvm_object_release(void* object) {
  auto* obj = static_cast<TvmObjectHeader*>(object);
  if (obj && obj->ref_counter.fetch_sub(1) == 1) obj->deleter(obj);
}

}  // namespace graphrt

// Out-of-line members of tvm::runtime that header-inline TVM code calls.
// Declared with TVM's names so C++-compiled BYOC libraries resolve against
// libgraphrt; only the behaviour such code relies on is provided.
namespace tvm {
namespace runtime {

class Object {
 public:
  static uint32_t GetOrAllocRuntimeTypeIndex(const std::string& key, uint32_t static_tindex,
                                             uint32_t parent_tindex, uint32_t num_child_slots,
                                             bool child_slots_can_overflow);
  static std::string TypeIndex2Key(uint32_t tindex);
  bool DerivedFrom(uint32_t parent_tindex) const;

 private:
  uint32_t type_index_;
};

namespace {
std::mutex& type_mutex() {
  static std::mutex m;
  return m;
}
std::vector<std::string>& type_keys() {
  static std::vector<std::string>* keys = new std::vector<std::string>(64);
  return *keys;
}
}  // namespace

GRAPHRT_API uint32_t Object::GetOrAllocRuntimeTypeIndex(
    const std::string& key, uint32_t static_tindex, uint32_t, uint32_t, bool) {
  std::lock_guard<std::mutex> lock(type_mutex());
  auto& keys = type_keys();
  for (size_t i = 0; i < keys.size(); ++i) {
    if (keys[i] == key) return static_cast<uint32_t>(i);
  }
  uint32_t index = static_tindex;
  if (index == 0 || index >= keys.size() || !keys[index].empty()) {
    index = static_cast<uint32_t>(keys.size());
    keys.emplace_back();
  }
  keys[index] = key;
  return index;
}

GRAPHRT_API std::string Object::TypeIndex2Key(uint32_t tindex) {
  std::lock_guard<std::mutex> lock(type_mutex());
  if (tindex < type_keys().size() && !type_keys()[tindex].empty()) return type_keys()[tindex];
  return "runtime.Object#" + std::to_string(tindex);
}

GRAPHRT_API bool Object::DerivedFrom(uint32_t parent_tindex) const {
  return parent_tindex == 0 || parent_tindex == type_index_;
}

namespace detail {
// Matches the layout TVM's inline logging code writes into.
struct LogFatal {
  struct Entry {
    std::ostringstream stream_;
    std::string file_;
    int lineno_;
  };
  static Entry& GetEntry();
};
GRAPHRT_API LogFatal::Entry& LogFatal::GetEntry() {
  thread_local Entry entry;
  return entry;
}
}  // namespace detail

GRAPHRT_API std::string Backtrace() { return "(backtrace unavailable in graphrt)"; }

}  // namespace runtime
}  // namespace tvm
