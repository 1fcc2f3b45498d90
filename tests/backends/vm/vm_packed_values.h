// What the VM tests that go through packed functions share: the counted loop
// program (sum of 0..n-1) whose run length grows with its argument, and the
// apps' helpers for calling packed functions with owned arguments. Public
// headers only: the PUBLIC_API tests include it too.
#pragma once

#include "common/packed_args.h"

namespace vm_test {

// `func sum "0i_i"`: sum of 0..n-1, n loop iterations (one branch each).
inline const char* const kSumFunction = R"(func sum "0i_i" export
entry:
  const.i32 %i1, 0      # acc
  const.i32 %i2, 0      # k
  const.i32 %i3, 1
  br loop
loop:
  cmp.lt.s.i32 %i4, %i2, %i0
  br_if %i4, body, done
body:
  add.i32 %i1, %i1, %i2
  add.i32 %i2, %i2, %i3
  br loop
done:
  ret %i1
end
)";

using graphrt_apps::bytes_arg;
using graphrt_apps::call_packed;
using graphrt_apps::int_arg;
using graphrt_apps::module_arg;
using graphrt_apps::string_arg;

}  // namespace vm_test
