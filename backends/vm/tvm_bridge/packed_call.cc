#include "backends/vm/tvm_bridge/packed_call.h"

#include <limits>
#include <vector>

#include "graphrt/error.h"
#include "graphrt/ndarray.h"
#include "graphrt/runtime.h"
#include "backends/vm/host/buffer.h"
#include "backends/vm/host/signature.h"
#include "backends/vm/host/tensor.h"

namespace graphrt {
namespace vm {
namespace {

bool is_int_code(int code) { return code == kTVMArgInt || code == kTVMArgBool; }

// A tensor ref over an NDArray, which it keeps alive (a VM list or global may
// hold it after the call).
class NDArrayTensor : public Tensor {
 public:
  explicit NDArrayTensor(NDArray array) : array_(std::move(array)) {}
  DLTensor* dl() override { return array_.handle(); }

 private:
  NDArray array_;
};

Value to_value(const TVMArgs& args, int i, ValueType type) {
  const int code = args.code(i);
  switch (type) {
    case ValueType::kI32: {
      if (!is_int_code(code)) break;
      const int64_t v = args.as_int(i);
      if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
        throw Error(ErrorKind::kOutOfRange, "value " + std::to_string(v) + " does not fit in i32");
      }
      return Value::from_i32(static_cast<int32_t>(v));
    }
    case ValueType::kI64:
      if (!is_int_code(code)) break;
      return Value::from_i64(args.as_int(i));
    case ValueType::kF32:
      if (code != kTVMArgFloat && !is_int_code(code)) break;
      return Value::from_f32(static_cast<float>(args.as_float(i)));
    case ValueType::kF64:
      if (code != kTVMArgFloat && !is_int_code(code)) break;
      return Value::from_f64(args.as_float(i));
    case ValueType::kRef:
      if (code == kTVMNullptr) return Value::from_ref(nullptr);
      if (code == kTVMNDArrayHandle) return Value::from_ref(std::make_shared<NDArrayTensor>(args.as_ndarray(i)));
      if (code == kTVMDLTensorHandle) return Value::from_ref(std::make_shared<BorrowedTensor>(args.as_tensor(i)));
      if (code == kTVMBytes || code == kTVMStr) {
        const std::string bytes = args.as_string(i);
        return Value::from_ref(std::make_shared<Buffer>(std::vector<uint8_t>(bytes.begin(), bytes.end()), true));
      }
      if (code == kTVMObjectHandle) {
        const graphrt::Ref<graphrt::Object> object = args.as_object(i);
        if (auto* list = dynamic_cast<ListObject*>(object.get())) return Value::from_ref(list->list());
        throw Error(ErrorKind::kTypeMismatch,
                    std::string("expected ref, got an object of type ") + object->object_type_key());
      }
      break;
  }
  throw Error(ErrorKind::kTypeMismatch,
              std::string("expected ") + value_type_name(type) + ", got TVM type code " + std::to_string(code));
}

NDArray copy_to_ndarray(DLTensor* t) {
  std::vector<int64_t> shape(t->shape, t->shape + t->ndim);
  NDArray out = NDArray::empty(shape, t->dtype, DLDevice{kDLCPU, 0});
  out.copy_from(t);
  return out;
}

void set_result(const Value& v, RetValue* ret) {
  switch (v.type) {
    case ValueType::kI32: ret->set_int(v.i32); return;
    case ValueType::kI64: ret->set_int(v.i64); return;
    case ValueType::kF32: ret->set_float(v.f32); return;
    case ValueType::kF64: ret->set_float(v.f64); return;
    case ValueType::kRef: break;
  }
  if (!v.ref) return ret->set_none();
  if (Tensor* t = ref_as<Tensor>(v.ref)) return ret->set_ndarray(copy_to_ndarray(t->dl()));
  if (Buffer* b = ref_as<Buffer>(v.ref)) return ret->set_bytes(b->as_string());
  if (!ref_as<List>(v.ref)) throw Error(ErrorKind::kInternal, "result of an unknown ref type");
  ret->set_object(make_ref<ListObject>(std::static_pointer_cast<List>(v.ref), false));
}

// Several results as one "graphrt.vm.Results" list.
void set_results(std::vector<Value> results, RetValue* ret) {
  if (results.empty()) return ret->set_none();
  if (results.size() == 1) return set_result(results[0], ret);
  auto list = std::make_shared<List>();
  list->resize(static_cast<int64_t>(results.size()));
  for (size_t k = 0; k < results.size(); ++k) list->set(static_cast<int64_t>(k), std::move(results[k]));
  ret->set_object(make_ref<ListObject>(std::move(list), true));
}

const std::shared_ptr<List>& list_arg(const TVMArgs& args, int i, const char* function) {
  const graphrt::Ref<graphrt::Object> object = args.code(i) == kTVMObjectHandle ? args.as_object(i) : graphrt::Ref<graphrt::Object>();
  auto* list = dynamic_cast<ListObject*>(object.get());
  if (!list) throw Error(ErrorKind::kTypeMismatch,
                         std::string(function) + ": argument " + std::to_string(i) + " is not a VM list");
  return list->list();
}

ValueType type_of_letter(char c) {
  for (int t = 0; t < kValueTypeCount; ++t) {
    if (value_type_letter(static_cast<ValueType>(t)) == c) return static_cast<ValueType>(t);
  }
  throw Error(std::string("graphrt.vm.list: '") + c + "' is not a type letter (i I f F r)");
}

}  // namespace

PackedFunc make_packed_call(const std::string& name, const std::string& signature, VmCall call,
                            std::shared_ptr<Limits> limits) {
  const Signature sig = parse_signature(signature);
  if (sig.is_variadic()) {
    throw Error(ErrorKind::kUnsupported,
                "VM function '" + name + "' is variadic (" + signature + "): hosts cannot call it");
  }
  const std::vector<ValueType> types = sig.arg_types();
  return make_function([call, name, types, limits](const TVMArgs& args, RetValue* ret) {
    LimitsScope scope(limits);
    if (static_cast<size_t>(args.size()) != types.size()) {
      throw Error(ErrorKind::kTypeMismatch,
                  "VM function '" + name + "' takes " + std::to_string(types.size()) + " arguments, got " +
                  std::to_string(args.size()));
    }
    std::vector<Value> values;
    values.reserve(types.size());
    for (size_t i = 0; i < types.size(); ++i) {
      try {
        values.push_back(to_value(args, static_cast<int>(i), types[i]));
      } catch (Error& e) {
        throw e.with("function", name).with("argument", std::to_string(i));
      }
    }
    set_results(call(values), ret);
  }, name);
}

void register_list_functions(Runtime& runtime, const std::shared_ptr<Limits>& limits) {
  runtime.set_function("graphrt.vm.list", make_function([limits](const TVMArgs& args, RetValue* ret) {
    LimitsScope scope(limits);
    if (args.size() < 1 || args.code(0) != kTVMStr) throw Error("graphrt.vm.list(types, item...): types missing");
    const std::string types = args.as_string(0);
    if (types.size() != static_cast<size_t>(args.size() - 1)) {
      throw Error("graphrt.vm.list: " + std::to_string(types.size()) + " type letters for " +
                  std::to_string(args.size() - 1) + " items");
    }
    auto list = std::make_shared<List>();
    list->resize(static_cast<int64_t>(types.size()));
    for (size_t k = 0; k < types.size(); ++k) {
      try {
        list->set(static_cast<int64_t>(k), to_value(args, static_cast<int>(k + 1), type_of_letter(types[k])));
      } catch (Error& e) {
        throw e.with("function", "graphrt.vm.list").with("item", std::to_string(k));
      }
    }
    ret->set_object(make_ref<ListObject>(std::move(list), false));
  }, "graphrt.vm.list"));
  runtime.set_function("graphrt.vm.list_size", make_function([](const TVMArgs& args, RetValue* ret) {
    ret->set_int(list_arg(args, 0, "graphrt.vm.list_size")->size());
  }, "graphrt.vm.list_size"));
  runtime.set_function("graphrt.vm.list_get", make_function([](const TVMArgs& args, RetValue* ret) {
    const std::shared_ptr<List>& list = list_arg(args, 0, "graphrt.vm.list_get");
    const int64_t index = args.as_int(1);
    if (index < 0 || index >= list->size()) {
      throw Error(ErrorKind::kOutOfRange,
                  "graphrt.vm.list_get: index " + std::to_string(index) + " out of range (size " +
                  std::to_string(list->size()) + ")");
    }
    set_result(list->at(index), ret);
  }, "graphrt.vm.list_get"));
  runtime.set_function("graphrt.vm.list_types", make_function([](const TVMArgs& args, RetValue* ret) {
    const std::shared_ptr<List>& list = list_arg(args, 0, "graphrt.vm.list_types");
    std::string letters;
    for (int64_t k = 0; k < list->size(); ++k) letters += value_type_letter(list->at(k).type);
    ret->set_string(letters);
  }, "graphrt.vm.list_types"));
}

}  // namespace vm
}  // namespace graphrt
