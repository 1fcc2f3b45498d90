// The "opencl" record and launch planning, without a driver: the fixtures'
// records as TVM v0.26 wrote them, crafted and truncated ones, the function
// table's checks, launch extents, device addresses, and the refusal when
// libOpenCL.so.1 is absent.
#include <gtest/gtest.h>

#include <dirent.h>

#include <climits>

#include "graphrt/module.h"
#include "backends/opencl/opencl_address_space.h"
#include "backends/opencl/opencl_launch.h"
#include "opencl_test_util.h"
#include "test_support.h"

using namespace graphrt;
using namespace graphrt::opencl_backend;
using namespace opencl_test;

namespace {

std::vector<std::string> opencl_case_dirs() {
  std::vector<std::string> out;
  const std::string root = graphrt_test::fixtures_dir() + "/relax-opencl";
  if (graphrt_test::fixtures_dir().empty()) return out;
  DIR* d = opendir(root.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] != '.') out.push_back(root + "/" + e->d_name);
  }
  closedir(d);
  return out;
}

OpenclModuleNode* find_opencl(const Module& root) {
  if (root->type_key() == "opencl") return static_cast<OpenclModuleNode*>(root.get());
  for (const Module& m : root->imports()) {
    if (OpenclModuleNode* found = find_opencl(m)) return found;
  }
  return nullptr;
}

std::shared_ptr<OpenclDeviceAPI> absent_api() { return std::make_shared<OpenclDeviceAPI>("/nonexistent/libOpenCL.so.1"); }

Error error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error";
  return Error("none");
}

const char* kTwoKernels =
    "// Function: add_one\n__kernel void add_one(__global float* a, int n) { a[get_global_id(0)] += 1.0f; }\n"
    "// Function: scale\n__kernel void scale(__global float* a, float s) { a[get_global_id(0)] *= s; }\n";

OpenclModuleImage two_kernels() {
  return image({function("add_one", {kHandle, kI32}, {"blockIdx.x", "threadIdx.x"}),
                function("scale", {kHandle, kF32}, {"blockIdx.x", "threadIdx.x"})},
               kTwoKernels);
}

}  // namespace

TEST(OpenclRecord, EveryFixtureRecordDecodesWithASourcePerKernel) {
  GRAPHRT_REQUIRE_FIXTURES();
  const auto dirs = opencl_case_dirs();
  if (dirs.empty() && graphrt_test::fixtures_required()) FAIL() << "relax-opencl fixtures missing";
  if (dirs.empty()) GTEST_SKIP() << "relax-opencl fixtures not found";
  for (const std::string& dir : dirs) {
    SCOPED_TRACE(dir);
    Module lib = load_module(dir + "/deploy_relax.so");  // no driver touched: kernels build at first use
    OpenclModuleNode* m = find_opencl(lib);
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->image().fmt, "cl");
    ASSERT_FALSE(m->image().fmap.empty());
    for (const auto& entry : m->image().fmap) {
      const std::string& source = m->image().kernel_sources.at(entry.first);
      EXPECT_NE(source.find("__kernel void " + entry.first + "("), std::string::npos) << entry.first;
      EXPECT_EQ(source.find("// Function: "), std::string::npos);  // one section, its marker cut
      KernelPlan plan = plan_kernel(entry.second);
      EXPECT_EQ(plan.args.front(), ArgKind::kBuffer);
      EXPECT_EQ(m->function_names().size(), m->image().fmap.size());
    }
  }
}

TEST(OpenclRecord, RoundTripsAndSplitsAtMarkers) {
  OpenclModuleImage im = two_kernels();
  im.code = "#define ONE 1.0f\n" + im.code;  // text before the first marker goes with every kernel
  const std::string bytes = encode_opencl_payload(im, OpenclPayloadFormat::kRecord);
  BlobReader reader(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "crafted");
  OpenclModuleImage got = decode_opencl_payload(reader, OpenclPayloadFormat::kRecord);
  EXPECT_TRUE(reader.at_end());
  ASSERT_EQ(got.kernel_sources.size(), 2u);
  EXPECT_EQ(got.kernel_sources["add_one"],
            "#define ONE 1.0f\n__kernel void add_one(__global float* a, int n) { a[get_global_id(0)] += 1.0f; }\n");
  EXPECT_EQ(got.kernel_sources["scale"].rfind("#define ONE 1.0f\n__kernel void scale(", 0), 0u);
  EXPECT_EQ(got.fmap["scale"].arg_types[1].code, kDLFloat);
}

