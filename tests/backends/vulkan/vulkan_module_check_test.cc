// The "vulkan" record without a device: both shader-map layouts TVM has
// written read back, and crafted modules (from a real TVM v0.26 module) each
// end in one error naming module, function and field, before any driver sees
// a shader.
#include <gtest/gtest.h>

#include <functional>

#include "backends/vulkan/spirv_reflect.h"
#include "backends/vulkan/spirv_validate.h"
#include "backends/vulkan/vulkan_device_api.h"
#include "backends/vulkan/vulkan_module.h"
#include "graphrt/error.h"
#include "vulkan_test_util.h"

namespace {

using graphrt::vulkan_backend::ShaderMapLayout;
using graphrt::vulkan_backend::VulkanModuleImage;

// The MLP case's module as TVM v0.26 wrote it.
VulkanModuleImage real_image() {
  graphrt::Module m = graphrt::load_module(vulkan_test::case_dir("relax_mlp_vulkan") + "/deploy_relax.so");
  auto* v = vulkan_test::find_vulkan_module(m);
  if (!v) throw std::runtime_error("no vulkan module in the MLP case");
  return v->image();
}

graphrt::Module load_bytes(const std::string& bytes) {
  graphrt::BlobReader reader(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "crafted");
  auto api = std::make_shared<graphrt::vulkan_backend::VulkanDeviceAPI>("/nonexistent/libvulkan.so.1");
  return graphrt::vulkan_backend::load_vulkan_module(reader, api);
}

// The one error loading `image` ends in.
graphrt::Error load_error(const VulkanModuleImage& image) {
  try {
    load_bytes(graphrt::vulkan_backend::encode_vulkan_payload(image));
  } catch (const graphrt::Error& e) {
    return e;
  }
  ADD_FAILURE() << "the crafted module loaded";
  return graphrt::Error("none");
}

class VulkanModuleCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    GRAPHRT_REQUIRE_FIXTURES();
    if (vulkan_test::case_names().empty()) GTEST_SKIP() << "relax-vulkan fixtures not found";
    image_ = real_image();
  }
  void expect_names(const graphrt::Error& e, const std::string& function, const std::string& field,
                    const std::string& words) {
    EXPECT_EQ(e.context_value("module"), "vulkan") << e.what();
    EXPECT_EQ(e.context_value("function"), function) << e.what();
    EXPECT_EQ(e.context_value("field"), field) << e.what();
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
  VulkanModuleImage image_;
  const std::string kernel_ = "fused_matmul_add_relu_kernel";
};

TEST_F(VulkanModuleCheck, TheFixturesModuleIsTheNewerLayoutAndEveryShaderValidates) {
  EXPECT_EQ(image_.layout, ShaderMapLayout::kWrapped);
  EXPECT_EQ(image_.fmt, "vulkan");
  ASSERT_EQ(image_.fmap.size(), 3u);  // fixtures README: the MLP's three kernels
  for (const auto& s : image_.smap) {
    EXPECT_EQ(s.second.flag, 0u) << s.first;
    EXPECT_EQ(s.second.words.at(0), graphrt::vulkan_backend::kSpirvMagic);
    EXPECT_EQ(graphrt::vulkan_backend::validate_spirv(s.second.words), "") << s.first;
    auto iface = graphrt::vulkan_backend::reflect_spirv(s.second.words);
    EXPECT_EQ(iface.entry_points.count(s.first), 1u) << s.first;
  }
  const auto& info = image_.fmap.at(kernel_);
  EXPECT_EQ(info.arg_types.size(), 4u);
  EXPECT_EQ(info.launch_param_tags, (std::vector<std::string>{"blockIdx.x", "threadIdx.y", "threadIdx.x"}));
}

TEST_F(VulkanModuleCheck, BothLayoutsReadBackTheSameModule) {
  for (ShaderMapLayout layout : {ShaderMapLayout::kWrapped, ShaderMapLayout::kBare}) {
    image_.layout = layout;
    const std::string bytes = graphrt::vulkan_backend::encode_vulkan_payload(image_);
    graphrt::BlobReader reader(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "crafted");
    VulkanModuleImage back = graphrt::vulkan_backend::decode_vulkan_payload(reader);
    EXPECT_TRUE(reader.at_end());
    EXPECT_EQ(back.layout, layout);
    ASSERT_EQ(back.smap.size(), image_.smap.size());
    for (const auto& s : image_.smap) EXPECT_EQ(back.smap.at(s.first).words, s.second.words) << s.first;
    graphrt::Module m = load_bytes(bytes);
    EXPECT_EQ(m->function_names().size(), 3u);
    EXPECT_TRUE(m->get_function(kernel_));
  }
}

TEST_F(VulkanModuleCheck, BytesAfterTheShaderMapAreRefused) {
  std::string bytes = graphrt::vulkan_backend::encode_vulkan_payload(image_) + "x";
  try {
    load_bytes(bytes);
    FAIL() << "loaded";
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(e.context_value("field"), "smap") << e.what();
    EXPECT_NE(std::string(e.what()).find("bytes after"), std::string::npos) << e.what();
  }
}

