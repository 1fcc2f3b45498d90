// CUDA back end without a GPU: blob decoding, launch planning, argument
// packing, pool buckets, and the mlp_cuda fixture's cuda record.
#include <gtest/gtest.h>

#include <cstring>

#include "cuda_test_util.h"
#include "graphrt/blob_reader.h"
#include "graphrt/error.h"
#include "backends/cuda/cuda_device_api.h"
#include "test_support.h"

using namespace graphrt;
using namespace graphrt::cuda_backend;

namespace {

const DLDataType kHandle{kDLOpaqueHandle, 64, 1};
const DLDataType kI32{kDLInt, 32, 1};
const DLDataType kU32{kDLUInt, 32, 1};
const DLDataType kF32{kDLFloat, 32, 1};
const DLDataType kI64{kDLInt, 64, 1};
const DLDataType kF64{kDLFloat, 64, 1};

CudaModuleImage synthetic_image() {
  CudaModuleImage image;
  image.fmt = "ptx";
  image.data = "// synthetic PTX\n.version 7.0\n";
  image.fmap["k_add"] = {"k_add", {kHandle, kHandle, kI32}, {"blockIdx.x", "threadIdx.x"}};
  image.fmap["k_dyn"] = {"k_dyn", {kHandle, kF32}, {"blockIdx.y", "threadIdx.z", kDynSmemTag}};
  image.fmap["k_half"] = {"k_half", {kHandle, DLDataType{kDLFloat, 16, 1}}, {"threadIdx.x"}};
  return image;
}

CudaModuleImage decode(const std::string& bytes) {
  BlobReader reader(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "synthetic");
  CudaModuleImage image = decode_cuda_payload(reader);
  EXPECT_TRUE(reader.at_end());
  return image;
}

std::string fixture(const std::string& rel) { return graphrt_test::fixture_path("mlp_cuda/" + rel); }

}  // namespace

TEST(CudaPayload, RoundTrip) {
  CudaModuleImage image = synthetic_image();
  CudaModuleImage back = decode(encode_cuda_payload(image));
  EXPECT_EQ(back.fmt, "ptx");
  EXPECT_EQ(back.data, image.data);
  ASSERT_EQ(back.fmap.size(), 3u);
  const CudaFunctionInfo& dyn = back.fmap.at("k_dyn");
  EXPECT_EQ(dyn.name, "k_dyn");
  ASSERT_EQ(dyn.arg_types.size(), 2u);
  EXPECT_TRUE(dyn.arg_types[0] == kHandle);
  EXPECT_TRUE(dyn.arg_types[1] == kF32);
  EXPECT_EQ(dyn.launch_param_tags, (std::vector<std::string>{"blockIdx.y", "threadIdx.z", kDynSmemTag}));
}

TEST(CudaPayload, EveryTruncationIsAnErrorWithOffset) {
  std::string bytes = encode_cuda_payload(synthetic_image());
  for (size_t n = 0; n < bytes.size(); ++n) {
    BlobReader reader(reinterpret_cast<const uint8_t*>(bytes.data()), n, "cut");
    try {
      decode_cuda_payload(reader);
      FAIL() << "decoding " << n << " of " << bytes.size() << " bytes succeeded";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("offset"), std::string::npos) << e.what();
    }
  }
}

