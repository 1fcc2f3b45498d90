// Writes the demo MLP's graph JSON (TVM format), params (TVM save_param_dict format), an
// input .npy and the expected output, from a fixed seed, so the build needs no Python. The
// expected output is this program's own forward pass in double precision, independent of the
// float32 C kernels graphrt runs, so the demo can say how close the run came:
//   data (1, 64) -> demo_dense_bias_relu(W1 (32, 64), b1 (32,)) -> (1, 32)
//                -> demo_dense_bias_softmax(W2 (10, 32), b2 (10,)) -> (1, 10)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <random>
#include <vector>

#include "common/npy.h"
#include "graphrt/graph_executor.h"

namespace {

constexpr int kIn = 64, kHidden = 32, kOut = 10;

const char* kGraph = R"({
  "nodes": [
    {"op": "null", "name": "data", "inputs": []},
    {"op": "null", "name": "p0", "inputs": []},
    {"op": "null", "name": "p1", "inputs": []},
    {"op": "tvm_op", "name": "demo_dense_bias_relu", "attrs": {"num_outputs": "1", "num_inputs": "3", "flatten_data": "0", "func_name": "demo_dense_bias_relu"}, "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]},
    {"op": "null", "name": "p2", "inputs": []},
    {"op": "null", "name": "p3", "inputs": []},
    {"op": "tvm_op", "name": "demo_dense_bias_softmax", "attrs": {"num_outputs": "1", "num_inputs": "3", "flatten_data": "0", "func_name": "demo_dense_bias_softmax"}, "inputs": [[3, 0, 0], [4, 0, 0], [5, 0, 0]]}
  ],
  "arg_nodes": [0, 1, 2, 4, 5],
  "heads": [[6, 0, 0]],
  "attrs": {
    "dltype": ["list_str", ["float32", "float32", "float32", "float32", "float32", "float32", "float32"]],
    "device_index": ["list_int", [1, 1, 1, 1, 1, 1, 1]],
    "storage_id": ["list_int", [0, 1, 2, 3, 4, 5, 6]],
    "shape": ["list_shape", [[1, 64], [32, 64], [32], [1, 32], [10, 32], [10], [1, 10]]]
  },
  "node_row_ptr": [0, 1, 2, 3, 4, 5, 6, 7]
}
)";

graphrt::NDArray random_array(const std::vector<int64_t>& shape, float scale, std::mt19937& rng) {
  graphrt::NDArray a = graphrt::NDArray::empty(shape, DLDataType{kDLFloat, 32, 1}, DLDevice{kDLCPU, 0});
  std::uniform_real_distribution<float> dist(-scale, scale);
  float* p = static_cast<float*>(a->data);
  for (int64_t i = 0; i < graphrt::shape_numel(shape.data(), static_cast<int>(shape.size())); ++i) p[i] = dist(rng);
  return a;
}

// relu(W1 x + b1), then softmax(W2 h + b2), accumulated in double.
std::vector<float> reference_forward(const graphrt::ParamList& params, const graphrt::NDArray& input) {
  auto data = [&](size_t i) { return static_cast<const float*>(params[i].second->data); };
  const float* x = static_cast<const float*>(input->data);
  std::vector<double> hidden(kHidden), logits(kOut);
  for (int o = 0; o < kHidden; ++o) {
    double acc = data(1)[o];
    for (int i = 0; i < kIn; ++i) acc += double(x[i]) * data(0)[o * kIn + i];
    hidden[o] = acc > 0 ? acc : 0;
  }
  double max_logit = -INFINITY, sum = 0;
  for (int o = 0; o < kOut; ++o) {
    logits[o] = data(3)[o];
    for (int i = 0; i < kHidden; ++i) logits[o] += hidden[i] * data(2)[o * kHidden + i];
    max_logit = std::max(max_logit, logits[o]);
  }
  for (double& l : logits) sum += (l = std::exp(l - max_logit));
  std::vector<float> out(kOut);
  for (int o = 0; o < kOut; ++o) out[o] = static_cast<float>(logits[o] / sum);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::cerr << "usage: demo_mlp_gen GRAPH.json PARAMS.params INPUT.npy EXPECTED.npy\n";
    return 2;
  }
  try {
    std::mt19937 rng(20240607);
    graphrt::ParamList params;
    params.emplace_back("p0", random_array({kHidden, kIn}, 0.25f, rng));
    params.emplace_back("p1", random_array({kHidden}, 0.1f, rng));
    params.emplace_back("p2", random_array({kOut, kHidden}, 0.5f, rng));
    params.emplace_back("p3", random_array({kOut}, 0.1f, rng));
    graphrt::NDArray input = random_array({1, kIn}, 1.0f, rng);

    std::ofstream(argv[1]) << kGraph;
    std::string bytes = graphrt::save_param_dict(params);
    std::ofstream p(argv[2], std::ios::binary);
    p.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!p) throw graphrt::Error("cannot write params").with("file", argv[2]);
    graphrt_apps::write_npy(argv[3], input.dtype(), input.shape(), input->data, input.nbytes());
    std::vector<float> expected = reference_forward(params, input);
    graphrt_apps::write_npy(argv[4], input.dtype(), {1, kOut}, expected.data(), expected.size() * sizeof(float));
  } catch (const std::exception& e) {
    std::cerr << "demo_mlp_gen: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
