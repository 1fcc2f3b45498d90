// A float16/bfloat16 model through the C++ API: kernels built by this test
// suite (tests/kernels/float16_kernels.c with _Float16, so they import the
// compiler's half helpers from libgraphrt), params with float16 and bfloat16
// arrays, set_input/get_output. Expected values come from an independent
// reference: the nearest float16 by search over every finite value, and the
// round-to-nearest-even bit trick for bfloat16.
#include <cmath>
#include <cstring>
#include <random>

#include "fixture_cases.h"
#include "graphrt/graph_executor.h"

using namespace graphrt;

namespace {

constexpr int kN = 64;
constexpr DLDataType kF16{kDLFloat, 16, 1};
constexpr DLDataType kBF16{kDLBfloat, 16, 1};
constexpr DLDevice kCpu{kDLCPU, 0};

const char* kGraph = R"({
  "nodes": [
    {"op": "null", "name": "x", "inputs": []}, {"op": "null", "name": "w", "inputs": []},
    {"op": "null", "name": "b", "inputs": []}, {"op": "null", "name": "c", "inputs": []},
    {"op": "tvm_op", "name": "scale", "inputs": [[0, 0, 0], [1, 0, 0]],
     "attrs": {"func_name": "fused_scale_f16", "num_inputs": "2", "num_outputs": "1", "flatten_data": "0"}},
    {"op": "tvm_op", "name": "third", "inputs": [[0, 0, 0]],
     "attrs": {"func_name": "fused_third_f16", "num_inputs": "1", "num_outputs": "1", "flatten_data": "0"}},
    {"op": "tvm_op", "name": "mul", "inputs": [[2, 0, 0], [3, 0, 0]],
     "attrs": {"func_name": "fused_mul_bf16", "num_inputs": "2", "num_outputs": "1", "flatten_data": "0"}}],
  "arg_nodes": [0, 1, 2, 3], "node_row_ptr": [0, 1, 2, 3, 4, 5, 6, 7],
  "heads": [[4, 0, 0], [5, 0, 0], [6, 0, 0]],
  "attrs": {
    "dltype": ["list_str", ["float16", "float16", "bfloat16", "bfloat16", "float16", "float16", "bfloat16"]],
    "shape": ["list_shape", [[64], [64], [64], [64], [64], [64], [64]]],
    "storage_id": ["list_int", [0, 1, 2, 3, 4, 5, 6]]}})";

double half_value(uint16_t h) {
  const int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  const double mag = exp == 0 ? std::ldexp(mant, -24) : std::ldexp(1024 + mant, exp - 25);
  return (h & 0x8000) ? -mag : mag;
}

// Nearest float16 by exhaustive search, ties to the even pattern.
uint16_t reference_half(double v) {
  const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  const double a = std::fabs(v);
  if (a >= 65520.0) return sign | 0x7c00;  // max + half an ulp and above: infinity
  uint16_t best = 0;
  for (uint16_t p = 1; p < 0x7c00; ++p) {
    const double d = std::fabs(half_value(p) - a), e = std::fabs(half_value(best) - a);
    if (d < e || (d == e && (p & 1) == 0)) best = p;
  }
  return sign | best;
}

float bfloat_value(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint16_t reference_bfloat(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<uint16_t>((uint64_t{u} + 0x7fff + ((u >> 16) & 1)) >> 16);
}

NDArray array16(DLDataType dtype, const std::vector<uint16_t>& bits) {
  NDArray a = NDArray::empty({kN}, dtype, kCpu);
  a.copy_from_bytes(bits.data(), bits.size() * 2);
  return a;
}
std::vector<uint16_t> bits_of(const NDArray& a) {
  std::vector<uint16_t> bits(kN);
  a.copy_to_bytes(bits.data(), bits.size() * 2);
  return bits;
}

TEST(Float16Model, ParamsInputsAndOutputsBitExact) {
  std::mt19937 rng(7);
  std::normal_distribution<double> normal;
  std::vector<uint16_t> x(kN), w(kN), b(kN), c(kN);
  for (int i = 0; i < kN; ++i) {
    x[i] = reference_half(normal(rng) * 40);
    w[i] = reference_half(normal(rng) * 4);
    b[i] = reference_bfloat(static_cast<float>(normal(rng) * 1e3));
    c[i] = reference_bfloat(static_cast<float>(normal(rng) * 1e-2));
  }
  x[0] = 0x7bff;  // 65504 * 2 overflows to infinity
  w[0] = 0x4000;
  x[1] = 0x0001;  // the smallest subnormal

  const std::string params = save_param_dict({{"w", array16(kF16, w)}, {"c", array16(kBF16, c)}});
  const ParamList loaded = load_param_dict(params);
  ASSERT_EQ(loaded.size(), 2u);
  EXPECT_EQ(dtype_to_string(loaded[1].second.dtype()), "bfloat16");
  EXPECT_EQ(bits_of(loaded[1].second), c);

  Module lib = load_module(GRAPHRT_FLOAT16_KERNELS);
  auto ex = create_graph_executor(kGraph, lib, params, {kCpu});
  ex->set_input("x", array16(kF16, x).handle());
  ex->set_input("b", array16(kBF16, b).handle());
  ex->run();
  ASSERT_EQ(ex->num_outputs(), 3);
  EXPECT_EQ(dtype_to_string(ex->get_output(0).dtype()), "float16");
  EXPECT_EQ(dtype_to_string(ex->get_output(2).dtype()), "bfloat16");
  const std::vector<uint16_t> y = bits_of(ex->get_output(0)), z = bits_of(ex->get_output(1)),
                              o = bits_of(ex->get_output(2));
  for (int i = 0; i < kN; ++i) {
    const float xf = static_cast<float>(half_value(x[i])), wf = static_cast<float>(half_value(w[i]));
    EXPECT_EQ(y[i], reference_half(static_cast<double>(xf * wf + 0.5f))) << i;
    EXPECT_EQ(z[i], reference_half(half_value(x[i]) / 3.0 + 1e-7)) << i;
    EXPECT_EQ(o[i], reference_bfloat(bfloat_value(b[i]) * bfloat_value(c[i]))) << i;
  }
  EXPECT_EQ(y[0], 0x7c00);
}

}  // namespace
