#include "common/packed_args.h"

#include "graphrt/error.h"
#include "graphrt/registry.h"

namespace graphrt_apps {

graphrt::PackedFunc global_function(const std::string& name) {
  graphrt::PackedFunc f = graphrt::registry_get(name);
  if (!f) throw graphrt::Error("libgraphrt has no global function " + name);
  return f;
}

graphrt::RetValue call_packed(const graphrt::PackedFunc& f, const std::vector<graphrt::RetValue>& args) {
  return graphrt::call_with_values(f, args);
}

graphrt::RetValue int_arg(int64_t v) {
  graphrt::RetValue r;
  r.set_int(v);
  return r;
}

graphrt::RetValue float_arg(double v) {
  graphrt::RetValue r;
  r.set_float(v);
  return r;
}

graphrt::RetValue string_arg(std::string s) {
  graphrt::RetValue r;
  r.set_string(std::move(s));
  return r;
}

graphrt::RetValue bytes_arg(std::string bytes) {
  graphrt::RetValue r;
  r.set_bytes(std::move(bytes));
  return r;
}

graphrt::RetValue module_arg(graphrt::Module m) {
  graphrt::RetValue r;
  r.set_module(std::move(m));
  return r;
}

graphrt::RetValue function_arg(graphrt::PackedFunc f) {
  graphrt::RetValue r;
  r.set_function(std::move(f));
  return r;
}

graphrt::RetValue ndarray_arg(graphrt::NDArray a) {
  graphrt::RetValue r;
  r.set_ndarray(std::move(a));
  return r;
}

}  // namespace graphrt_apps