TEST(CudaPayload, CorruptFields) {
  // An empty (or differing) FunctionInfo name: the key wins, as in TVM v0.18 blobs.
  {
    BlobWriter w;
    w.write_string("ptx");
    w.write_u64(1);
    w.write_string("a");
    w.write_string("");
    w.write_u64(0);
    w.write_u64(0);
    w.write_string("x");
    CudaModuleImage image = decode(w.bytes());
    EXPECT_EQ(image.fmap.at("a").name, "a");
  }
  // Absurd function count.
  {
    BlobWriter w;
    w.write_string("ptx");
    w.write_u64(uint64_t(1) << 60);
    EXPECT_THROW(decode(w.bytes()), Error);
  }
  // Absurd arg-type count.
  {
    BlobWriter w;
    w.write_string("ptx");
    w.write_u64(1);
    w.write_string("k");
    w.write_string("k");
    w.write_u64(uint64_t(1) << 40);
    EXPECT_THROW(decode(w.bytes()), Error);
  }
  // Duplicate key.
  {
    BlobWriter w;
    w.write_string("cubin");
    w.write_u64(2);
    for (int i = 0; i < 2; ++i) {
      w.write_string("k");
      w.write_string("k");
      w.write_u64(0);
      w.write_u64(0);
    }
    w.write_string("x");
    try {
      decode(w.bytes());
      FAIL();
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("duplicate"), std::string::npos) << e.what();
    }
  }
  // Empty image.
  {
    CudaModuleImage image = synthetic_image();
    image.data.clear();
    EXPECT_THROW(decode(encode_cuda_payload(image)), Error);
  }
}

TEST(CudaPlan, LaunchTagSlots) {
  EXPECT_EQ(launch_tag_slot("blockIdx.x"), 0);
  EXPECT_EQ(launch_tag_slot("blockIdx.y"), 1);
  EXPECT_EQ(launch_tag_slot("blockIdx.z"), 2);
  EXPECT_EQ(launch_tag_slot("threadIdx.x"), 3);
  EXPECT_EQ(launch_tag_slot("threadIdx.y"), 4);
  EXPECT_EQ(launch_tag_slot("threadIdx.z"), 5);
  EXPECT_EQ(launch_tag_slot("vthread"), -1);
  EXPECT_EQ(launch_tag_slot(kDynSmemTag), -1);
}

TEST(CudaPlan, ArgKindsAndArity) {
  CudaFunctionInfo info{"k", {kHandle, kI32, kU32, kF32, kI64, kF64}, {"threadIdx.x", "blockIdx.x"}};
  KernelPlan plan = plan_kernel(info);
  EXPECT_EQ(plan.args, (std::vector<ArgKind>{ArgKind::kValuePointer, ArgKind::kInt32, ArgKind::kUInt32,
                                              ArgKind::kFloat32, ArgKind::kValuePointer, ArgKind::kValuePointer}));
  EXPECT_EQ(plan.tag_slots, (std::vector<int>{3, 0}));
  EXPECT_FALSE(plan.dyn_smem);
  EXPECT_EQ(plan.expected_args(), 8);
  // Handles of any bit width are pointers.
  EXPECT_EQ(plan_kernel({"h", {DLDataType{kDLOpaqueHandle, 32, 1}}, {}}).args[0], ArgKind::kValuePointer);
}

TEST(CudaPlan, UnsupportedDtypesNameKernelAndDtype) {
  const DLDataType bad[] = {{kDLFloat, 16, 1}, {kDLInt, 8, 1}, {kDLInt, 16, 1}, {kDLUInt, 64, 1},
                            {kDLFloat, 32, 4}, {kDLUInt, 1, 1}, {kDLBfloat, 16, 1}};
  for (DLDataType t : bad) {
    try {
      plan_kernel({"my_kernel", {kHandle, t}, {}});
      FAIL() << dtype_to_string(t) << " accepted";
    } catch (const Error& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find("my_kernel"), std::string::npos) << msg;
      EXPECT_NE(msg.find("argument 1"), std::string::npos) << msg;
      EXPECT_NE(msg.find("lanes " + std::to_string(t.lanes)), std::string::npos) << msg;
    }
  }
  try {
    plan_kernel({"k", {DLDataType{kDLFloat, 16, 1}}, {}});
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("float16"), std::string::npos) << e.what();
  }
}

TEST(CudaPlan, BadTags) {
  EXPECT_THROW(plan_kernel({"k", {}, {kDynSmemTag, "threadIdx.x"}}), Error);  // dyn smem not last
  try {
    plan_kernel({"k", {}, {"vthread"}});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown launch tag 'vthread'"), std::string::npos) << e.what();
  }
}

