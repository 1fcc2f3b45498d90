// VM interpreter benchmark (a plain program, not a test):
//  1. dispatch speed: instructions/second on a tight i32 counting loop;
//  2. internal call cost: a bytecode function calling a bytecode function;
//  3. native-call overhead: bytecode calling a trivial native function;
//  4. VM->kernel call overhead vs calling the same TVM kernel directly
//     (chain1000's relu on a 1x4 tensor; needs ../shared/fixtures or argv[1]).
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>

#include "graphrt/runtime.h"
#include "backends/vm/bytecode/binary_format.h"
#include "backends/vm/bytecode/bytecode_program.h"

#include "backends/vm/bytecode/assembler.h"
#include "backends/vm/bytecode/bytecode_module.h"
#include "backends/vm/host/context.h"
#include "backends/vm/host/native_module.h"

namespace {

using namespace graphrt::vm;

// Loop body = 4 instructions (add, add, cmp, br_if) per iteration.
const char* kSource = R"(
module bench version 1
import native.inc "0i_i"
func spin "0i_i" export
entry:
  const.i32 %i1, 0
  const.i32 %i2, 1
  const.i32 %i3, 0
  br loop
loop:
  add.i32 %i1, %i1, %i2
  add.i32 %i3, %i3, %i1
  cmp.lt.s.i32 %i4, %i1, %i0
  br_if %i4, loop, done
done:
  ret %i3
end
func inc "0i_i"
  const.i32 %i1, 1
  add.i32 %i0, %i0, %i1
  ret %i0
end
# loop of n internal calls
func calls "0i_i" export
entry:
  const.i32 %i1, 0
  br loop
loop:
  call @inc(%i1) -> (%i1)
  cmp.lt.s.i32 %i4, %i1, %i0
  br_if %i4, loop, done
done:
  ret %i1
end
func native_calls "0i_i" export
entry:
  const.i32 %i1, 0
  br loop
loop:
  call @native.inc(%i1) -> (%i1)
  cmp.lt.s.i32 %i4, %i1, %i0
  br_if %i4, loop, done
done:
  ret %i1
end
)";

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double time_call(Context& ctx, const char* fn, int32_t n, int32_t* result) {
  const auto start = std::chrono::steady_clock::now();
  *result = ctx.invoke(fn, {Value::from_i32(n)})[0].i32;
  return seconds_since(start);
}

const char* kKernelLoop = R"(
module kbench version 1
import tvm.call "0rCrD"
func run "0rr" export
entry:
  const.ref.rodata %r2, "tvmgen_default_fused_nn_relu"
  const.i64 %I0, 1000000
  const.i64 %I1, 0
  const.i64 %I2, 1
  br loop
loop:
  cmp.lt.s.i64 %i0, %I1, %I0
  br_if %i0, body, done
body:
  call.variadic @tvm.call(%r2, [%r0, %r1])
  add.i64 %I1, %I1, %I2
  br loop
done:
  ret
end
)";


// VM->kernel vs direct: 1,000,000 calls of a tiny TVM kernel each way.
void kernel_call_overhead(const std::string& fixtures) {
  std::string path = fixtures + "/chain1000/deploy_lib.so";
  if (!std::ifstream(path)) {
    std::printf("vm->kernel    : skipped (no %s)\n", path.c_str());
    return;
  }
  graphrt::Module lib = graphrt::load_module(path);
  graphrt::PackedFunc relu = lib->require_function("tvmgen_default_fused_nn_relu");
  graphrt::NDArray a = graphrt::NDArray::empty({1, 4}, DLDataType{kDLFloat, 32, 1}, graphrt::cpu());
  graphrt::NDArray b = graphrt::NDArray::empty({1, 4}, DLDataType{kDLFloat, 32, 1}, graphrt::cpu());
  std::memset(a->data, 0, a.nbytes());
  ProgramOptions options;
  options.kernels = [relu](const std::string&) {
    return Kernel([relu](const std::vector<DLTensor*>& ts) {
      graphrt::ArgList args;
      for (DLTensor* t : ts) args.add_tensor(t);
      graphrt::RetValue ret;
      relu->call(args.args(), &ret);
    });
  };
  std::vector<uint8_t> bytes = write_module_def(assemble(kKernelLoop));
  auto program = Program::load(bytes.data(), bytes.size(), options);
  const int n = 1000000;
  auto t = std::chrono::steady_clock::now();
  program->invoke("run", {a.handle(), b.handle()});
  double vm = seconds_since(t);
  TVMValue values[2];
  int codes[2] = {kTVMDLTensorHandle, kTVMDLTensorHandle};
  values[0].v_handle = a.handle();
  values[1].v_handle = b.handle();
  TVMBackendPackedCFunc fn = relu->backend_c_func();
  t = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    TVMValue ret;
    int ret_code;
    fn(values, codes, 2, &ret, &ret_code, nullptr);
  }
  double direct = seconds_since(t);
  std::printf("vm->kernel    : %.1f ns per call from bytecode, %.1f ns per direct call: overhead %.1f ns\n",
              vm / n * 1e9, direct / n * 1e9, (vm - direct) / n * 1e9);
}

}  // namespace

int main(int argc, char** argv) {
  auto native = std::make_shared<NativeModule>("native", 1);
  native->add_function("inc", "0i_i", [](NativeCall& c) { c.ret_i32(c.i32(0) + 1); });
  Context ctx(Instance::create());
  ctx.register_module(native);
  ctx.register_module(BytecodeModule::create(assemble(kSource)));

  int32_t result = 0;
  const int32_t n = 50'000'000;
  double t = time_call(ctx, "bench.spin", n, &result);
  std::printf("dispatch loop : %d iterations, %.3f s, %.1f M instructions/s (result %d)\n", n, t,
              4.0 * n / t / 1e6, result);

  const int32_t calls = 2'000'000;
  t = time_call(ctx, "bench.calls", calls, &result);
  std::printf("internal calls: %d calls, %.3f s, %.1f ns per call+loop (result %d)\n", calls, t, t / calls * 1e9,
              result);
  t = time_call(ctx, "bench.native_calls", calls, &result);
  std::printf("native calls  : %d calls, %.3f s, %.1f ns per call+loop (result %d)\n", calls, t, t / calls * 1e9,
              result);
  kernel_call_overhead(argc > 1 ? argv[1] : GRAPHRT_BENCH_FIXTURES);
  return 0;
}
