// Fixture cases and helpers to run them (shared by core and graph tests).
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "graphrt/graph_executor.h"
#include "graphrt/runtime.h"
#include "test_support.h"

namespace graphrt_test {

// CPU cases that graphrt must run bit-exactly (or within case.json's tolerance).
inline std::vector<std::string> cpu_cases() {
  return {"mlp", "multi_io", "squeezenet1.1", "chain1000", "mlp_linked_params", "byoc_ccompiler"};
}
inline std::vector<std::string> all_tvm_cases() {
  std::vector<std::string> cases = cpu_cases();
  cases.push_back("mlp_cuda");
  return cases;
}

inline nlohmann::json case_json(const std::string& name) {
  std::vector<uint8_t> bytes = read_file(fixture_path(name + "/case.json"));
  return nlohmann::json::parse(bytes.begin(), bytes.end());
}

inline std::string read_text(const std::string& path) {
  std::vector<uint8_t> bytes = read_file(path);
  return std::string(bytes.begin(), bytes.end());
}

graphrt::NDArray npy_to_ndarray(const Npy& npy);

// An executor over case `name`'s three-file form on the CPU (deploy_lib.so,
// deploy_graph.json, deploy_params.params); `lib_out` receives the library.
std::shared_ptr<graphrt::GraphExecutor> three_file_executor(const std::string& name, graphrt::Module* lib_out = nullptr);

// The message of the graphrt::Error that `f` throws, or "" when it throws none.
std::string error_of(const std::function<void()>& f);

// Sets every input_<name>.npy of the case on the executor.
void set_case_inputs(graphrt::GraphExecutor& ex, const std::string& name);
// Compares output i with output_<i>.npy (tolerance 0 = bit-exact); returns "" or a description.
std::string compare_output(const graphrt::NDArray& got, const std::string& expected_path, double tolerance);

}  // namespace graphrt_test
