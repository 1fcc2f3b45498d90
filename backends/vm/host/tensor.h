// graphrt::vm::Tensor — the tensor ref type of the VM.
//
// The VM only needs a DLTensor* view plus ownership. Two implementations:
// OwnedTensor keeps host memory it allocated (tensor.alloc), BorrowedTensor
// wraps a DLTensor* whose owner outlives the call (graph node arguments passed
// by the executor). When the core's NDArray is linked in, a third wrapper can
// hold an NDArray without the VM changing (see README.md, "Integration").
#pragma once

#include <dlpack/dlpack.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "backends/vm/host/memory_charge.h"
#include "backends/vm/host/ref.h"

namespace graphrt {
namespace vm {

class Tensor : public VmObject {
 public:
  static constexpr ObjectKind kKind = ObjectKind::kTensor;
  ObjectKind kind() const override { return kKind; }
  virtual DLTensor* dl() = 0;

  int64_t element_count();
  // Host pointer to element `index` (bounds- and device-checked).
  void* element(int64_t index);
};

class OwnedTensor : public Tensor {
 public:
  // Host (kDLCPU) tensor, zero-filled. Throws on a bad dtype or a size over
  // limits().max_tensor_bytes.
  OwnedTensor(std::vector<int64_t> shape, DLDataType dtype);
  DLTensor* dl() override { return &tensor_; }

 private:
  std::vector<int64_t> shape_;
  MemoryCharge charge_;  // charged before storage_ allocates
  std::vector<uint8_t> storage_;
  DLTensor tensor_{};
};

class BorrowedTensor : public Tensor {
 public:
  explicit BorrowedTensor(DLTensor* tensor) : tensor_(tensor) {}
  DLTensor* dl() override { return tensor_; }

 private:
  DLTensor* tensor_;
};

// Size in bytes of one element (bits*lanes rounded up to bytes).
int64_t dtype_bytes(DLDataType dtype);

}  // namespace vm
}  // namespace graphrt
