#include "fixture_cases.h"

using namespace graphrt;

TEST(NDArray, AllocCopyAndViewShareStorage) {
  NDArray a = NDArray::empty({2, 3}, DLDataType{kDLFloat, 32, 1}, cpu());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a->data) % 64, 0u);
  std::vector<float> values{1, 2, 3, 4, 5, 6};
  a.copy_from_bytes(values.data(), 24);
  NDArray v = a.view({3, 2}, DLDataType{kDLFloat, 32, 1});
  static_cast<float*>(v->data)[5] = 42;
  std::vector<float> back(6);
  a.copy_to_bytes(back.data(), 24);
  EXPECT_EQ(back[5], 42);
  EXPECT_THROW(a.view({7}, DLDataType{kDLFloat, 32, 1}), Error);
  EXPECT_THROW(a.copy_from_bytes(values.data(), 20), Error);
}

TEST(NDArray, DLPackRoundTripSharesMemoryAndReleasesOnce) {
  NDArray a = NDArray::empty({4}, DLDataType{kDLInt, 32, 1}, cpu());
  DLManagedTensor* managed = a.to_dlpack();
  NDArray b = NDArray::from_dlpack(managed);
  EXPECT_EQ(a->data, b->data);
  static_cast<int32_t*>(b->data)[0] = 7;
  EXPECT_EQ(static_cast<int32_t*>(a->data)[0], 7);
  EXPECT_EQ(a.use_count(), 2);  // the DLPack export holds one reference
  b = NDArray();
  EXPECT_EQ(a.use_count(), 1);
}

TEST(DType, ParseAndPrintTvmStrings) {
  EXPECT_EQ(dtype_to_string(dtype_from_string("float32")), "float32");
  EXPECT_EQ(dtype_to_string(dtype_from_string("int8")), "int8");
  EXPECT_EQ(dtype_to_string(dtype_from_string("uint1")), "bool");
  EXPECT_EQ(dtype_to_string(dtype_from_string("float16x4")), "float16x4");
  DLDataType i = dtype_from_string("int");
  EXPECT_EQ(i.bits, 32);
  EXPECT_THROW(dtype_from_string("floaty"), Error);
  EXPECT_THROW(dtype_from_string("int0"), Error);
}
