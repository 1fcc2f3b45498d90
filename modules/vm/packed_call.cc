#include "modules/vm/packed_call.h"

#include <limits>
#include <vector>

#include "graphrt/error.h"
#include "graphrt/ndarray.h"
#include "modules/vm/buffer.h"
#include "modules/vm/signature.h"
#include "modules/vm/tensor.h"

namespace graphrt {
namespace vm {
namespace {

bool is_int_code(int code) { return code == kTVMArgInt || code == kTVMArgBool; }

// Tensors passed as NDArray handles stay alive in `arrays` for the call.
Value to_value(const TVMArgs& args, int i, ValueType type, std::vector<NDArray>* arrays) {
  const int code = args.code(i);
  switch (type) {
    case ValueType::kI32: {
      if (!is_int_code(code)) break;
      const int64_t v = args.as_int(i);
      if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
        throw Error("value " + std::to_string(v) + " does not fit in i32");
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
      if (code == kTVMNDArrayHandle) {
        arrays->push_back(args.as_ndarray(i));
        return Value::from_ref(std::make_shared<BorrowedTensor>(arrays->back().handle()));
      }
      if (code == kTVMDLTensorHandle) return Value::from_ref(std::make_shared<BorrowedTensor>(args.as_tensor(i)));
      if (code == kTVMBytes || code == kTVMStr) {
        const std::string bytes = args.as_string(i);
        return Value::from_ref(std::make_shared<Buffer>(std::vector<uint8_t>(bytes.begin(), bytes.end()), true));
      }
      break;
  }
  throw Error(std::string("expected ") + value_type_name(type) + ", got TVM type code " + std::to_string(code));
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
  throw Error("result of type vm.list cannot be returned through the PackedFunc ABI");
}

}  // namespace

PackedFunc make_packed_export(std::shared_ptr<Program> program, const std::string& name, graphrt::Module keep) {
  const int ordinal = program->module().lookup_export(name);
  GRAPHRT_CHECK(ordinal >= 0, "VM export not found: " + name);
  const Signature sig = parse_signature(program->module().exports()[static_cast<size_t>(ordinal)].signature);
  const std::vector<ValueType> types = sig.arg_types();
  // Several results are refused at call time, so that the function still lists.
  return make_function([program, keep, name, types, nresults = sig.results.size()](const TVMArgs& args,
                                                                                   RetValue* ret) {
    if (static_cast<size_t>(args.size()) != types.size()) {
      throw Error("VM function '" + name + "' takes " + std::to_string(types.size()) + " arguments, got " +
                  std::to_string(args.size()));
    }
    if (nresults > 1) {
      throw Error("VM function '" + name + "' returns " + std::to_string(nresults) +
                  " results; the PackedFunc ABI returns one (call it with graphrt-vm-run or the C++ API)");
    }
    std::vector<NDArray> arrays;
    std::vector<Value> values;
    values.reserve(types.size());
    for (size_t i = 0; i < types.size(); ++i) {
      try {
        values.push_back(to_value(args, static_cast<int>(i), types[i], &arrays));
      } catch (Error& e) {
        throw e.with("function", name).with("argument", std::to_string(i));
      }
    }
    std::vector<Value> results = program->call(name, values);
    if (results.empty()) return ret->set_none();
    set_result(results[0], ret);
  }, name);
}

}  // namespace vm
}  // namespace graphrt