TEST_F(VulkanModuleCheck, InvalidSpirvIsRefusedBeforeAnyDriver) {
  auto& words = image_.smap.at(kernel_).words;
  words[words.size() / 2] = 0xffff0001u;  // an instruction claiming 65535 words
  expect_names(load_error(image_), kernel_, "smap", "invalid SPIR-V");
  image_ = real_image();
  image_.smap.at(kernel_).words.resize(3);  // shorter than the header
  expect_names(load_error(image_), kernel_, "smap", "invalid SPIR-V");
}

TEST_F(VulkanModuleCheck, AFunctionMissingFromTheShaderMap) {
  image_.smap.erase(kernel_);
  expect_names(load_error(image_), kernel_, "smap", "has no shader");
}

TEST_F(VulkanModuleCheck, ArgumentCountsThatDisagreeWithTheKernel) {
  auto& args = image_.fmap.at(kernel_).arg_types;
  args.pop_back();  // three buffers for a shader that binds four
  expect_names(load_error(image_), kernel_, "arg_types", "binds storage buffers at 0, 1, 2, 3");
  image_ = real_image();
  image_.fmap.at(kernel_).arg_types.push_back(DLDataType{kDLOpaqueHandle, 64, 1});
  expect_names(load_error(image_), kernel_, "arg_types", "gives 5 buffer arguments");
  image_ = real_image();
  auto& more = image_.fmap.at(kernel_).arg_types;  // a scalar, then a buffer after it
  more.insert(more.begin() + 1, DLDataType{kDLInt, 64, 1});
  expect_names(load_error(image_), kernel_, "arg_types", "buffer after a scalar");
}

TEST_F(VulkanModuleCheck, LaunchTagsOutOfRange) {
  image_.fmap.at(kernel_).launch_param_tags.push_back("blockIdx.w");
  expect_names(load_error(image_), kernel_, "launch_param_tags", "'blockIdx.w'");
  image_ = real_image();
  image_.fmap.at(kernel_).launch_param_tags.push_back("tir.use_dyn_shared_memory");
  expect_names(load_error(image_), kernel_, "launch_param_tags", "no dynamic shared memory");
  image_ = real_image();
  image_.fmap.at(kernel_).launch_param_tags.push_back("threadIdx.x");
  expect_names(load_error(image_), kernel_, "launch_param_tags", "appears twice");
}

TEST_F(VulkanModuleCheck, AUniformBufferFlagOnAShaderWithoutOne) {
  image_.smap.at(kernel_).flag = graphrt::vulkan_backend::kShaderUsesUniformBuffer;
  expect_names(load_error(image_), kernel_, "flag", "declares none");
}

TEST_F(VulkanModuleCheck, ArgumentTypesAShaderCannotTake) {
  image_.fmap.at(kernel_).arg_types.push_back(DLDataType{kDLFloat, 16, 1});
  expect_names(load_error(image_), kernel_, "arg_types", "float16");
  image_ = real_image();
  image_.fmap.at(kernel_).arg_extra_tags = {0, 1, 0, 0};
  expect_names(load_error(image_), kernel_, "arg_extra_tags", "extra tag 1");
}

TEST_F(VulkanModuleCheck, TheLaunchIsCheckedAgainstTheShadersWorkgroup) {
  const auto& info = image_.fmap.at(kernel_);
  auto plan = graphrt::vulkan_backend::plan_vulkan_kernel(info, image_.smap.at(kernel_));
  ASSERT_TRUE(plan.local_size_known);
  const uint32_t max_grid[3] = {65535, 65535, 65535};
  std::vector<TVMValue> values(plan.expected_args());
  values[4].v_int64 = 7;                     // blockIdx.x
  values[5].v_int64 = plan.local_size[1];    // threadIdx.y
  values[6].v_int64 = plan.local_size[0];    // threadIdx.x
  auto launch = graphrt::vulkan_backend::plan_vulkan_launch(plan, values.data(), static_cast<int>(values.size()), max_grid);
  EXPECT_EQ(launch.grid[0], 7u);
  EXPECT_EQ(launch.grid[1], 1u);
  values[4].v_int64 = 70000;  // past the device's grid
  try {
    graphrt::vulkan_backend::plan_vulkan_launch(plan, values.data(), static_cast<int>(values.size()), max_grid);
    FAIL();
  } catch (const graphrt::Error& e) {
    expect_names(e, kernel_, "launch_param_tags", "blockIdx.x = 70000 is out of range");
  }
  values[4].v_int64 = 7;
  values[6].v_int64 = plan.local_size[0] + 1;
  try {
    graphrt::vulkan_backend::plan_vulkan_launch(plan, values.data(), static_cast<int>(values.size()), max_grid);
    FAIL();
  } catch (const graphrt::Error& e) {
    expect_names(e, kernel_, "launch_param_tags", "differs from the shader's LocalSize");
  }
  EXPECT_THROW(graphrt::vulkan_backend::plan_vulkan_launch(plan, values.data(), 3, max_grid), graphrt::Error);
}

TEST(VulkanLoaderAbsent, OneClearRefusalNamingTheLibrary) {
  graphrt::vulkan_backend::VulkanDeviceAPI api("/nonexistent/libvulkan.so.1");
  EXPECT_EQ(api.device_count(), 0);
  try {
    api.check_available(DLDevice{kDLVulkan, 0});
    FAIL();
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(e.kind(), graphrt::ErrorKind::kDevice);
    EXPECT_NE(std::string(e.what()).find("libvulkan.so.1 not found"), std::string::npos) << e.what();
  }
}

}  // namespace
