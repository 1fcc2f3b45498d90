// Intrusive reference counting for runtime objects (modules, functions, ...).
//
// Handles that cross the C ABI are raw Object pointers carrying one reference,
// as in TVM; inside C++ they live in Ref<T>.
#pragma once

#include "graphrt/export.h"

#include <atomic>
#include <cstdint>
#include <utility>

#pragma GCC visibility push(default)  // exported: see graphrt/export.h
namespace graphrt {

class Object {
 public:
  Object() = default;
  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;
  virtual ~Object() = default;

  void inc_ref() const { refs_.fetch_add(1, std::memory_order_relaxed); }
  void dec_ref() const {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
  int32_t ref_count() const { return refs_.load(std::memory_order_relaxed); }
  // TVM's type key for this kind of object ("runtime.Module", ...): what
  // TVMObjectGetTypeIndex reports to front ends that pick a class by it.
  virtual const char* object_type_key() const { return "runtime.Object"; }

  // Takes a reference only while the object is alive (count > 0), for caches
  // that must not keep their objects alive.
  bool try_inc_ref() const {
    int32_t n = refs_.load(std::memory_order_relaxed);
    while (n > 0) {
      if (refs_.compare_exchange_weak(n, n + 1, std::memory_order_acq_rel)) return true;
    }
    return false;
  }

 private:
  mutable std::atomic<int32_t> refs_{0};
};

}  // namespace graphrt
#pragma GCC visibility pop

// Header-only templates stay outside the exported block: each program
// instantiates its own copies, and libgraphrt's stay private.
namespace graphrt {

// Owning pointer to an intrusively refcounted T (T has inc_ref/dec_ref).
template <typename T>
class Ref {
 public:
  Ref() = default;
  Ref(std::nullptr_t) {}
  explicit Ref(T* ptr) : ptr_(ptr) {
    if (ptr_) ptr_->inc_ref();
  }
  Ref(const Ref& other) : Ref(other.ptr_) {}
  Ref(Ref&& other) noexcept : ptr_(other.ptr_) { other.ptr_ = nullptr; }
  template <typename U>
  Ref(const Ref<U>& other) : Ref(static_cast<T*>(other.get())) {}
  ~Ref() { reset(); }

  Ref& operator=(Ref other) noexcept {
    std::swap(ptr_, other.ptr_);
    return *this;
  }

  // Adopts a pointer that already carries one reference (from a C handle).
  static Ref adopt(T* ptr) {
    Ref r;
    r.ptr_ = ptr;
    return r;
  }
  // Gives up ownership of one reference (to hand it out through a C handle).
  T* release() {
    T* p = ptr_;
    ptr_ = nullptr;
    return p;
  }
  void reset() {
    if (ptr_) ptr_->dec_ref();
    ptr_ = nullptr;
  }

  T* get() const { return ptr_; }
  T* operator->() const { return ptr_; }
  T& operator*() const { return *ptr_; }
  explicit operator bool() const { return ptr_ != nullptr; }
  bool operator==(const Ref& o) const { return ptr_ == o.ptr_; }
  bool operator!=(const Ref& o) const { return ptr_ != o.ptr_; }

 private:
  T* ptr_ = nullptr;
};

template <typename T, typename... Args>
Ref<T> make_ref(Args&&... args) {
  return Ref<T>(new T(std::forward<Args>(args)...));
}

}  // namespace graphrt
