#include "relax_model.h"

#include <algorithm>

#include "graphrt/registry.h"
#include "graphrt/relax_vm.h"

namespace graphrt_apps {

using graphrt::Error;

bool is_relax_executable(const graphrt::Module& root) {
  const std::string key = root->type_key();
  return key == "relax.VMExecutable" || key == "relax.Executable";
}

namespace {

std::vector<std::string> vm_functions(const graphrt::Module& vm) { return graphrt::RelaxVM::model_functions(vm); }

std::string pick_function(const graphrt::Module& vm, const std::string& requested) {
  const std::vector<std::string> names = vm_functions(vm);
  if (!requested.empty() && std::find(names.begin(), names.end(), requested) != names.end()) return requested;
  if (requested.empty() && std::find(names.begin(), names.end(), "main") != names.end()) return "main";
  if (requested.empty() && names.size() == 1) return names.front();
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  throw Error(graphrt::ErrorKind::kNotFound,
              (requested.empty() ? std::string("no 'main' function: choose one with --function")
                                 : "no function '" + requested + "'") +
                  " (functions: " + list + ")")
      .with("function", requested.empty() ? "main" : requested);
}

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

// "float32[n0, 784]": dims fixed, n<slot> symbolic, ? free; "float32[...]"
// (any rank) and "?" (nothing checked) are not known.
RelaxParamSignature parse_signature(const std::string& text) {
  RelaxParamSignature s;
  s.text = text;
  const size_t open = text.find('[');
  if (open == std::string::npos || text.back() != ']' || text.compare(open, 5, "[...]") == 0) return s;
  const std::string dtype = text.substr(0, open);
  if (dtype == "?") return s;
  s.dtype = graphrt::dtype_from_string(dtype);
  std::string dims = text.substr(open + 1, text.size() - open - 2);
  size_t pos = 0;
  while (pos < dims.size()) {
    size_t end = dims.find(',', pos);
    if (end == std::string::npos) end = dims.size();
    std::string d = dims.substr(pos, end - pos);
    d.erase(0, d.find_first_not_of(' '));
    if (!d.empty() && d[0] == 'n') {
      s.dims.push_back(-1);
      s.symbols.push_back(std::stoll(d.substr(1)));
    } else {
      s.dims.push_back(d == "?" ? -1 : std::stoll(d));
      s.symbols.push_back(-1);
    }
    pos = end + 1;
  }
  s.known = true;
  return s;
}

}  // namespace

namespace {

// A VM on `dev`, the host last (TVM's device list), pooled allocators.
graphrt::Module make_vm(const graphrt::Module& root, DLDevice dev) {
  graphrt::Module vm = graphrt::call_function(root->require_function("vm_load_executable"), graphrt::ArgList()).as_module();
  graphrt::ArgList init;
  if (dev.device_type != kDLCPU) init.add_int(dev.device_type).add_int(dev.device_id).add_int(2);
  init.add_int(kDLCPU).add_int(0).add_int(2);
  graphrt::call_function(vm->require_function("vm_initialization"), init);
  return vm;
}

}  // namespace

RelaxFunction open_relax_function(const graphrt::Module& root, const std::string& name, DLDevice dev) {
  RelaxFunction f;
  f.vm = make_vm(root, dev);
  f.name = pick_function(f.vm, name);
  graphrt::ArgList fn;
  fn.add_string(f.name);
  const int64_t arity = graphrt::call_function(f.vm->require_function("get_function_arity"), fn).as_int();
  for (int64_t i = 0; i < arity; ++i) {
    graphrt::ArgList q;
    q.add_string(f.name).add_int(i);
    f.param_names.push_back(graphrt::call_function(f.vm->require_function("get_function_param_name"), q).as_string());
    f.params.push_back(parse_signature(
        graphrt::call_function(f.vm->require_function("get_function_param_signature"), q).as_string()));
  }
  return f;
}

std::vector<std::string> relax_function_signatures(const graphrt::Module& root) {
  const graphrt::Module vm = make_vm(root, DLDevice{kDLCPU, 0});
  std::vector<std::string> out;
  for (const std::string& name : vm_functions(vm)) {
    const RelaxFunction f = open_relax_function(root, name);
    std::string line = name + "(";
    for (size_t i = 0; i < f.param_names.size(); ++i)
      line += (i ? ", " : "") + f.param_names[i] + ": " + f.params[i].text;
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
