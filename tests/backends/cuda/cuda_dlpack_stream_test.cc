// DLPack's stream hand-over (TVMStreamStreamSynchronize, which Python's
// __dlpack__(stream) calls) against the fake driver: the consumer's stream
// waits for graphrt's on the device, the host does not wait.
#include <gtest/gtest.h>

#include <regex>

#include "cuda_test_util.h"
#include "fake_driver_util.h"
#include "graphrt/device_api.h"
#include "tvm/runtime/c_runtime_api.h"

using namespace graphrt;

TEST(CudaDlpackStream, ConsumerStreamWaitsForAnEvent) {
  ASSERT_EQ(cuda_fake::kEnvSet, 0);
  cuda_test::init();
  const DLDevice gpu{kDLCUDA, 0};
  DeviceAPI* api = device_api(gpu);
  void* consumer = api->create_stream(gpu);
  cuda_fake::LogMark mark;
  ASSERT_EQ(TVMStreamStreamSynchronize(kDLCUDA, 0, nullptr, consumer), 0) << TVMGetLastError();
  std::string log = mark.since();
  EXPECT_TRUE(std::regex_search(log, std::regex("record:(e\\d+):s0@1 .*wait:s\\d+:\\1@1"))) << log;
  EXPECT_EQ(log.find("sync:"), std::string::npos) << log;
  // The legacy stream handed to itself needs nothing.
  cuda_fake::LogMark same;
  ASSERT_EQ(TVMStreamStreamSynchronize(kDLCUDA, 0, nullptr, nullptr), 0) << TVMGetLastError();
  EXPECT_EQ(same.since().find("wait:"), std::string::npos) << same.since();
  api->free_stream(gpu, consumer);
}
