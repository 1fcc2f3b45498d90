// `const_loader` / `metadata` blob records: constants handed to
// the BYOC modules that need them, through their `__init_<symbol>` functions.
#include <map>
#include <mutex>
#include <set>

#include "graphrt/binary_loader.h"
#include "graphrt/runtime.h"
#include "graphrt/module.h"
#include "abi/tvm_object_abi.h"

namespace graphrt {

namespace {

class ConstLoaderModuleNode : public ModuleNode {
 public:
  ConstLoaderModuleNode(std::map<std::string, NDArray> constants, std::map<std::string, std::vector<std::string>> needs)
      : constants_(std::move(constants)), needs_(std::move(needs)) {}

  std::string type_key() const override { return "const_loader"; }

  PackedFunc find_function(const std::string& name, const Module& self) override {
    if (needs_.count(name)) initialize(name);
    if (name == "get_const_var_ndarray") return PackedFunc();  // Map objects are not exposed by graphrt
    (void)self;
    for (const Module& m : imports()) {
      PackedFunc f = m->get_function(name, false);
      if (f) return f;
    }
    return PackedFunc();
  }

  std::vector<std::string> function_names() const override {
    std::vector<std::string> names;
    for (const auto& kv : needs_) names.push_back(kv.first);
    return names;
  }

 private:
  void initialize(const std::string& symbol) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (initialized_.count(symbol)) return;
    PackedFunc init;
    for (const Module& m : imports()) {
      init = m->get_function("__init_" + symbol, false);
      if (init) break;
    }
    if (!init) throw Error(ErrorKind::kNotFound,
                           "const_loader: no __init_" + symbol + " in the imported modules").with("symbol", symbol);
    std::vector<NDArray> arrays;
    for (const std::string& c : needs_.at(symbol)) {
      auto it = constants_.find(c);
      if (it == constants_.end()) throw Error(ErrorKind::kNotFound,
                                              "const_loader: constant " + quote_untrusted(c) + " is missing").with("symbol", symbol);
      arrays.push_back(it->second);
    }
    void* array_object = tvm_array_of_ndarrays(arrays);
    TVMValue v;
    v.v_handle = array_object;
    int code = kTVMObjectHandle;
    RetValue ret;
    try {
      init->call(TVMArgs(&v, &code, 1), &ret);
    } catch (...) {
      tvm_object_release(array_object);
      throw;
    }
    tvm_object_release(array_object);
    if (!ret.is_none() && ret.as_int() != 0)
      throw Error("const_loader: __init_" + symbol + " returned " + std::to_string(ret.as_int())).with("symbol", symbol);
    initialized_.insert(symbol);
  }

  std::map<std::string, NDArray> constants_;
  std::map<std::string, std::vector<std::string>> needs_;
  std::mutex mutex_;
  std::set<std::string> initialized_;
};

Module load_const_loader(BlobReader& reader, const Runtime& runtime) {
  std::vector<std::string> names = reader.read_string_vector("const_loader variables");
  uint64_t n = reader.read_u64("const_loader array count");
  if (n != names.size())
    throw reader.error("const_loader has " + std::to_string(names.size()) + " names but " + std::to_string(n) + " arrays");
  std::map<std::string, NDArray> constants;
  std::vector<NDArray> arrays = read_ndarray_records(runtime, reader, names, "constant");
  for (size_t i = 0; i < names.size(); ++i) constants[names[i]] = std::move(arrays[i]);
  std::vector<std::string> symbols = reader.read_string_vector("const_loader symbols");
  uint64_t m = reader.read_u64("const_loader symbol count");
  if (m != symbols.size())
    throw reader.error("const_loader has " + std::to_string(symbols.size()) + " symbols but " + std::to_string(m) +
                       " constant lists");
  std::map<std::string, std::vector<std::string>> needs;
  for (const std::string& s : symbols) needs[s] = reader.read_string_vector("const_loader constant list");
  return Module(make_ref<ConstLoaderModuleNode>(std::move(constants), std::move(needs)));
}

}  // namespace

void register_const_loader(Runtime& runtime) {
  // The constants a runtime's loader reads come from that runtime's CPU.
  const auto load = [&runtime](BlobReader& reader) { return load_const_loader(reader, runtime); };
  runtime.register_binary_loader("const_loader", load);
  runtime.register_binary_loader("metadata", load);
}

}  // namespace graphrt