TEST(OpenclRecord, MarkersCountOnlyAtTheStartOfALine) {
  auto parts = split_kernel_sources("// Function: a\r\nx // Function: b\ny\n// Function: c\nz");
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts["a"], "x // Function: b\ny\n");
  EXPECT_EQ(parts["c"], "z");
}

TEST(OpenclRecord, DeviceBinaryFormatsAreRefusedByName) {
  for (const char* fmt : {"xclbin", "awsxclbin", "aocx"}) {
    Error e = error_of([&] { load(image({}, kTwoKernels, fmt), absent_api()); });
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    EXPECT_NE(std::string(e.what()).find(std::string("'") + fmt + "' is a device binary"), std::string::npos) << e.what();
    EXPECT_EQ(e.context_value("module"), "opencl");
    EXPECT_EQ(e.context_value("field"), "fmt");
  }
  Error e = error_of([&] { load(image({}, kTwoKernels, "spirv"), absent_api()); });
  EXPECT_NE(std::string(e.what()).find("unknown opencl module format 'spirv'"), std::string::npos) << e.what();
}

TEST(OpenclRecord, AFunctionMissingFromTheSourceFailsTheLoad) {
  OpenclModuleImage im = two_kernels();
  im.fmap["gone"] = function("gone", {kHandle}, {"threadIdx.x"});
  Error e = error_of([&] { load(im, absent_api()); });
  EXPECT_NE(std::string(e.what()).find("opencl kernel 'gone' of the function table has no \"// Function: \" section"),
            std::string::npos)
      << e.what();
  EXPECT_EQ(e.context_value("module"), "opencl");
  EXPECT_EQ(e.context_value("function"), "'gone'");
  EXPECT_EQ(e.context_value("field"), "code");
}

TEST(OpenclRecord, SourceWithoutMarkersOrWithOneTwiceIsRefused) {
  Error none = error_of([&] { load(image({}, "__kernel void k() {}\n"), absent_api()); });
  EXPECT_NE(std::string(none.what()).find("no \"// Function: <name>\" line"), std::string::npos) << none.what();
  EXPECT_EQ(none.context_value("field"), "code");
  Error twice = error_of([&] { split_kernel_sources("// Function: k\na\n// Function: k\nb\n"); });
  EXPECT_NE(std::string(twice.what()).find("defines kernel 'k' twice"), std::string::npos) << twice.what();
  Error unnamed = error_of([&] { split_kernel_sources("// Function: \nx"); });
  EXPECT_NE(std::string(unnamed.what()).find("without a name"), std::string::npos) << unnamed.what();
}

TEST(OpenclRecord, EveryTruncationAndAHugeCountEndInOneError) {
  const std::string bytes = encode_opencl_payload(two_kernels(), OpenclPayloadFormat::kWithArgExtraTags);
  for (size_t n = 0; n < bytes.size(); ++n) {
    BlobReader reader(reinterpret_cast<const uint8_t*>(bytes.data()), n, "truncated");
    EXPECT_THROW(decode_opencl_payload(reader, OpenclPayloadFormat::kWithArgExtraTags), Error) << n;
  }
  std::string garbled = bytes;
  garbled[10] = '\xff';  // the function count: far more than the bytes hold
  garbled[15] = '\x7f';
  BlobReader reader(reinterpret_cast<const uint8_t*>(garbled.data()), garbled.size(), "garbled");
  EXPECT_THROW(decode_opencl_payload(reader, OpenclPayloadFormat::kWithArgExtraTags), Error);
}

