// The one reader of a result's structure (graphrt/value.h): packed values to
// Values, tuples read through ArrayObject, shapes through ShapeObject.
#include "graphrt/value.h"

#include "graphrt/error.h"
#include "graphrt/module.h"

namespace graphrt {

namespace {

const ArrayObject* array_of(const TVMArgs& args, int index) {
  if (args.code(index) != kTVMObjectHandle) return nullptr;
  return dynamic_cast<const ArrayObject*>(static_cast<const Object*>(args.value(index).v_handle));
}

const ShapeObject* shape_of(const TVMArgs& args, int index) {
  if (args.code(index) != kTVMObjectHandle) return nullptr;
  return dynamic_cast<const ShapeObject*>(static_cast<const Object*>(args.value(index).v_handle));
}

Value read(const TVMArgs& args, int index, size_t depth);

Value read_tuple(const ArrayObject& array, size_t depth) {
  if (depth >= Value::kMaxDepth)
    throw Error(ErrorKind::kResourceExhausted,
                "a tuple nested more than " + std::to_string(Value::kMaxDepth) + " levels deep");
  Value v;
  v.kind = Value::Kind::kTuple;
  const size_t n = array.size();
  v.items.reserve(n);
  RetValue item;
  for (size_t i = 0; i < n; ++i) {
    array.get_item(i, &item);
    v.items.push_back(read(item.as_args(), 0, depth + 1));
  }
  return v;
}

Value read(const TVMArgs& args, int index, size_t depth) {
  Value v;
  switch (args.code(index)) {
    case kTVMNullptr:
      return v;
    case kTVMNDArrayHandle:
    case kTVMDLTensorHandle:
      v.kind = Value::Kind::kTensor;
      v.tensor = args.as_ndarray(index);
      return v;
    case kDLInt:
    case kDLUInt:
    case kTVMArgBool:
      v.kind = Value::Kind::kInt;
      v.int_value = args.as_int(index);
      return v;
    case kDLFloat:
      v.kind = Value::Kind::kFloat;
      v.float_value = args.as_float(index);
      return v;
    case kTVMStr:
    case kTVMBytes:
      v.kind = Value::Kind::kString;
      v.string_value = args.as_string(index);
      return v;
    case kTVMObjectHandle:
    case kTVMModuleHandle:
    case kTVMPackedFuncHandle:
      break;
    default:
      throw Error(ErrorKind::kTypeMismatch, std::string("a value of type ") + type_code_name(args.code(index)) +
                                                " is no tensor, tuple, shape, int, float, string or object");
  }
  if (const ArrayObject* array = array_of(args, index)) return read_tuple(*array, depth);
  if (const ShapeObject* shape = shape_of(args, index)) {
    v.kind = Value::Kind::kShape;
    v.dims = shape->dims;
    return v;
  }
  v.object = args.as_object(index);
  v.kind = v.object ? Value::Kind::kObject : Value::Kind::kNone;
  return v;
}

void append_structure(const Value& v, std::string* out) {
  *out += value_kind_name(v.kind);
  if (v.kind != Value::Kind::kTuple) return;
  *out += "[";
  for (size_t i = 0; i < v.items.size(); ++i) {
    if (i) *out += ", ";
    append_structure(v.items[i], out);
  }
  *out += "]";
}

}  // namespace

Value Value::from(const RetValue& r) { return read(r.as_args(), 0, 0); }

Value Value::from_arg(const TVMArgs& args, int index) {
  if (index < 0 || index >= args.size())
    throw Error(ErrorKind::kOutOfRange, "argument " + std::to_string(index) + " of " + std::to_string(args.size()));
  return read(args, index, 0);
}

RetValue Value::to_packed() const {
  RetValue r;
  switch (kind) {
    case Kind::kNone: break;
    case Kind::kTensor: r.set_ndarray(tensor); break;
    case Kind::kInt: r.set_int(int_value); break;
    case Kind::kFloat: r.set_float(float_value); break;
    case Kind::kString: r.set_string(string_value); break;
    case Kind::kShape: r.set_object(Ref<Object>(make_ref<ShapeObject>(dims))); break;
    case Kind::kObject:
      // A module or function goes back under its own type code, as it came.
      if (auto* m = dynamic_cast<ModuleNode*>(object.get())) r.set_module(Module(m));
      else if (auto* f = dynamic_cast<FunctionNode*>(object.get())) r.set_function(PackedFunc(f));
      else r.set_object(object);
      break;
    case Kind::kTuple: {
      std::vector<RetValue> packed;
      packed.reserve(items.size());
      for (const Value& item : items) packed.push_back(item.to_packed());
      r.set_object(Ref<Object>(make_ref<TupleObject>(std::move(packed))));
      break;
    }
  }
  return r;
}

std::vector<NDArray> Value::flatten() const {
  std::vector<NDArray> out;
  append_tensors(&out);
  return out;
}

void Value::append_tensors(std::vector<NDArray>* out) const {
  if (kind == Kind::kTensor) out->push_back(tensor);
  for (const Value& item : items) item.append_tensors(out);
}

std::string Value::structure() const {
  std::string out;
  append_structure(*this, &out);
  return out;
}

const char* value_kind_name(Value::Kind kind) {
  switch (kind) {
    case Value::Kind::kNone: return "none";
    case Value::Kind::kTensor: return "tensor";
    case Value::Kind::kTuple: return "tuple";
    case Value::Kind::kShape: return "shape";
    case Value::Kind::kInt: return "int";
    case Value::Kind::kFloat: return "float";
    case Value::Kind::kString: return "string";
    case Value::Kind::kObject: return "object";
  }
  return "unknown";
}

Value::Kind value_kind_of(const TVMArgs& args, int index) {
  switch (args.code(index)) {
    case kTVMNullptr: return Value::Kind::kNone;
    case kTVMNDArrayHandle:
    case kTVMDLTensorHandle: return Value::Kind::kTensor;
    case kDLInt:
    case kDLUInt:
    case kTVMArgBool: return Value::Kind::kInt;
    case kDLFloat: return Value::Kind::kFloat;
    case kTVMStr:
    case kTVMBytes: return Value::Kind::kString;
    case kTVMObjectHandle:
    case kTVMModuleHandle:
    case kTVMPackedFuncHandle:
      if (array_of(args, index)) return Value::Kind::kTuple;
      if (shape_of(args, index)) return Value::Kind::kShape;
      return args.value(index).v_handle ? Value::Kind::kObject : Value::Kind::kNone;
    default:
      throw Error(ErrorKind::kTypeMismatch, std::string("a value of type ") + type_code_name(args.code(index)) +
                                                " is no tensor, tuple, shape, int, float, string or object");
  }
}

}  // namespace graphrt