TEST(CudaPlan, LaunchDims) {
  KernelPlan plan = plan_kernel({"k", {kHandle, kI32}, {"blockIdx.x", "threadIdx.x", "blockIdx.z", "threadIdx.y"}});
  TVMValue v[6];
  v[0].v_handle = nullptr;
  v[1].v_int64 = 7;
  v[2].v_int64 = 40;   // grid.x
  v[3].v_int64 = 256;  // block.x
  v[4].v_int64 = 0;    // grid.z: 0 is ignored
  v[5].v_int64 = 2;    // block.y
  LaunchDims d = compute_launch_dims(plan, v, 6);
  EXPECT_EQ(d.grid[0], 40u);
  EXPECT_EQ(d.grid[1], 1u);
  EXPECT_EQ(d.grid[2], 1u);
  EXPECT_EQ(d.block[0], 256u);
  EXPECT_EQ(d.block[1], 2u);
  EXPECT_EQ(d.block[2], 1u);
  EXPECT_EQ(d.dyn_smem_bytes, 0u);

  EXPECT_THROW(compute_launch_dims(plan, v, 5), Error);  // wrong arity
  v[5].v_int64 = -1;
  EXPECT_THROW(compute_launch_dims(plan, v, 6), Error);  // negative extent

  KernelPlan dyn = plan_kernel({"d", {kHandle}, {"threadIdx.x", kDynSmemTag}});
  TVMValue w[3];
  w[0].v_handle = nullptr;
  w[1].v_int64 = 128;
  w[2].v_int64 = 64 * 1024;
  LaunchDims dd = compute_launch_dims(dyn, w, 3);
  EXPECT_EQ(dd.block[0], 128u);
  EXPECT_EQ(dd.dyn_smem_bytes, 64u * 1024);
  try {
    compute_launch_dims(dyn, w, 2);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("expects 3 arguments"), std::string::npos) << e.what();
  }
}

TEST(CudaPlan, PackArgs) {
  KernelPlan plan = plan_kernel({"k", {kHandle, kI32, kU32, kF32, kI64, kF64}, {}});
  TVMValue v[6];
  int dummy = 0;
  v[0].v_handle = &dummy;
  v[1].v_int64 = (int64_t(1) << 32) + 5;  // truncated to 5
  v[2].v_int64 = -1;                       // 0xffffffff
  v[3].v_float64 = 1.5;
  v[4].v_int64 = int64_t(1) << 40;
  v[5].v_float64 = 2.25;
  Arg32 temps[6];
  void* params[6];
  pack_kernel_args(plan, v, temps, params);
  EXPECT_EQ(params[0], &v[0]);
  EXPECT_EQ(*static_cast<void**>(params[0]), &dummy);
  EXPECT_EQ(*static_cast<int32_t*>(params[1]), 5);
  EXPECT_EQ(*static_cast<uint32_t*>(params[2]), 0xffffffffu);
  EXPECT_EQ(*static_cast<float*>(params[3]), 1.5f);
  EXPECT_EQ(params[4], &v[4]);
  EXPECT_EQ(*static_cast<int64_t*>(params[4]), int64_t(1) << 40);
  EXPECT_EQ(params[5], &v[5]);
  EXPECT_EQ(*static_cast<double*>(params[5]), 2.25);
  for (int i = 1; i <= 3; ++i) EXPECT_EQ(params[i], &temps[i]);
}

TEST(CudaPool, Buckets) {
  EXPECT_EQ(pool_bucket_size(0), 256u);
  EXPECT_EQ(pool_bucket_size(1), 256u);
  EXPECT_EQ(pool_bucket_size(256), 256u);
  EXPECT_EQ(pool_bucket_size(257), 512u);
  EXPECT_EQ(pool_bucket_size(3000), 4096u);
  EXPECT_EQ(pool_bucket_size(1 << 20), size_t(1) << 20);
  EXPECT_EQ(pool_bucket_size((1 << 20) + 1), size_t(2) << 20);
  EXPECT_EQ(pool_bucket_size((size_t(5) << 20) - 3), size_t(5) << 20);
}

