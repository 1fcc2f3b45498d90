// Calling fixture kernels directly with NDArrays; references are plain loops.
#include <cmath>
#include <random>

#include "fixture_cases.h"

using namespace graphrt;
using namespace graphrt_test;

namespace {

const DLDataType kF32{kDLFloat, 32, 1};
const DLDataType kI32{kDLInt, 32, 1};

NDArray random_f32(const std::vector<int64_t>& shape, uint32_t seed) {
  NDArray a = NDArray::empty(shape, kF32, cpu());
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  float* p = static_cast<float*>(a->data);
  for (size_t i = 0; i < a.nbytes() / 4; ++i) p[i] = dist(rng);
  return a;
}

float* f32(const NDArray& a) { return static_cast<float*>(a->data); }

void call(const Module& lib, const std::string& fn, std::vector<NDArray> args) {
  ArgList list;
  for (const NDArray& a : args) list.add_tensor(a.handle());  // graph executors pass code 7
  call_function(lib->require_function(fn), list);
}

// dense_pack layout: weight [N/bn, K, bn]; out[n] = sum_k x[k] * w[n/bn][k][n%bn] + b[n].
std::vector<float> dense_pack_reference(const NDArray& x, const NDArray& w, const NDArray& b, bool relu) {
  int64_t blocks = w.shape()[0], k_dim = w.shape()[1], bn = w.shape()[2];
  std::vector<float> out(blocks * bn);
  for (int64_t n = 0; n < blocks * bn; ++n) {
    double acc = 0;
    for (int64_t k = 0; k < k_dim; ++k) acc += double(f32(x)[k]) * f32(w)[(n / bn) * k_dim * bn + k * bn + n % bn];
    float v = static_cast<float>(acc) + f32(b)[n];
    out[n] = relu ? std::max(v, 0.0f) : v;
  }
  return out;
}

void expect_close(const float* got, const std::vector<float>& want, float tol) {
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], tol + tol * std::fabs(want[i])) << "at " << i;
}

}  // namespace

TEST(KernelCall, MlpKernelsMatchPlainLoops) {
  GRAPHRT_REQUIRE_FIXTURES();
  Module lib = load_module(fixture_path("mlp/deploy_lib.so"));
  NDArray x = random_f32({1, 784}, 1);
  NDArray w0 = random_f32({16, 784, 8}, 2), b0 = random_f32({1, 128}, 3);
  NDArray h0 = NDArray::empty({1, 128}, kF32, cpu());
  call(lib, "tvmgen_default_fused_nn_contrib_dense_pack_add_nn_relu", {x, w0, b0, h0});
  expect_close(f32(h0), dense_pack_reference(x, w0, b0, true), 1e-4f);

  NDArray w1 = random_f32({8, 128, 8}, 4), b1 = random_f32({1, 64}, 5);
  NDArray h1 = NDArray::empty({1, 64}, kF32, cpu());
  call(lib, "tvmgen_default_fused_nn_contrib_dense_pack_add_nn_relu_1", {h0, w1, b1, h1});
  expect_close(f32(h1), dense_pack_reference(h0, w1, b1, true), 1e-4f);

  NDArray w2 = random_f32({2, 64, 5}, 6), b2 = random_f32({1, 10}, 7);
  NDArray logits = NDArray::empty({1, 10}, kF32, cpu());
  call(lib, "tvmgen_default_fused_nn_contrib_dense_pack_add", {h1, w2, b2, logits});
  std::vector<float> ref_logits = dense_pack_reference(h1, w2, b2, false);
  expect_close(f32(logits), ref_logits, 1e-4f);

  NDArray probs = NDArray::empty({1, 10}, kF32, cpu());
  call(lib, "tvmgen_default_fused_nn_softmax", {logits, probs});
  float mx = *std::max_element(f32(logits), f32(logits) + 10);
  double sum = 0;
  for (int i = 0; i < 10; ++i) sum += std::exp(double(f32(logits)[i]) - mx);
  std::vector<float> ref(10);
  for (int i = 0; i < 10; ++i) ref[i] = static_cast<float>(std::exp(double(f32(logits)[i]) - mx) / sum);
  expect_close(f32(probs), ref, 1e-5f);

  NDArray image = random_f32({1, 1, 28, 28}, 8);
  NDArray flat = NDArray::empty({1, 784}, kF32, cpu());
  call(lib, "tvmgen_default_fused_nn_batch_flatten", {image, flat});
  for (int i = 0; i < 784; ++i) ASSERT_EQ(f32(flat)[i], f32(image)[i]);
}

TEST(KernelCall, MultiIoKernelsMatchPlainLoops) {
  GRAPHRT_REQUIRE_FIXTURES();
  Module lib = load_module(fixture_path("multi_io/deploy_lib.so"));
  NDArray a = random_f32({2, 3}, 11);
  NDArray b = NDArray::empty({2, 3}, kI32, cpu());
  int32_t* bi = static_cast<int32_t*>(b->data);
  for (int i = 0; i < 6; ++i) bi[i] = i * 7 - 9;

  NDArray sum_in = NDArray::empty({2, 3}, kF32, cpu());
  call(lib, "tvmgen_default_fused_cast_add", {b, a, sum_in});
  for (int i = 0; i < 6; ++i) EXPECT_EQ(f32(sum_in)[i], static_cast<float>(bi[i]) + f32(a)[i]);

  NDArray rows = NDArray::empty({2}, kF32, cpu());
  call(lib, "tvmgen_default_fused_sum", {sum_in, rows});
  for (int r = 0; r < 2; ++r) {
    float s = 0;
    for (int c = 0; c < 3; ++c) s += f32(sum_in)[r * 3 + c];
    EXPECT_NEAR(f32(rows)[r], s, 1e-5f);
  }

  NDArray tripled = NDArray::empty({2, 3}, kI32, cpu());
  call(lib, "tvmgen_default_fused_multiply", {b, tripled});
  for (int i = 0; i < 6; ++i) EXPECT_EQ(static_cast<int32_t*>(tripled->data)[i], bi[i] * 3);
}

TEST(KernelCall, KernelArgumentCheckFailureBecomesError) {
  GRAPHRT_REQUIRE_FIXTURES();
  Module lib = load_module(fixture_path("multi_io/deploy_lib.so"));
  NDArray wrong = NDArray::empty({4, 4}, kF32, cpu());
  try {
    call(lib, "tvmgen_default_fused_multiply", {wrong, wrong});
    FAIL() << "expected the kernel's argument check to fail";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tvmgen_default_fused_multiply"), std::string::npos) << e.what();
  }
}
