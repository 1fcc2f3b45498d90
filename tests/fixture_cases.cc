#include "fixture_cases.h"

#include <cmath>
#include <cstring>
#include <dirent.h>

namespace graphrt_test {

graphrt::NDArray npy_to_ndarray(const Npy& npy) {
  graphrt::NDArray a = graphrt::NDArray::empty(npy.shape, npy.dtype, graphrt::cpu());
  a.copy_from_bytes(npy.data.data(), npy.data.size());
  return a;
}

std::shared_ptr<graphrt::GraphExecutor> three_file_executor(const std::string& name, graphrt::Module* lib_out) {
  graphrt::Module lib = graphrt::load_module(fixture_path(name + "/deploy_lib.so"));
  if (lib_out) *lib_out = lib;
  return graphrt::create_graph_executor(read_text(fixture_path(name + "/deploy_graph.json")), lib,
                                        read_text(fixture_path(name + "/deploy_params.params")), {graphrt::cpu()});
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const graphrt::Error& e) {
    return e.what();
  }
  return "";
}

void set_case_inputs(graphrt::GraphExecutor& ex, const std::string& name) {
  std::string dir = fixture_path(name);
  DIR* d = opendir(dir.c_str());
  if (!d) throw std::runtime_error("cannot list " + dir);
  while (dirent* ent = readdir(d)) {
    std::string file = ent->d_name;
    if (file.rfind("input_", 0) != 0 || file.size() < 11 || file.substr(file.size() - 4) != ".npy") continue;
    std::string input = file.substr(6, file.size() - 10);
    graphrt::NDArray value = npy_to_ndarray(read_npy(dir + "/" + file));
    ex.set_input(input, value.handle());
  }
  closedir(d);
}

std::string compare_output(const graphrt::NDArray& got, const std::string& expected_path, double tolerance) {
  Npy expected = read_npy(expected_path);
  if (got.shape() != expected.shape) return "shape differs from " + expected_path;
  if (graphrt::dtype_to_string(got.dtype()) != graphrt::dtype_to_string(expected.dtype)) return "dtype differs from " + expected_path;
  std::vector<uint8_t> bytes(got.nbytes());
  got.copy_to_bytes(bytes.data(), bytes.size());
  if (bytes.size() != expected.data.size()) return "byte size differs from " + expected_path;
  if (tolerance == 0) {
    if (std::memcmp(bytes.data(), expected.data.data(), bytes.size()) != 0) return "bytes differ from " + expected_path;
    return "";
  }
  if (got.dtype().code != kDLFloat || got.dtype().bits != 32) return std::memcmp(bytes.data(), expected.data.data(), bytes.size()) == 0 ? "" : "values differ";
  size_t n = bytes.size() / 4;
  const float* a = reinterpret_cast<const float*>(bytes.data());
  const float* b = reinterpret_cast<const float*>(expected.data.data());
  for (size_t i = 0; i < n; ++i) {
    if (!(std::fabs(a[i] - b[i]) <= tolerance + tolerance * std::fabs(b[i])))
      return "element " + std::to_string(i) + ": got " + std::to_string(a[i]) + ", expected " + std::to_string(b[i]);
  }
  return "";
}

}  // namespace graphrt_test
