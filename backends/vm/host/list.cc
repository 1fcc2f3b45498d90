#include "backends/vm/host/list.h"

#include <unordered_set>

#include "graphrt/error.h"
#include "backends/vm/host/limits.h"

namespace graphrt {
namespace vm {

void List::resize(int64_t size) {
  if (size < 0 || size > limits().max_list_size) {
    throw Error(ErrorKind::kResourceExhausted, "list size " + std::to_string(size) + " out of range");
  }
  items_.resize(static_cast<size_t>(size));
}

void List::reserve(int64_t capacity) {
  if (capacity < 0 || capacity > limits().max_list_size) {
    throw Error(ErrorKind::kResourceExhausted, "list capacity " + std::to_string(capacity) + " out of range");
  }
  items_.reserve(static_cast<size_t>(capacity));
}

void List::check_index(int64_t index) const {
  if (index < 0 || index >= size()) {
    throw Error(ErrorKind::kOutOfRange, "list index " + std::to_string(index) + " out of range (size " +
                std::to_string(size()) + ")");
  }
}

const Value& List::get(int64_t index, ValueType expected) const {
  check_index(index);
  const Value& v = items_[static_cast<size_t>(index)];
  if (v.type != expected) {
    throw Error(ErrorKind::kTypeMismatch, std::string("list element ") + std::to_string(index) + " is " +
                value_type_name(v.type) + ", not " + value_type_name(expected));
  }
  return v;
}

namespace {

// True when `target` is reachable from `start` through nested lists. Only
// lists hold refs, so every ref cycle goes through lists.
bool reaches(const List* start, const List* target) {
  std::vector<const List*> pending{start};
  std::unordered_set<const List*> seen;
  while (!pending.empty()) {
    const List* list = pending.back();
    pending.pop_back();
    if (list == target) return true;
    if (!seen.insert(list).second) continue;
    for (int64_t k = 0; k < list->size(); ++k) {
      const Value& v = list->at(k);
      if (const List* inner = v.type == ValueType::kRef ? ref_as<List>(v.ref) : nullptr) pending.push_back(inner);
    }
  }
  return false;
}

}  // namespace

void List::set(int64_t index, Value value) {
  check_index(index);
  // Refcounting cannot free cycles, so a set that would close one is a trap
  // (found by the fuzzer: a list stored into itself leaked).
  if (value.type == ValueType::kRef) {
    const List* inner = ref_as<List>(value.ref);
    if (inner && reaches(inner, this)) throw Error("list.set.ref would create a reference cycle");
  }
  items_[static_cast<size_t>(index)] = std::move(value);
}

}  // namespace vm
}  // namespace graphrt
