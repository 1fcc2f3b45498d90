// Lists and buffers as ref registers.
#include <gtest/gtest.h>

#include "graphrt/error.h"

#include <numeric>
#include <vector>

#include "backends/vm/host/buffer.h"
#include "backends/vm/host/list.h"
#include "vm_test_util.h"

namespace {

using namespace vm_test;

const char* kSource = R"(
module refs version 1
# list of squares 0..n-1, then their sum read back from the list
func squares "0i_ri" export
entry:
  list.alloc %r0, %i0
  list.resize %r0, %i0
  const.i32 %i1, 0
  const.i32 %i2, 1
  br fill
fill:
  cmp.lt.s.i32 %i3, %i1, %i0
  br_if %i3, fill_body, sum_init
fill_body:
  mul.i32 %i4, %i1, %i1
  list.set.i32 %r0, %i1, %i4
  add.i32 %i1, %i1, %i2
  br fill
sum_init:
  const.i32 %i1, 0
  const.i32 %i5, 0
  br sum
sum:
  list.size %i6, %r0
  cmp.lt.s.i32 %i3, %i1, %i6
  br_if %i3, sum_body, done
sum_body:
  list.get.i32 %i4, %r0, %i1
  add.i32 %i5, %i5, %i4
  add.i32 %i1, %i1, %i2
  br sum
done:
  ret %r0, %i5
end

func mixed "0_Fr" export
  const.i32 %i0, 2
  list.alloc %r0, %i0
  list.resize %r0, %i0
  const.i32 %i1, 0
  const.f64 %F0, 2.5
  list.set.f64 %r0, %i1, %F0
  const.i32 %i1, 1
  list.alloc %r1, %i1
  list.set.ref %r0, %i1, %r1
  list.get.ref %r2, %r0, %i1
  const.i32 %i1, 0
  list.get.f64 %F1, %r0, %i1
  ret %F1, %r2
end

func bad_get "0_i" export
  const.i32 %i0, 1
  list.alloc %r0, %i0
  list.resize %r0, %i0
  const.i32 %i1, 0
  list.get.f32 %f0, %r0, %i1
  ret %i0
end

# buffer: store i32 values, read back little-endian bytes and an i64
func buffer_ops "0i_IiiI" export
  const.i64 %I0, 16
  buffer.alloc %r0, %I0
  const.i64 %I1, 4
  buffer.store.i32 %r0, %I1, %i0
  buffer.load.u8 %i1, %r0, %I1
  buffer.load.i32 %i2, %r0, %I1
  const.i64 %I2, 8
  const.i32 %i3, 171
  buffer.fill.i8 %r0, %I2, %I2, %i3
  buffer.load.i64 %I3, %r0, %I2
  buffer.length %I4, %r0
  ret %I4, %i1, %i2, %I3
end

func rodata_text "0_r" export
  const.ref.rodata %r0, "hello"
  ret %r0
end

func store_rodata "0_v" export
  const.ref.rodata %r0, "hello"
  const.i64 %I0, 0
  buffer.store.i8 %r0, %I0, %i0
  ret
end

func cycle "0_v" export
  const.i32 %i0, 1
  list.alloc %r0, %i0
  list.resize %r0, %i0
  list.alloc %r1, %i0
  list.resize %r1, %i0
  const.i32 %i1, 0
  list.set.ref %r0, %i1, %r1
  list.set.ref %r1, %i1, %r0
  ret
end

func oob "0I_i" export
  const.i64 %I1, 4
  buffer.alloc %r0, %I1
  buffer.load.i32 %i0, %r0, %I0
  ret %i0
end
)";

TEST(VmRefs, ListSquares) {
  Harness h(kSource);
  const int32_t n = 12;
  auto r = h.call("squares", {I(n)});
  int32_t expected = 0;
  for (int32_t k = 0; k < n; ++k) expected += k * k;
  EXPECT_EQ(r[1].i32, expected);
  auto* list = graphrt::vm::ref_as<graphrt::vm::List>(r[0].ref);
  ASSERT_NE(list, nullptr);
  ASSERT_EQ(list->size(), n);
  EXPECT_EQ(list->get(5, graphrt::vm::ValueType::kI32).i32, 25);
}

TEST(VmRefs, MixedListHoldsRefs) {
  Harness h(kSource);
  auto r = h.call("mixed", {});
  EXPECT_EQ(r[0].f64, 2.5);
  EXPECT_NE(graphrt::vm::ref_as<graphrt::vm::List>(r[1].ref), nullptr);
}

TEST(VmRefs, ListTypeMismatchTraps) {
  Harness h(kSource);
  EXPECT_THROW(h.call("bad_get", {}), graphrt::Error);
}

TEST(VmRefs, BufferOps) {
  Harness h(kSource);
  const int32_t v = 0x01020304;
  auto r = h.call("buffer_ops", {I(v)});
  EXPECT_EQ(r[0].i64, 16);
  EXPECT_EQ(r[1].i32, v & 0xFF);  // little-endian low byte first
  EXPECT_EQ(r[2].i32, v);
  EXPECT_EQ(static_cast<uint64_t>(r[3].i64), 0xABABABABABABABABull);
}

TEST(VmRefs, RodataIsReadOnly) {
  Harness h(kSource);
  auto r = h.call("rodata_text", {});
  EXPECT_EQ(graphrt::vm::ref_as<graphrt::vm::Buffer>(r[0].ref)->as_string(), "hello");
  EXPECT_THROW(h.call("store_rodata", {}), graphrt::Error);
}

TEST(VmRefs, ListCyclesAreRefused) {
  Harness h(kSource);
  try {
    h.call("cycle", {});
    FAIL();
  } catch (const graphrt::Error& e) {
    EXPECT_NE(std::string(e.what()).find("reference cycle"), std::string::npos);
  }
}

TEST(VmRefs, BufferBoundsChecked) {
  Harness h(kSource);
  EXPECT_EQ(h.call("oob", {L(0)})[0].i32, 0);
  EXPECT_THROW(h.call("oob", {L(1)}), graphrt::Error);
  EXPECT_THROW(h.call("oob", {L(-1)}), graphrt::Error);
  EXPECT_THROW(h.call("oob", {L(INT64_MAX)}), graphrt::Error);
}

}  // namespace
