// Storage for one call's arguments or a value's parts: on the stack for up to N (every kernel
// launch, every shape and tuple a model makes), else on the heap. The hot paths that build
// argument arrays per call use it, so none of them allocates in a steady run.
#pragma once

#include <vector>

namespace graphrt {

template <typename T, int N = 16>
class CallBuffer {
 public:
  explicit CallBuffer(int n = 0) { reserve(n); }
  CallBuffer(const CallBuffer&) = delete;
  CallBuffer& operator=(const CallBuffer&) = delete;
  // Room for n; what was written before is not kept when n is past N.
  void reserve(int n) {
    if (n <= N) return;
    heap_.resize(static_cast<size_t>(n));
    data_ = heap_.data();
  }
  T* data() const { return data_; }
  T& operator[](int i) const { return data_[i]; }

 private:
  T stack_[N];
  std::vector<T> heap_;
  T* data_ = stack_;
};

}  // namespace graphrt
