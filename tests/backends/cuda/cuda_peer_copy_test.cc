// A copy between two GPUs against the fake driver (two devices): ordered
// with the destination device's stream on both sides.
#include <gtest/gtest.h>

#include <regex>

#include "cuda_test_util.h"
#include "fake_driver_util.h"
#include "graphrt/ndarray.h"

using namespace graphrt;
using cuda_fake::state;

TEST(CudaPeerCopy, OrderedWithTheDestinationStream) {
  ASSERT_EQ(cuda_fake::kEnvSet, 0);
  cuda_test::init();
  const DLDataType f32{kDLFloat, 32, 1};
  NDArray a = NDArray::empty({4}, f32, DLDevice{kDLCUDA, 0});
  NDArray b = NDArray::empty({4}, f32, DLDevice{kDLCUDA, 1});
  float v[4] = {1, 2, 3, 4}, w[4] = {};
  a.copy_from_bytes(v, sizeof(v));
  int wrong_before = state()->wrong_context;
  cuda_fake::LogMark mark;
  copy_tensor(a.handle(), b.handle());
  std::string log = mark.since();
  // Contexts are numbered device + 1 in the log; the streams are both legacy.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(log, m,
                                std::regex("record:(e\\d+):s0@2 .*wait:s0:\\1@1 .*dtod:s0 .*"
                                           "record:(e\\d+):s0@1 .*wait:s0:\\2@2")))
      << log;
  b.copy_to_bytes(w, sizeof(w));
  EXPECT_EQ(w[3], 4.0f);
  EXPECT_EQ(state()->wrong_context, wrong_before);
}
