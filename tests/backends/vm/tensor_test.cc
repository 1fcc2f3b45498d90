// The tensor and tvm native modules, and Program::invoke as the graph
// executor will use it.
#include <gtest/gtest.h>

#include "graphrt/error.h"

#include <algorithm>
#include <vector>

#include "backends/vm/bytecode/assembler.h"
#include "backends/vm/bytecode/binary_format.h"
#include "backends/vm/bytecode/bytecode_program.h"
#include "backends/vm/host/tensor.h"

namespace {

using namespace graphrt::vm;

// Fills a 2x3 f32 tensor with k*0.5, returns it with its rank, dim1 and the
// element sum read back through tensor.get_f32.
const char* kTensorProgram = R"(
module tprog version 1
dependency tensor 1
import tensor.alloc "0iiCID_r"
import tensor.rank "0r_i"
import tensor.dim "0ri_I"
import tensor.numel "0r_I"
import tensor.get_f32 "0rI_f"
import tensor.set_f32 "0rIf"
func make "0_riIf" export
entry:
  const.i32 %i0, 2          # kDLFloat
  const.i32 %i1, 32
  const.i64 %I0, 2
  const.i64 %I1, 3
  call.variadic @tensor.alloc(%i0, %i1, [%I0, %I1]) -> (%r0)
  call @tensor.rank(%r0) -> (%i2)
  const.i32 %i3, 1
  call @tensor.dim(%r0, %i3) -> (%I2)
  call @tensor.numel(%r0) -> (%I3)
  const.i64 %I4, 0           # k
  const.i64 %I5, 1
  const.f32 %f1, 0.5
  const.f32 %f2, 0           # sum
  br fill
fill:
  cmp.lt.s.i64 %i4, %I4, %I3
  br_if %i4, body, done
body:
  cvt.si64.f32 %f0, %I4
  mul.f32 %f0, %f0, %f1
  call @tensor.set_f32(%r0, %I4, %f0)
  call @tensor.get_f32(%r0, %I4) -> (%f3)
  add.f32 %f2, %f2, %f3
  add.i64 %I4, %I4, %I5
  br fill
done:
  ret %r0, %i2, %I2, %f2
end

# graph-node style: (input a, input b, output c) -> (), via a TVM kernel
func node_add "0rrr" export
  const.ref.rodata %r3, "fused_add"
  call.variadic @tvm.call(%r3, [%r0, %r1, %r2])
  ret
end

# same node computed in bytecode (element loop) for i32 tensors
func node_scale "0rr" export
entry:
  call @tensor.numel(%r0) -> (%I0)
  const.i64 %I1, 0
  const.i64 %I2, 1
  const.f32 %f1, 3
  br loop
loop:
  cmp.lt.s.i64 %i0, %I1, %I0
  br_if %i0, body, done
body:
  call @tensor.get_f32(%r0, %I1) -> (%f0)
  mul.f32 %f0, %f0, %f1
  call @tensor.set_f32(%r1, %I1, %f0)
  add.i64 %I1, %I1, %I2
  br loop
done:
  ret
end
import tvm.call "0rCrD"
)";

std::shared_ptr<Program> load(KernelResolver kernels = {}) {
  const std::vector<uint8_t> bytes = write_module_def(assemble(kTensorProgram));
  ProgramOptions options;
  options.kernels = std::move(kernels);
  return Program::load(bytes.data(), bytes.size(), std::move(options));
}

DLTensor host_tensor(std::vector<float>& data, std::vector<int64_t>& shape) {
  DLTensor t{};
  t.data = data.data();
  t.device = {kDLCPU, 0};
  t.ndim = static_cast<int32_t>(shape.size());
  t.dtype = {kDLFloat, 32, 1};
  t.shape = shape.data();
  return t;
}

TEST(VmTensor, AllocShapeAndElements) {
  auto program = load();
  auto r = program->call("make", {});
  Tensor* t = ref_as<Tensor>(r[0].ref);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(r[1].i32, 2);
  EXPECT_EQ(r[2].i64, 3);
  float expected = 0;
  for (int k = 0; k < 6; ++k) expected += static_cast<float>(k) * 0.5f;
  EXPECT_EQ(r[3].f32, expected);
  EXPECT_EQ(static_cast<float*>(t->dl()->data)[5], 2.5f);
}

TEST(VmTensor, ProgramInvokeWithBorrowedTensors) {
  auto program = load();
  std::vector<float> in = {1, -2, 3.5f, 4}, out(4, 0);
  std::vector<int64_t> shape = {4};
  DLTensor a = host_tensor(in, shape), c = host_tensor(out, shape);
  program->invoke("node_scale", {&a, &c});
  for (size_t k = 0; k < in.size(); ++k) EXPECT_EQ(out[k], in[k] * 3.0f);
  const auto names = program->tensor_functions();
  EXPECT_NE(std::find(names.begin(), names.end(), "node_add"), names.end());
  EXPECT_EQ(std::find(names.begin(), names.end(), "make"), names.end());
}

TEST(VmTensor, TvmCallResolvesKernelsByName) {
  int resolved = 0;
  auto program = load([&](const std::string& name) -> Kernel {
    ++resolved;
    if (name != "fused_add") return {};
    return [](const std::vector<DLTensor*>& args) {
      ASSERT_EQ(args.size(), 3u);
      const float* x = static_cast<const float*>(args[0]->data);
      const float* y = static_cast<const float*>(args[1]->data);
      float* z = static_cast<float*>(args[2]->data);
      for (int64_t k = 0; k < args[0]->shape[0]; ++k) z[k] = x[k] + y[k];
    };
  });
  std::vector<float> x = {1, 2, 3}, y = {10, 20, 30}, z(3, 0);
  std::vector<int64_t> shape = {3};
  DLTensor tx = host_tensor(x, shape), ty = host_tensor(y, shape), tz = host_tensor(z, shape);
  program->invoke("node_add", {&tx, &ty, &tz});
  program->invoke("node_add", {&tx, &ty, &tz});
  for (size_t k = 0; k < 3; ++k) EXPECT_EQ(z[k], x[k] + y[k]);
  EXPECT_EQ(resolved, 1);  // cached after the first call
}

TEST(VmTensor, MissingKernelIsAnError) {
  auto program = load([](const std::string&) -> Kernel { return {}; });
  std::vector<float> x(1), y(1), z(1);
  std::vector<int64_t> shape = {1};
  DLTensor tx = host_tensor(x, shape), ty = host_tensor(y, shape), tz = host_tensor(z, shape);
  try {
    program->invoke("node_add", {&tx, &ty, &tz});
    FAIL();
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(e.context_value("kernel"), "fused_add");
    EXPECT_EQ(e.context_value("function"), "node_add");
  }
  EXPECT_THROW(program->invoke("node_add", {&tx}), graphrt::Error);  // wrong arity
}

}  // namespace
