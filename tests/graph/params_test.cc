// TVM's params format: byte-identical round trip of every fixture's params.
#include "fixture_cases.h"

using namespace graphrt;
using namespace graphrt_test;

TEST(Params, RoundTripIsByteIdentical) {
  GRAPHRT_REQUIRE_FIXTURES();
  for (const std::string& name : all_tvm_cases()) {
    std::string bytes = read_text(fixture_path(name + "/deploy_params.params"));
    ParamList params = load_param_dict(bytes, name);
    EXPECT_EQ(save_param_dict(params), bytes) << name;
  }
}

TEST(Params, ScalarsAndEmptyArraysRoundTrip) {
  ParamList params;
  NDArray scalar = NDArray::empty({}, DLDataType{kDLInt, 64, 1}, cpu());
  *static_cast<int64_t*>(scalar->data) = -5;
  params.emplace_back("s", scalar);
  params.emplace_back("empty", NDArray::empty({0, 3}, DLDataType{kDLFloat, 16, 1}, cpu()));
  std::string bytes = save_param_dict(params);
  ParamList back = load_param_dict(bytes);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].first, "s");
  EXPECT_EQ(*static_cast<int64_t*>(back[0].second->data), -5);
  EXPECT_EQ(back[1].second.shape(), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(save_param_dict(back), bytes);
}
