#include "relax_function.h"

#include "graphrt/relax_vm.h"

namespace graphrt_apps {

using graphrt::Error;

namespace {

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

void flatten(const graphrt::Value& v, std::vector<graphrt::NDArray>* out) {
  switch (v.kind) {
    case graphrt::Value::Kind::kTensor:
      out->push_back(v.tensor);
      return;
    case graphrt::Value::Kind::kInt:
      out->push_back(scalar_array(&v.int_value, DLDataType{kDLInt, 64, 1}, {}));
      return;
    case graphrt::Value::Kind::kFloat:
      out->push_back(scalar_array(&v.float_value, DLDataType{kDLFloat, 64, 1}, {}));
      return;
    case graphrt::Value::Kind::kShape:
      out->push_back(scalar_array(v.dims.data(), DLDataType{kDLInt, 64, 1}, {static_cast<int64_t>(v.dims.size())}));
      return;
    case graphrt::Value::Kind::kTuple:
      for (const graphrt::Value& item : v.items) flatten(item, out);
      return;
    default:
      throw Error(std::string("result holds a ") + graphrt::value_kind_name(v.kind) +
                  ", which is no tensor, tuple, shape, int or float");
  }
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

std::vector<graphrt::NDArray> flatten_relax_result(const graphrt::Value& result, std::string* structure) {
  std::vector<graphrt::NDArray> out;
  flatten(result, &out);
  *structure = result.structure();
  return out;
}

}  // namespace graphrt_apps
