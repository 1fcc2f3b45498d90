#include "backends/relax/tensor_cache/functions.h"

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "graphrt/device_api.h"
#include "graphrt/module.h"
#include "backends/relax/packed_convention.h"
#include "backends/relax/tensor_cache/loader.h"
#include "backends/relax/tensor_cache/store.h"

namespace graphrt {
namespace relax {

namespace {

using tensor_cache::TensorStore;
using Store = std::shared_ptr<TensorStore>;
using Body = void (*)(TensorStore& store, const char* name, const TVMArgs& args, RetValue* ret);

Error arg_error(const char* name, int i, const std::string& message, ErrorKind kind = ErrorKind::kInvalidArgument) {
  return Error(kind, std::string(name) + ": argument " + std::to_string(i) + " " + message)
      .with("builtin", name)
      .with("argument", std::to_string(i));
}

void require_args(const char* name, const TVMArgs& args, int min, int max, const char* usage) {
  if (args.size() < min || args.size() > max)
    throw Error(ErrorKind::kInvalidArgument,
                std::string(name) + ": called with " + std::to_string(args.size()) + " arguments; usage " + usage)
        .with("builtin", name);
}

std::string string_arg(const char* name, const TVMArgs& args, int i, const char* what) {
  if (args.code(i) != kTVMStr && args.code(i) != kTVMBytes)
    throw arg_error(name, i, std::string("(") + what + ") must be a string, not " + type_code_name(args.code(i)),
                    ErrorKind::kTypeMismatch);
  return args.as_string(i);
}

// The names of an array argument (TVM's Array<String>).
std::vector<std::string> names_arg(const char* name, const TVMArgs& args, int i) {
  const Value v = value_from_arg(args, i);
  const auto* tuple = std::get_if<Ref<TupleObj>>(&v);
  if (!tuple) throw arg_error(name, i, "(names) must be an array of strings", ErrorKind::kTypeMismatch);
  std::vector<std::string> names;
  for (const Value& item : (*tuple)->items) {
    const auto* s = std::get_if<StringRef>(&item);
    if (!s)
      throw arg_error(name, i, "(names) item " + std::to_string(names.size()) + " is a " + value_kind_name(item) +
                                   ", not a string",
                      ErrorKind::kTypeMismatch);
    names.push_back(**s);
  }
  return names;
}

NDArray lookup(const TensorStore& store, const char* name, const std::string& key, const std::string& where) {
  NDArray out;
  if (!store.get(key, &out))
    throw Error(ErrorKind::kNotFound, std::string(name) + ": no tensor " + quote_untrusted(key) + " in the tensor cache (" + where + ")")
        .with("builtin", name)
        .with("name", key);
  return out;
}

Value as_array(std::vector<NDArray> tensors) {
  std::vector<Value> items(tensors.begin(), tensors.end());
  return make_tuple(std::move(items));
}

std::vector<NDArray> by_names(const TensorStore& store, const char* name, const std::vector<std::string>& names) {
  std::vector<NDArray> out;
  for (size_t i = 0; i < names.size(); ++i) out.push_back(lookup(store, name, names[i], "name " + std::to_string(i)));
  return out;
}

// prefix_0, prefix_1, ...: `count` of them, or (count -1) up to the first missing.
std::vector<NDArray> by_prefix(const TensorStore& store, const char* name, const TVMArgs& args) {
  require_args(name, args, 2, 2, "(prefix, num_params)");
  const std::string prefix = string_arg(name, args, 0, "prefix");
  const int64_t count = args.as_int(1);
  if (count < -1) throw arg_error(name, 1, "(num_params) is " + std::to_string(count) + "; it must be -1 or more");
  std::vector<NDArray> out;
  for (int64_t i = 0; count == -1 || i < count; ++i) {
    const std::string key = prefix + "_" + std::to_string(i);
    NDArray t;
    if (!store.get(key, &t)) {
      if (count == -1) break;
      lookup(store, name, key, std::to_string(i) + " of " + std::to_string(count));
    }
    out.push_back(t);
  }
  return out;
}

// TVM's ParamModule: a module whose one function hands out the array.
class ParamModule : public ModuleNode {
 public:
  explicit ParamModule(Value params) : params_(std::move(params)) {}
  std::string type_key() const override { return "param_module"; }
  std::vector<std::string> function_names() const override { return {"get_params"}; }
  PackedFunc find_function(const std::string& name, const Module&) override {
    if (name != "get_params") return PackedFunc();
    Value params = params_;
    return make_function([params](const TVMArgs&, RetValue* ret) { value_to_ret(params, ret); }, "get_params");
  }