TEST(CudaModule, FindFunctionOnSyntheticModule) {
  cuda_test::init();
  Module m(new CudaModuleNode(synthetic_image(), cuda_device_api()));
  EXPECT_EQ(m->type_key(), "cuda");
  EXPECT_EQ(m->function_names(), (std::vector<std::string>{"k_add", "k_dyn", "k_half"}));
  EXPECT_TRUE(m->get_function("k_add"));
  EXPECT_TRUE(m->get_function("k_dyn"));
  EXPECT_FALSE(m->get_function("nope"));
  EXPECT_TRUE(m->get_function("__tvm_prepare_global_barrier"));
  try {
    m->get_function("k_half");
    FAIL() << "float16 kernel argument accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("k_half"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("float16"), std::string::npos) << e.what();
  }
}

TEST(CudaModule, LoadBinaryThroughRegistry) {
  cuda_test::init();
  std::string bytes = encode_cuda_payload(synthetic_image());
  BlobReader reader(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "synthetic");
  Module m = load_binary("cuda", reader);
  EXPECT_EQ(m->type_key(), "cuda");
  EXPECT_TRUE(reader.at_end());
  std::string cut = bytes.substr(0, bytes.size() - 3);
  BlobReader bad(reinterpret_cast<const uint8_t*>(cut.data()), cut.size(), "cut");
  try {
    load_binary("cuda", bad);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.context_value("tkey"), "cuda") << e.what();
  }
}

// The fixture's cuda record, through the normal module loading path.
TEST(CudaFixture, MlpCudaModuleTree) {
  GRAPHRT_REQUIRE_FIXTURES();
  cuda_test::init();
  for (const char* file : {"deploy_lib.so", "deploy_factory.so"}) {
    SCOPED_TRACE(file);
    Module root = load_module(fixture(file));
    CudaModuleNode* cu = cuda_test::find_cuda_module(root);
    ASSERT_NE(cu, nullptr) << describe_module_tree(root);
    const CudaModuleImage& image = cu->image();
    EXPECT_TRUE(image.fmt == "ptx" || image.fmt == "cubin") << image.fmt;
    EXPECT_GT(image.data.size(), 100u);
    ASSERT_FALSE(image.fmap.empty());
    for (const auto& entry : image.fmap) {
      const CudaFunctionInfo& info = entry.second;
      EXPECT_EQ(info.name, entry.first);
      EXPECT_NE(info.name.find("kernel"), std::string::npos) << info.name;
      ASSERT_FALSE(info.arg_types.empty()) << info.name;
      // Buffers come first as handles {3, 64, 1}; scalars are int32.
      EXPECT_TRUE(info.arg_types[0] == kHandle) << info.name;
      for (DLDataType t : info.arg_types) EXPECT_TRUE(t == kHandle || t == kI32) << info.name << " " << dtype_to_string(t);
      ASSERT_FALSE(info.launch_param_tags.empty()) << info.name;
      for (const std::string& tag : info.launch_param_tags)
        EXPECT_TRUE(launch_tag_slot(tag) >= 0 || tag == kDynSmemTag) << info.name << " " << tag;
      KernelPlan plan = plan_kernel(info);
      EXPECT_EQ(plan.expected_args(), static_cast<int>(info.arg_types.size() + info.launch_param_tags.size()));
      EXPECT_TRUE(cu->get_function(entry.first)) << entry.first;
      // The host library finds the kernel through its imports.
      EXPECT_TRUE(root->get_function(entry.first, true)) << entry.first;
    }
    if (std::string(file) == "deploy_lib.so") {
      std::string listing;
      for (const auto& entry : image.fmap) {
        listing += "  " + entry.first + "(";
        for (size_t i = 0; i < entry.second.arg_types.size(); ++i)
          listing += (i ? ", " : "") + dtype_to_string(entry.second.arg_types[i]);
        listing += ") tags:";
        for (const std::string& tag : entry.second.launch_param_tags) listing += " " + tag;
        listing += "\n";
      }
      std::printf("mlp_cuda cuda record: fmt=%s, %zu bytes of image, %zu kernels\n%s", image.fmt.c_str(),
                  image.data.size(), image.fmap.size(), listing.c_str());
    }
  }
}