TEST(OpenclRecord, AnArgumentExtraTagIsRefused) {
  std::string bytes = encode_opencl_payload(image({function("k", {kHandle}, {})}, "// Function: k\n"),
                                            OpenclPayloadFormat::kWithArgExtraTags);
  const size_t tag_at = bytes.size() - 8 - std::string("// Function: k\n").size() - 4;
  bytes[tag_at] = 1;
  BlobReader reader(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "crafted");
  Error e = error_of([&] { decode_opencl_payload(reader, OpenclPayloadFormat::kWithArgExtraTags); });
  EXPECT_EQ(e.context_value("field"), "arg_extra_tags");
  EXPECT_EQ(e.context_value("function"), "'k'");
}

TEST(OpenclLaunch, UnsupportedArgumentTypesFailTheLoadNamingTheField) {
  OpenclModuleImage im = two_kernels();
  im.fmap["scale"].arg_types[1] = DLDataType{kDLFloat, 16, 1};
  Error e = error_of([&] { load(im, absent_api()); });
  EXPECT_NE(std::string(e.what()).find("argument 1 has dtype float16"), std::string::npos) << e.what();
  EXPECT_EQ(e.context_value("function"), "'scale'");
  EXPECT_EQ(e.context_value("field"), "arg_types");
  im.fmap["scale"].arg_types[1] = DLDataType{kDLFloat, 32, 4};
  EXPECT_EQ(error_of([&] { load(im, absent_api()); }).context_value("field"), "arg_types");
}

TEST(OpenclLaunch, UnknownOrRepeatedLaunchTagsFailTheLoad) {
  for (const char* tag : {"warpIdx.x", "tir.use_dyn_shared_memory", "blockIdx.w"}) {
    OpenclModuleImage im = two_kernels();
    im.fmap["add_one"].launch_param_tags.push_back(tag);
    Error e = error_of([&] { load(im, absent_api()); });
    EXPECT_NE(std::string(e.what()).find(std::string("launch tag '") + tag + "'"), std::string::npos) << e.what();
    EXPECT_EQ(e.context_value("field"), "launch_param_tags");
    EXPECT_EQ(e.context_value("function"), "'add_one'");
  }
  OpenclModuleImage im = two_kernels();
  im.fmap["add_one"].launch_param_tags.push_back("threadIdx.x");
  EXPECT_NE(std::string(error_of([&] { load(im, absent_api()); }).what()).find("given twice"), std::string::npos);
}

TEST(OpenclLaunch, GlobalIsGridTimesBlockAndExtentsAreChecked) {
  KernelPlan plan = plan_kernel(function("k", {kHandle, kI64}, {"blockIdx.y", "blockIdx.x", "threadIdx.y", "threadIdx.x"}));
  EXPECT_EQ(plan.work_dim, 2u);
  TVMValue v[6];
  v[0].v_handle = nullptr;
  v[1].v_int64 = 5;
  v[2].v_int64 = 3;   // blockIdx.y
  v[3].v_int64 = 0;   // blockIdx.x: 0 counts as 1
  v[4].v_int64 = 8;   // threadIdx.y
  v[5].v_int64 = 16;  // threadIdx.x
  LaunchDims dims = compute_launch_dims(plan, v, 6);
  EXPECT_EQ(dims.global[0], 16u);
  EXPECT_EQ(dims.global[1], 24u);
  EXPECT_EQ(dims.local[0], 16u);
  EXPECT_EQ(dims.local[1], 8u);
  EXPECT_EQ(dims.global[2], 1u);

  Error count = error_of([&] { compute_launch_dims(plan, v, 5); });
  EXPECT_EQ(count.kind(), ErrorKind::kTypeMismatch);
  EXPECT_NE(std::string(count.what()).find("expects 6 arguments (2 kernel arguments, 4 launch extents), got 5"),
            std::string::npos)
      << count.what();
  EXPECT_EQ(count.context_value("field"), "arg_types");
  for (int64_t bad : {int64_t(-1), int64_t(UINT32_MAX) + 1}) {
    v[5].v_int64 = bad;
    Error e = error_of([&] { compute_launch_dims(plan, v, 6); });
    EXPECT_EQ(e.kind(), ErrorKind::kOutOfRange);
    EXPECT_EQ(e.context_value("field"), "launch_param_tags");
    EXPECT_EQ(e.context_value("function"), "'k'");
  }
}