 private:
  Value params_;
};

void set_module(RetValue* ret, std::vector<NDArray> tensors) {
  ret->set_module(Module(make_ref<ParamModule>(as_array(std::move(tensors)))));
}

void load(TensorStore& store, const char* name, const TVMArgs& args, RetValue*) {
  require_args(name, args, 3, 3, "(folder, device_type, device_id)");
  const std::string folder = string_arg(name, args, 0, "folder");
  const DLDevice device{static_cast<DLDeviceType>(args.as_int(1)), static_cast<int32_t>(args.as_int(2))};
  store.load(folder, device);
}

void get(TensorStore& store, const char* name, const TVMArgs& args, RetValue* ret) {
  require_args(name, args, 1, 1, "(name)");
  NDArray t;
  if (store.get(string_arg(name, args, 0, "name"), &t)) return ret->set_ndarray(t);
  ret->set_none();
}

// A borrowed DLTensor (an RPC reference in TVM) is copied, into an array of the store's
// runtime; an array is kept.
NDArray owned_tensor(const TensorStore& store, const char* name, const TVMArgs& args, int i) {
  if (args.code(i) == kTVMNDArrayHandle) return args.as_ndarray(i);
  if (args.code(i) != kTVMDLTensorHandle)
    throw arg_error(name, i, std::string("(tensor) must be a tensor, not ") + type_code_name(args.code(i)),
                    ErrorKind::kTypeMismatch);
  const DLTensor* src = args.as_tensor(i);
  const DeviceApis apis(store.runtime(), {src->device});
  NDArray copy = apis.empty(std::vector<int64_t>(src->shape, src->shape + src->ndim), src->dtype, src->device);
  apis.copy(src, copy.handle());
  return copy;
}

void update(TensorStore& store, const char* name, const TVMArgs& args, RetValue*) {
  require_args(name, args, 2, 3, "(name, tensor[, override])");
  const std::string key = string_arg(name, args, 0, "name");
  const bool replace = args.size() == 3 && args.as_int(2) != 0;
  store.update(key, owned_tensor(store, name, args, 1), replace);
}

void remove(TensorStore& store, const char* name, const TVMArgs& args, RetValue*) {
  require_args(name, args, 1, 1, "(name)");
  store.remove(string_arg(name, args, 0, "name"));
}

void clear(TensorStore& store, const char* name, const TVMArgs& args, RetValue*) {
  require_args(name, args, 0, 0, "()");
  store.clear();
}

void array_by_prefix(TensorStore& store, const char* name, const TVMArgs& args, RetValue* ret) {
  value_to_ret(as_array(by_prefix(store, name, args)), ret);
}

void module_by_prefix(TensorStore& store, const char* name, const TVMArgs& args, RetValue* ret) {
  set_module(ret, by_prefix(store, name, args));
}

void array_by_name(TensorStore& store, const char* name, const TVMArgs& args, RetValue* ret) {
  require_args(name, args, 1, 1, "(names)");
  value_to_ret(as_array(by_names(store, name, names_arg(name, args, 0))), ret);
}

void module_by_name(TensorStore& store, const char* name, const TVMArgs& args, RetValue* ret) {
  require_args(name, args, 1, 1, "(names)");
  set_module(ret, by_names(store, name, names_arg(name, args, 0)));
}

void array_by_name_unpacked(TensorStore& store, const char* name, const TVMArgs& args, RetValue* ret) {
  std::vector<std::string> names;
  for (int i = 0; i < args.size(); ++i) names.push_back(string_arg(name, args, i, "name"));
  value_to_ret(as_array(by_names(store, name, names)), ret);
}

// graphrt's own: the weights of a folder in the order of `names` (none: param_0, param_1, ...
// up to the first missing, the legacy form), read without the store, so that an engine's
// load neither sees nor changes what others put there (TVM's engine loads into the process
// pool and clears it). Tensors the folder has beyond the names are dropped.
void load_params(TensorStore& store, const char* name, const TVMArgs& args, RetValue* ret) {
  if (args.size() < 3)
    throw Error(ErrorKind::kInvalidArgument, std::string(name) + ": usage (folder, device_type, device_id, name...)")
        .with("builtin", name);
  const std::string folder = string_arg(name, args, 0, "folder");
  const DLDevice device{static_cast<DLDeviceType>(args.as_int(1)), static_cast<int32_t>(args.as_int(2))};
  const DeviceApis apis(store.runtime(), {device});
  std::unordered_map<std::string, NDArray> arrays;
  for (auto& named : tensor_cache::load_folder(folder, apis, device)) arrays.emplace(named.first, std::move(named.second));
  const std::string manifest = folder + "/" + tensor_cache::kManifestName;
  std::vector<NDArray> out;
  if (args.size() == 3) {
    for (size_t i = 0;; ++i) {
      auto it = arrays.find("param_" + std::to_string(i));
      if (it == arrays.end()) break;
      out.push_back(it->second);
    }
  }
  for (int i = 3; i < args.size(); ++i) {
    const std::string key = string_arg(name, args, i, "name");
    auto it = arrays.find(key);
    if (it == arrays.end())
      throw Error(ErrorKind::kNotFound, manifest + " has no tensor '" + key + "' (weight " + std::to_string(i - 3) +
                                            " of " + std::to_string(args.size() - 3) + ")")
          .with("file", manifest)
          .with("tensor", key);
    out.push_back(it->second);
  }
  value_to_ret(as_array(std::move(out)), ret);
}

// An error of the body that does not name the builtin yet gets its name in front.
Error named(const char* name, const Error& e) {
  if (!e.context_value("builtin").empty()) return e;
  Error out(e.kind(), std::string(name) + ": " + e.message());
  for (const auto& pair : e.context()) out.with(pair.first, pair.second);
  return out.with("builtin", name);
}

void set(Runtime& runtime, const Store& store, const std::string& full_name, Body body) {
  auto owned_name = std::make_shared<const std::string>(full_name);
  runtime.set_function(full_name, make_function(
                                      [store, owned_name, body](const TVMArgs& args, RetValue* ret) {
                                        try {
                                          body(*store, owned_name->c_str(), args, ret);
                                        } catch (const Error& e) {
                                          throw named(owned_name->c_str(), e);
                                        }
                                      },
                                      full_name));
}

}  // namespace

void register_tensor_cache_functions(Runtime& runtime) {
  auto store = std::make_shared<TensorStore>(runtime);
  static const std::pair<const char*, Body> cache_functions[] = {
      {"load", load}, {"get", get}, {"update", update}, {"remove", remove}, {"clear", clear}};
  for (const auto& f : cache_functions) {
    for (const char* family : {"vm.builtin.tensor_cache.", "vm.builtin.ndarray_cache."})
      set(runtime, store, std::string(family) + f.first, f.second);
  }
  set(runtime, store, "vm.builtin.param_array_from_cache", array_by_prefix);
  set(runtime, store, "vm.builtin.param_module_from_cache", module_by_prefix);
  set(runtime, store, "vm.builtin.param_array_from_cache_by_name", array_by_name);
  set(runtime, store, "vm.builtin.param_module_from_cache_by_name", module_by_name);
  set(runtime, store, "vm.builtin.param_array_from_cache_by_name_unpacked", array_by_name_unpacked);
  set(runtime, store, "graphrt.tensor_cache.load_params", load_params);
}

}  // namespace relax
}  // namespace graphrt
