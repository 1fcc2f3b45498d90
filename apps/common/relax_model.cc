#include "relax_model.h"

#include "graphrt/registry.h"
#include "graphrt/relax_vm.h"

namespace graphrt_apps {

using graphrt::Error;

bool is_relax_executable(const graphrt::Module& root) {
  const std::string key = root->type_key();
  return key == "relax.VMExecutable" || key == "relax.Executable";
}

namespace {

graphrt::PackedFunc global(const char* name) {
  graphrt::PackedFunc f = graphrt::registry_get(name);
  if (!f) throw Error(graphrt::ErrorKind::kNotFound, std::string("global function '") + name + "' missing");
  return f;
}

// A value that is no tensor as one, so that it is written like the tensors:
// an int or float (R.Prim) a 0-d int64 or float64 array, a shape (R.Shape)
// a 1-d int64 array.
graphrt::NDArray scalar_array(const void* data, DLDataType dtype, const std::vector<int64_t>& shape) {
  graphrt::NDArray a = graphrt::NDArray::empty(shape, dtype, graphrt::cpu());
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  a.copy_from_bytes(data, n * 8);
  return a;
}

bool is_shape(const graphrt::RetValue& v) {
  graphrt::Ref<graphrt::Object> obj = v.as_args().as_object(0);
  return obj.get() && std::string(obj->object_type_key()) == "runtime.ShapeTuple";
}

graphrt::NDArray shape_array(const graphrt::RetValue& v) {
  graphrt::RetValue size;
  global("runtime.GetShapeTupleSize")->call(v.as_args(), &size);
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < size.as_int(); ++i) {
    TVMValue values[2] = {v.value(), TVMValue{}};
    values[1].v_int64 = i;
    int codes[2] = {kTVMObjectHandle, kDLInt};
    graphrt::RetValue dim;
    global("runtime.GetShapeTupleElem")->call(graphrt::TVMArgs(values, codes, 2), &dim);
    dims.push_back(dim.as_int());
  }
  return scalar_array(dims.data(), DLDataType{kDLInt, 64, 1}, {static_cast<int64_t>(dims.size())});
}

void flatten(const graphrt::RetValue& v, std::vector<graphrt::NDArray>* out, std::string* structure) {
  if (v.code() == kTVMNDArrayHandle) {
    out->push_back(v.as_ndarray());
    *structure += "tensor";
    return;
  }
  if (v.code() == kDLInt || v.code() == kTVMArgBool) {
    const int64_t i = v.as_int();
    out->push_back(scalar_array(&i, DLDataType{kDLInt, 64, 1}, {}));
    *structure += "int";
    return;
  }
  if (v.code() == kDLFloat) {
    const double d = v.as_float();
    out->push_back(scalar_array(&d, DLDataType{kDLFloat, 64, 1}, {}));
    *structure += "float";
    return;
  }
  if (v.code() != kTVMObjectHandle) throw Error(std::string("result holds a ") + graphrt::type_code_name(v.code()));
  if (is_shape(v)) {
    out->push_back(shape_array(v));
    *structure += "shape";
    return;
  }
  // ArgList has no object slot: the tuple is passed as the value it came in.
  graphrt::RetValue size;
  global("runtime.ArraySize")->call(v.as_args(), &size);
  const int64_t n = size.as_int();
  *structure += "tuple[";
  for (int64_t i = 0; i < n; ++i) {
    TVMValue values[2] = {v.value(), TVMValue{}};
    values[1].v_int64 = i;
    int codes[2] = {kTVMObjectHandle, kDLInt};
    graphrt::RetValue item;
    global("runtime.ArrayGetItem")->call(graphrt::TVMArgs(values, codes, 2), &item);
    if (i) *structure += ", ";
    flatten(item, out, structure);
  }
  *structure += "]";
}

}  // namespace

namespace {

// The session layer's view of `root` (metadata only: the Relax VM it makes runs on the CPU).
std::shared_ptr<graphrt::Model> relax_model_of(const graphrt::Module& root) {
  graphrt::Session session(graphrt::runtime(), graphrt::cpu());
  return session.open(root, {});
}

}  // namespace

RelaxFunction open_relax_function(const graphrt::Module& root, const std::string& name, DLDevice dev) {
  const std::shared_ptr<graphrt::Model> model = relax_model_of(root);
  const graphrt::FunctionSpec& spec = model->function(name);
  RelaxFunction f;
  f.relax = std::make_shared<graphrt::RelaxVM>(root, dev);
  f.vm = f.relax->module();
  f.name = spec.name;
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    const graphrt::TensorSpec& t = spec.inputs[i];
    f.param_names.push_back(t.name);
    f.params.push_back(RelaxParamSignature{f.relax->param_signature(f.name, static_cast<int64_t>(i)), t.known,
                                           t.known ? t.dtype : DLDataType{0, 0, 0}, t.shape, t.symbols});
  }
  return f;
}

std::vector<std::string> relax_function_signatures(const graphrt::Module& root) {
  const std::shared_ptr<graphrt::Model> model = relax_model_of(root);
  const graphrt::RelaxVM vm(root);
  std::vector<std::string> out;
  for (const graphrt::FunctionSpec& f : model->functions()) {
    std::string line = f.name + "(";
    for (size_t i = 0; i < f.inputs.size(); ++i)
      line += (i ? ", " : "") + f.inputs[i].name + ": " + vm.param_signature(f.name, static_cast<int64_t>(i));
    out.push_back(line + ")");
  }
  return out;
}

std::vector<graphrt::NDArray> flatten_relax_result(const graphrt::RetValue& result, std::string* structure) {
  std::vector<graphrt::NDArray> out;
  structure->clear();
  flatten(result, &out, structure);
  return out;
}

}  // namespace graphrt_apps