TEST(OpenclLaunch, ScalarsAreNarrowedToTheirOwnBytes) {
  TVMValue v;
  v.v_int64 = -2;
  EXPECT_EQ(scalar_value(ArgKind::kInt32, v).i32, -2);
  EXPECT_EQ(scalar_bytes(ArgKind::kInt32), 4u);
  EXPECT_EQ(scalar_value(ArgKind::kInt64, v).i64, -2);
  EXPECT_EQ(scalar_bytes(ArgKind::kInt64), 8u);
  v.v_float64 = 0.5;
  EXPECT_EQ(scalar_value(ArgKind::kFloat32, v).f32, 0.5f);
  EXPECT_EQ(scalar_bytes(ArgKind::kBuffer), 0u);
}

TEST(OpenclAddressSpace, AddressesFindTheirBufferAndAreNeverReused) {
  AddressSpace space;
  DeviceBuffer a;
  a.size = 100;
  a.mem = reinterpret_cast<cl_mem>(uintptr_t(0x10));
  void* pa = space.insert(a);
  DeviceBuffer b;
  b.size = 5000;
  b.mem = reinterpret_cast<cl_mem>(uintptr_t(0x20));
  void* pb = space.insert(b);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(pa) % AddressSpace::kAlignment, 0u);
  EXPECT_GE(reinterpret_cast<uintptr_t>(pb), reinterpret_cast<uintptr_t>(pa) + 100 + 4096 - 100);
  AddressSpace::Found found;
  ASSERT_TRUE(space.find(static_cast<char*>(pb) + 4999, &found));
  EXPECT_EQ(found.mem, b.mem);
  EXPECT_EQ(found.offset, 4999u);
  EXPECT_EQ(found.size, 5000u);
  EXPECT_TRUE(space.find(static_cast<char*>(pa) + 100, &found));  // one past: an empty view
  EXPECT_FALSE(space.find(static_cast<char*>(pa) + 101, &found));
  EXPECT_FALSE(space.find(reinterpret_cast<void*>(uintptr_t(0x1000)), &found));  // a host address
  DeviceBuffer erased;
  EXPECT_TRUE(space.erase(pa, &erased));
  EXPECT_FALSE(space.find(pa, &found));
  void* pc = space.insert(a);
  EXPECT_GT(reinterpret_cast<uintptr_t>(pc), reinterpret_cast<uintptr_t>(pb));
  EXPECT_EQ(space.take_all().size(), 2u);
}

TEST(OpenclLibraryAbsent, OneClearRefusalNamingTheLibrary) {
  auto api = absent_api();
  EXPECT_EQ(api->device_count(), 0);
  Error e = error_of([&] { api->check_available(DLDevice{kDLOpenCL, 0}); });
  EXPECT_EQ(e.kind(), ErrorKind::kDevice);
  EXPECT_NE(std::string(e.what()).find("libOpenCL.so.1 not found"), std::string::npos) << e.what();
  Error alloc = error_of([&] { api->alloc(DLDevice{kDLOpenCL, 0}, 64, 64); });
  EXPECT_NE(std::string(alloc.what()).find("device opencl:0 is unavailable: libOpenCL.so.1 not found"),
            std::string::npos)
      << alloc.what();
  // A module loads (kernels build at first use) and its call is refused the same way.
  Module m = load(two_kernels(), api);
  PackedFunc f = m->get_function("add_one");
  ASSERT_TRUE(f);
  TVMValue v[4];
  int codes[4] = {kTVMOpaqueHandle, kDLInt, kDLInt, kDLInt};
  v[0].v_handle = nullptr;
  v[1].v_int64 = v[2].v_int64 = v[3].v_int64 = 1;
  RetValue ret;
  Error call = error_of([&] { f->call(TVMArgs(v, codes, 4), &ret); });
  EXPECT_NE(std::string(call.what()).find("libOpenCL.so.1 not found"), std::string::npos) << call.what();
}
