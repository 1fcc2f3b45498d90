// TVM's object type indices and keys, as front ends see them through
// TVMObjectGetTypeIndex / TVMObjectTypeKey2Index / TVMObjectTypeIndex2Key.
//
// The first indices are TVM's static ones (0 runtime.Object, 1 runtime.Module,
// 2 runtime.NDArray, ... 7 runtime.PackedFunc, ... 11 runtime.ADT); a key
// graphrt meets that is not among them gets the next free index, deriving
// from runtime.Object only.
#pragma once

#include <cstdint>
#include <string>

#include "graphrt/object.h"

namespace graphrt {

constexpr uint32_t kObjectTypeIndexRoot = 0;
constexpr uint32_t kObjectTypeIndexNDArray = 2;

uint32_t object_type_index(const Object& object);
// Throws an Error naming the key when it is unknown.
uint32_t object_type_index_of_key(const std::string& key);
// Throws an Error naming the index when it is unknown.
std::string object_type_key_of_index(uint32_t index);
// True when `child` is `parent` or derives from it.
bool object_type_derived_from(uint32_t child, uint32_t parent);

}  // namespace graphrt
