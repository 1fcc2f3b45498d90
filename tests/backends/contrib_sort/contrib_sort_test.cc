// tvm.contrib.sort.sort / argsort / topk, called by name through the registry
// as TVM's generated kernels call them. Expected values are worked out by hand
// from TVM's contract: a stable sort along the axis (equal values keep their
// index order, ascending or descending), topk the first k of that order.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "graphrt/float16.h"
#include "graphrt/registry.h"
#include "graphrt/runtime.h"

namespace {

using graphrt::NDArray;

template <typename T>
NDArray tensor(const std::vector<int64_t>& shape, DLDataType dtype, const std::vector<T>& data) {
  NDArray a = NDArray::empty(shape, dtype, graphrt::cpu());
  if (!data.empty()) a.copy_from_bytes(data.data(), data.size() * sizeof(T));
  return a;
}

template <typename T>
std::vector<T> read(const NDArray& a, size_t n) {
  std::vector<T> out(n);
  a.copy_to_bytes(out.data(), n * sizeof(T));
  return out;
}

constexpr DLDataType kF32{kDLFloat, 32, 1};
constexpr DLDataType kF16{kDLFloat, 16, 1};
constexpr DLDataType kI32{kDLInt, 32, 1};
constexpr DLDataType kI64{kDLInt, 64, 1};

// Calls global `name` with tensors first, then ints, then an optional string before the last int.
void call(const std::string& name, const std::vector<NDArray>& tensors, const std::vector<int64_t>& ints,
          const char* ret_type = nullptr) {
  std::vector<TVMValue> values;
  std::vector<int> codes;
  for (const NDArray& t : tensors) {
    TVMValue v;
    v.v_handle = t.handle();
    values.push_back(v);
    codes.push_back(kTVMNDArrayHandle);
  }
  for (size_t i = 0; i < ints.size(); ++i) {
    if (ret_type && i + 1 == ints.size()) {
      TVMValue s;
      s.v_str = ret_type;
      values.push_back(s);
      codes.push_back(kTVMStr);
    }
    TVMValue v;
    v.v_int64 = ints[i];
    values.push_back(v);
    codes.push_back(kDLInt);
  }
  graphrt::PackedFunc f = graphrt::registry_get(name);
  ASSERT_TRUE(f) << name << " is not registered";
  graphrt::RetValue ret;
  f->call(graphrt::TVMArgs(values.data(), codes.data(), static_cast<int>(values.size())), &ret);
}

TEST(ContribSort, ArgsortIsStableInBothDirections) {
  // One line: 3 1 3 2 1.
  NDArray x = tensor<float>({5}, kF32, {3, 1, 3, 2, 1});
  NDArray idx = tensor<int32_t>({5}, kI32, {});
  call("tvm.contrib.sort.argsort", {x, idx}, {0, 1});
  EXPECT_EQ(read<int32_t>(idx, 5), (std::vector<int32_t>{1, 4, 3, 0, 2}));
  call("tvm.contrib.sort.argsort", {x, idx}, {-1, 0});
  EXPECT_EQ(read<int32_t>(idx, 5), (std::vector<int32_t>{0, 2, 3, 1, 4}));
}

TEST(ContribSort, SortAlongTheFirstAxisOfAMatrix) {
  // 3x2, sorted down each column: [[5, 0], [1, 0], [3, -1]].
  NDArray x = tensor<int64_t>({3, 2}, kI64, {5, 0, 1, 0, 3, -1});
  NDArray y = tensor<int64_t>({3, 2}, kI64, {});
  call("tvm.contrib.sort.sort", {x, y}, {0, 1});
  EXPECT_EQ(read<int64_t>(y, 6), (std::vector<int64_t>{1, -1, 3, 0, 5, 0}));
  NDArray idx = tensor<int64_t>({3, 2}, kI64, {});
  call("tvm.contrib.sort.argsort", {x, idx}, {0, 0});
  EXPECT_EQ(read<int64_t>(idx, 6), (std::vector<int64_t>{0, 0, 2, 1, 1, 2}));
}

TEST(ContribSort, TopkBothValuesAndIndices) {
  // Two lines of 4 along the last axis: [2 7 7 1], [0 0 -1 5]; k = 2, largest first.
  NDArray x = tensor<float>({2, 4}, kF32, {2, 7, 7, 1, 0, 0, -1, 5});
  NDArray v = tensor<float>({2, 2}, kF32, {});
  NDArray i = tensor<int64_t>({2, 2}, kI64, {});
  call("tvm.contrib.sort.topk", {x, v, i}, {2, 1, 0}, "both");
  EXPECT_EQ(read<float>(v, 4), (std::vector<float>{7, 7, 5, 0}));
  EXPECT_EQ(read<int64_t>(i, 4), (std::vector<int64_t>{1, 2, 3, 0}));
  NDArray i32 = tensor<int32_t>({2, 2}, kI32, {});
  call("tvm.contrib.sort.topk", {x, i32}, {2, -1, 1}, "indices");  // smallest first
  EXPECT_EQ(read<int32_t>(i32, 4), (std::vector<int32_t>{3, 0, 2, 0}));
  NDArray all = tensor<float>({2, 4}, kF32, {});
  call("tvm.contrib.sort.topk", {x, all}, {0, 1, 0}, "values");  // k < 1: the whole axis
  EXPECT_EQ(read<float>(all, 8), (std::vector<float>{7, 7, 2, 1, 5, 0, 0, -1}));
}

TEST(ContribSort, Float16ComparesByValue) {
  const std::vector<uint16_t> bits = {graphrt::float16_from_float(-2.0f), graphrt::float16_from_float(0.5f),
                                      graphrt::float16_from_float(-3.0f)};
  NDArray x = tensor<uint16_t>({3}, kF16, bits);
  NDArray idx = tensor<int32_t>({3}, kI32, {});
  call("tvm.contrib.sort.argsort", {x, idx}, {0, 1});
  EXPECT_EQ(read<int32_t>(idx, 3), (std::vector<int32_t>{2, 0, 1}));
}

TEST(ContribSort, BadCallsAreErrorsNamingTheFunction) {
  NDArray x = tensor<float>({2, 3}, kF32, {1, 2, 3, 4, 5, 6});
  auto expect_error = [](const std::function<void()>& f, const std::string& text) {
    try {
      f();
      ADD_FAILURE() << "no error; expected " << text;
    } catch (const graphrt::Error& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  NDArray wrong = tensor<int32_t>({3, 2}, kI32, {});
  expect_error([&] { call("tvm.contrib.sort.argsort", {x, wrong}, {1, 1}); },
               "tvm.contrib.sort.argsort: the indices tensor has shape [3, 2]");
  NDArray idx = tensor<int32_t>({2, 3}, kI32, {});
  expect_error([&] { call("tvm.contrib.sort.argsort", {x, idx}, {2, 1}); }, "axis 2 outside an input of shape [2, 3]");
  NDArray half = tensor<uint16_t>({2, 3}, kF16, {});
  expect_error([&] { call("tvm.contrib.sort.sort", {x, half}, {1, 1}); }, "the values tensor is float16, the input float32");
  NDArray k2 = tensor<float>({2, 2}, kF32, {});
  expect_error([&] { call("tvm.contrib.sort.topk", {x, k2}, {2, 1, 0}, "all"); }, "ret_type 'all'");
  expect_error([&] { call("tvm.contrib.sort.topk", {x, k2}, {3, 1, 0}, "values"); }, "needs 3 along axis 1");
  NDArray boolean = tensor<uint8_t>({2, 3}, DLDataType{kDLUInt, 1, 1}, {});
  expect_error([&] { call("tvm.contrib.sort.argsort", {boolean, idx}, {1, 1}); }, "sorting bool is not supported");
}

}  // namespace
