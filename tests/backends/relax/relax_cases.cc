#include "relax_cases.h"

#include <dirent.h>

#include <algorithm>

#include "fixture_cases.h"
#include "backends/relax/value.h"

namespace graphrt_test {

namespace {

constexpr char kFfiPrefix[] = "ffi_";

// The case folders `relax_*` of fixtures/<folder> that run on the CPU in one call
// (the language model's steps and the CUDA cases have their own tests), named `prefix` + folder.
void add_cases(const std::string& folder, const std::string& prefix, std::vector<std::string>* out) {
  DIR* d = opendir((fixtures_dir() + "/" + folder).c_str());
  if (!d) return;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.rfind("relax_", 0) != 0) continue;
    const nlohmann::json c = case_json(folder + "/" + name);
    if (c.value("kind", "relax_vm") != "relax_vm" || c.value("device", "cpu") != "cpu") continue;
    out->push_back(prefix + name);
  }
  closedir(d);
}

}  // namespace

std::vector<std::string> relax_cases() {
  std::vector<std::string> out;
  if (fixtures_dir().empty()) return out;
  add_cases("relax", "", &out);
  add_cases("relax-ffi", kFfiPrefix, &out);
  std::sort(out.begin(), out.end());
  return out;
}

std::string relax_case_folder(const std::string& name) {
  if (name.rfind(kFfiPrefix, 0) == 0) return "relax-ffi/" + name.substr(sizeof(kFfiPrefix) - 1);
  return "relax/" + name;
}

namespace {

std::vector<std::string> input_order(const nlohmann::json& c) {
  std::vector<std::string> order;
  if (c.contains("input_order")) {
    for (const auto& n : c["input_order"]) order.push_back(n.get<std::string>());
    return order;
  }
  for (auto it = c["inputs"].begin(); it != c["inputs"].end(); ++it) order.push_back(it.key());
  return order;
}

}  // namespace

RelaxCase relax_case(const std::string& name) {
  RelaxCase rc;
  rc.dir = fixture_path(relax_case_folder(name));
  const nlohmann::json c = case_json(relax_case_folder(name));
  rc.entry = c.value("entry", "main");
  std::vector<std::string> suffixes;
  if (c.contains("input_sets")) {
    for (const auto& s : c["input_sets"]) suffixes.push_back(s.value("suffix", ""));
  } else {
    suffixes.push_back("");
  }
  const std::vector<std::string> order = input_order(c);
  for (const std::string& suffix : suffixes) {
    RelaxInputSet set;
    set.suffix = suffix;
    for (const std::string& n : order) set.inputs.push_back(rc.dir + "/input_" + n + suffix + ".npy");
    for (size_t i = 0; i < c["outputs"].size(); ++i)
      set.outputs.push_back(rc.dir + "/output_" + std::to_string(i) + suffix + ".npy");
    rc.sets.push_back(std::move(set));
  }
  return rc;
}

graphrt::Module relax_vm(const graphrt::Module& lib) {
  graphrt::RetValue vm = graphrt::call_function(lib->require_function("vm_load_executable"), graphrt::ArgList());
  graphrt::Module m = vm.as_module();
  graphrt::ArgList init;
  init.add_int(kDLCPU).add_int(0).add_int(2);
  graphrt::call_function(m->require_function("vm_initialization"), init);
  return m;
}

std::vector<graphrt::NDArray> relax_inputs(const RelaxInputSet& set) {
  std::vector<graphrt::NDArray> out;
  for (const std::string& path : set.inputs) out.push_back(npy_to_ndarray(read_npy(path)));
  return out;
}

namespace {

void flatten_value(const graphrt::relax::Value& v, std::vector<graphrt::NDArray>* out) {
  if (const auto* t = std::get_if<graphrt::NDArray>(&v)) {
    out->push_back(*t);
  } else if (const auto* tuple = std::get_if<graphrt::Ref<graphrt::relax::TupleObj>>(&v)) {
    for (const auto& item : (*tuple)->items) flatten_value(item, out);
  } else {
    throw graphrt::Error(std::string("result holds a ") + graphrt::relax::value_kind_name(v));
  }
}

}  // namespace

std::vector<graphrt::NDArray> flatten_result(const graphrt::RetValue& result) {
  std::vector<graphrt::NDArray> out;
  if (result.code() == kTVMNDArrayHandle) {
    out.push_back(result.as_ndarray());
    return out;
  }
  auto* tuple = dynamic_cast<graphrt::relax::TupleObj*>(result.as_args().as_object(0).get());
  if (!tuple) throw graphrt::Error("result is neither a tensor nor a tuple");
  for (const auto& item : tuple->items) flatten_value(item, &out);
  return out;
}

}  // namespace graphrt_test
