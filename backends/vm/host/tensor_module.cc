#include "backends/vm/host/tensor_module.h"

#include <cstring>
#include <string>

#include "graphrt/error.h"
#include "backends/vm/host/tensor.h"

namespace graphrt {
namespace vm {
namespace {

Tensor& as_tensor(const VmRef& ref) {
  Tensor* t = ref_as<Tensor>(ref);
  if (!t) throw Error(ErrorKind::kTypeMismatch, ref ? "ref is not a tensor" : "null tensor ref");
  return *t;
}

[[noreturn]] void unsupported(DLDataType dtype) {
  throw Error(ErrorKind::kUnsupported,
              "unsupported tensor dtype for element access: code " + std::to_string(dtype.code) + " bits " +
              std::to_string(dtype.bits));
}

template <typename S, typename T>
T load_as(const void* p) {
  S s;
  std::memcpy(&s, p, sizeof(S));
  return static_cast<T>(s);
}
template <typename S, typename T>
void store_as(void* p, T v) {
  const S s = static_cast<S>(v);
  std::memcpy(p, &s, sizeof(S));
}

// Reads element `index` converted to T.
template <typename T>
T get_element(Tensor& t, int64_t index) {
  const DLDataType d = t.dl()->dtype;
  const void* p = t.element(index);
  if (d.lanes != 1) unsupported(d);
  if (d.code == kDLFloat && d.bits == 32) return load_as<float, T>(p);
  if (d.code == kDLFloat && d.bits == 64) return load_as<double, T>(p);
  if (d.code == kDLInt && d.bits == 8) return load_as<int8_t, T>(p);
  if (d.code == kDLInt && d.bits == 16) return load_as<int16_t, T>(p);
  if (d.code == kDLInt && d.bits == 32) return load_as<int32_t, T>(p);
  if (d.code == kDLInt && d.bits == 64) return load_as<int64_t, T>(p);
  if (d.code == kDLUInt && d.bits == 8) return load_as<uint8_t, T>(p);
  if (d.code == kDLUInt && d.bits == 16) return load_as<uint16_t, T>(p);
  if (d.code == kDLUInt && d.bits == 32) return load_as<uint32_t, T>(p);
  if (d.code == kDLUInt && d.bits == 64) return load_as<uint64_t, T>(p);
  unsupported(d);
}

template <typename T>
void set_element(Tensor& t, int64_t index, T v) {
  const DLDataType d = t.dl()->dtype;
  void* p = t.element(index);
  if (d.lanes != 1) unsupported(d);
  if (d.code == kDLFloat && d.bits == 32) return store_as<float>(p, v);
  if (d.code == kDLFloat && d.bits == 64) return store_as<double>(p, v);
  if (d.code == kDLInt && d.bits == 8) return store_as<int8_t>(p, v);
  if (d.code == kDLInt && d.bits == 16) return store_as<int16_t>(p, v);
  if (d.code == kDLInt && d.bits == 32) return store_as<int32_t>(p, v);
  if (d.code == kDLInt && d.bits == 64) return store_as<int64_t>(p, v);
  if (d.code == kDLUInt && d.bits == 8) return store_as<uint8_t>(p, v);
  if (d.code == kDLUInt && d.bits == 16) return store_as<uint16_t>(p, v);
  if (d.code == kDLUInt && d.bits == 32) return store_as<uint32_t>(p, v);
  if (d.code == kDLUInt && d.bits == 64) return store_as<uint64_t>(p, v);
  unsupported(d);
}

void tensor_alloc(NativeCall& c) {
  const int32_t code = c.i32(0), bits = c.i32(1), rank = c.i32(2);
  GRAPHRT_CHECK(code >= 0 && code <= 255 && bits > 0 && bits <= 64, "tensor.alloc: invalid dtype");
  std::vector<int64_t> shape;
  for (int32_t k = 0; k < rank; ++k) shape.push_back(c.i64(3 + static_cast<size_t>(k)));
  const DLDataType dtype{static_cast<uint8_t>(code), static_cast<uint8_t>(bits), 1};
  c.ret_ref(std::make_shared<OwnedTensor>(std::move(shape), dtype));
}

void tensor_dim(NativeCall& c) {
  DLTensor* t = as_tensor(c.ref(0)).dl();
  const int32_t axis = c.i32(1);
  if (axis < 0 || axis >= t->ndim) throw Error(ErrorKind::kOutOfRange,
                                               "tensor.dim: axis " + std::to_string(axis) + " out of range");
  c.ret_i64(t->shape[axis]);
}

void tensor_dtype(NativeCall& c) {
  const DLDataType d = as_tensor(c.ref(0)).dl()->dtype;
  c.ret_i32(d.code | (d.bits << 8) | (d.lanes << 16));
}

template <typename T>
NativeFunction getter(void (NativeCall::*ret)(T)) {
  return [ret](NativeCall& c) { (c.*ret)(get_element<T>(as_tensor(c.ref(0)), c.i64(1))); };
}

}  // namespace

std::shared_ptr<NativeModule> create_tensor_module() {
  auto m = std::make_shared<NativeModule>("tensor", 1);
  m->add_function("alloc", "0iiCID_r", tensor_alloc)
      .add_function("rank", "0r_i", [](NativeCall& c) { c.ret_i32(as_tensor(c.ref(0)).dl()->ndim); })
      .add_function("dim", "0ri_I", tensor_dim)
      .add_function("numel", "0r_I", [](NativeCall& c) { c.ret_i64(as_tensor(c.ref(0)).element_count()); })
      .add_function("dtype", "0r_i", tensor_dtype)
      .add_function("get_i32", "0rI_i", getter<int32_t>(&NativeCall::ret_i32))
      .add_function("get_i64", "0rI_I", getter<int64_t>(&NativeCall::ret_i64))
      .add_function("get_f32", "0rI_f", getter<float>(&NativeCall::ret_f32))
      .add_function("get_f64", "0rI_F", getter<double>(&NativeCall::ret_f64))
      .add_function("set_i32", "0rIi", [](NativeCall& c) { set_element(as_tensor(c.ref(0)), c.i64(1), c.i32(2)); })
      .add_function("set_i64", "0rII", [](NativeCall& c) { set_element(as_tensor(c.ref(0)), c.i64(1), c.i64(2)); })
      .add_function("set_f32", "0rIf", [](NativeCall& c) { set_element(as_tensor(c.ref(0)), c.i64(1), c.f32(2)); })
      .add_function("set_f64", "0rIF", [](NativeCall& c) { set_element(as_tensor(c.ref(0)), c.i64(1), c.f64(2)); });
  return m;
}

}  // namespace vm
}  // namespace graphrt
