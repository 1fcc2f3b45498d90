// graphrt::vm refs: refcounted objects held in ref registers.
//
// A ref register holds a VmRef (a shared, refcounted pointer). Copying a ref
// retains, overwriting or destroying it releases, so the interpreter never
// frees objects by hand. The object kind is a small enum checked on every
// typed access, mirroring IREE's `iree_vm_ref_check`.
#pragma once

#include <memory>

namespace graphrt {
namespace vm {

enum class ObjectKind { kBuffer, kList, kTensor };

class VmObject {
 public:
  virtual ~VmObject() = default;
  virtual ObjectKind kind() const = 0;
};

using VmRef = std::shared_ptr<VmObject>;

const char* object_kind_name(ObjectKind kind);

// The object behind `ref` as T when it has T's kind, else nullptr.
template <typename T>
T* ref_as(const VmRef& ref) {
  if (!ref || ref->kind() != T::kKind) return nullptr;
  return static_cast<T*>(ref.get());
}

}  // namespace vm
}  // namespace graphrt
