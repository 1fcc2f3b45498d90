// VM interpreter benchmark (a plain program, not a test):
//  1. dispatch speed: instructions/second on a tight i32 counting loop;
//  2. internal call cost: a bytecode function calling a bytecode function;
//  3. native-call overhead: bytecode calling a trivial native function.
#include <chrono>
#include <cstdio>
#include <memory>

#include "modules/vm/assembler.h"
#include "modules/vm/bytecode_module.h"
#include "modules/vm/context.h"
#include "modules/vm/native_module.h"

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

}  // namespace

int main() {
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
  return 0;
}
