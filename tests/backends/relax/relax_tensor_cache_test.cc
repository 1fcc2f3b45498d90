// vm.builtin.tensor_cache.* and the param_*_from_cache* lookups over tensor
// cache folders this test writes itself: the manifest with nlohmann::json (an
// independent JSON writer), the shards from values fixed here (bfloat16 bit
// patterns worked out by hand), read back through the registered global
// functions and a hand-built executable, byte for byte. Then the refusals:
// each names the file, the record and the field.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "graphrt/error.h"
#include "graphrt/packed_func.h"
#include "graphrt/registry.h"
#include "backends/relax/packed_convention.h"
#include "relax_builder.h"
#include "scratch_dir.h"

namespace {

using graphrt::ArgList;
using graphrt::Error;
using graphrt::ErrorKind;
using graphrt::NDArray;
using graphrt::RetValue;
using graphrt_test::ScratchDir;
using json = nlohmann::json;
using graphrt::relax::Value;

// Little-endian bytes of `values`.
template <typename T>
std::string bytes_of(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

json tensor(const std::string& name, std::vector<int64_t> shape, const std::string& dtype, const std::string& format,
            size_t nbytes, size_t offset) {
  return {{"name", name}, {"shape", shape},   {"dtype", dtype},
          {"format", format}, {"nbytes", nbytes}, {"byteOffset", offset}};
}

json shard(const std::string& path, size_t nbytes, json records) {
  return {{"dataPath", path}, {"format", "raw-shard"}, {"nbytes", nbytes}, {"records", records}, {"md5sum", "x"}};
}

RetValue call(const std::string& name, const ArgList& args) {
  graphrt::PackedFunc f = graphrt::registry_get(name);
  if (!f) throw std::runtime_error("not registered: " + name);
  return graphrt::call_function(f, args);
}

void load(const std::string& folder, const std::string& family = "tensor_cache") {
  call("vm.builtin." + family + ".load", ArgList().add_string(folder).add_int(kDLCPU).add_int(0));
}

NDArray get(const std::string& name) {
  RetValue r = call("vm.builtin.tensor_cache.get", ArgList().add_string(name));
  return r.is_none() ? NDArray() : r.as_ndarray();
}

template <typename T>
std::vector<T> contents(const NDArray& a) {
  std::vector<T> out(a.nbytes() / sizeof(T));
  std::memcpy(out.data(), static_cast<const char*>(a->data) + a->byte_offset, a.nbytes());
  return out;
}

// The values the folder below holds.
const std::vector<float> kWeight = {1.5f, -2.0f, 0.25f, 8.0f, 3.0f, -0.5f, 100.0f, 7.0f};  // 32 bytes
const std::vector<int32_t> kIndex = {7, -3, 11};                                            // 12 bytes
// f32-to-bf16: 1.0 = 0x3F80, -2.5 = 0xC020, 0.15625 = 0x3E20, 65536 = 0x4780 (the float32's upper halves).
const std::vector<uint16_t> kHalves = {0x3F80, 0xC020, 0x3E20, 0x4780};
const std::vector<float> kWidened = {1.0f, -2.5f, 0.15625f, 65536.0f};
const std::vector<int8_t> kBytes = {-1, 2, -3, 4, 5};  // int8 in an f32-to-bf16 cache: stored raw
const std::vector<uint16_t> kBf16 = {0x4049, 0xBF80};   // a bfloat16 tensor, raw

// shard 0: weight (offset 0, aligned), index (offset 32), layer_0 (offset 44, unaligned);
// shard 1: layer_1 (bf16-encoded float32), layer_2 (int8), bf (bfloat16).
json write_cache(const std::string& dir) {
  const std::string s0 = bytes_of(kWeight) + bytes_of(kIndex) + bytes_of(std::vector<float>{4.0f, 5.0f});
  const std::string s1 = bytes_of(kHalves) + bytes_of(kBytes) + std::string(1, '\0') + bytes_of(kBf16);
  write_file(dir + "/params_shard_0.bin", s0);
  write_file(dir + "/params_shard_1.bin", s1);
  json manifest = {
      {"metadata", {{"ParamSize", 6}, {"nested", {{"a", {1, 2.5e3, true, nullptr, "\u00e9"}}}}}},
      {"records",
       {shard("params_shard_0.bin", s0.size(),
              {tensor("weight", {2, 4}, "float32", "raw", 32, 0), tensor("index", {3}, "int32", "raw", 12, 32),
               tensor("layer_0", {2}, "float32", "raw", 8, 44)}),
        shard("params_shard_1.bin", s1.size(),
              {tensor("layer_1", {2, 2}, "float32", "f32-to-bf16", 8, 0),
               tensor("layer_2", {5}, "int8", "f32-to-bf16", 5, 8), tensor("bf", {2}, "bfloat16", "raw", 4, 14)})}}};
  write_file(dir + "/tensor-cache.json", manifest.dump(2));
  return manifest;
}

class TensorCache : public ::testing::Test {
 protected:
  void SetUp() override { call("vm.builtin.tensor_cache.clear", ArgList()); }
  void TearDown() override { call("vm.builtin.tensor_cache.clear", ArgList()); }
};

TEST_F(TensorCache, LoadsEveryTensorWithItsBytes) {
  ScratchDir dir("tensor_cache");
  write_cache(dir.path());
  load(dir.path());
  const NDArray weight = get("weight");
  ASSERT_TRUE(weight.defined());
  EXPECT_EQ(weight.shape(), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(graphrt::dtype_to_string(weight.dtype()), "float32");
  EXPECT_EQ(contents<float>(weight), kWeight);
  EXPECT_EQ(contents<int32_t>(get("index")), kIndex);
  EXPECT_EQ(contents<float>(get("layer_0")), (std::vector<float>{4.0f, 5.0f}));
  const NDArray widened = get("layer_1");
  EXPECT_EQ(graphrt::dtype_to_string(widened.dtype()), "float32");
  EXPECT_EQ(widened.shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(contents<float>(widened), kWidened);
  EXPECT_EQ(contents<int8_t>(get("layer_2")), kBytes);
  EXPECT_EQ(graphrt::dtype_to_string(get("bf").dtype()), "bfloat16");
  EXPECT_EQ(contents<uint16_t>(get("bf")), kBf16);
  EXPECT_FALSE(get("absent").defined());
  // Every tensor a kernel may get is 64-byte aligned, views and copies alike.
  for (const char* name : {"weight", "index", "layer_0", "layer_1", "layer_2", "bf"})
    EXPECT_EQ(reinterpret_cast<uintptr_t>(get(name)->data) % 64, 0u) << name;
}

// An aligned raw tensor is a view of the shard's one copy in the process: a second
// load (under the old name too) gives the same bytes at the same address.
TEST_F(TensorCache, AlignedTensorsShareTheMappingAcrossLoads) {
  ScratchDir dir("tensor_cache");
  write_cache(dir.path());
  load(dir.path());
  const NDArray first = get("weight");
  const NDArray first_copy = get("layer_0");
  call("vm.builtin.tensor_cache.clear", ArgList());
  load(dir.path(), "ndarray_cache");
  const NDArray second = get("weight");
  EXPECT_EQ(first->data, second->data);
  EXPECT_NE(first_copy->data, get("layer_0")->data);  // unaligned: a copy per load
  EXPECT_EQ(contents<float>(second), kWeight);
}

// The loaded weights are the process's own copy: a shard truncated after the load (a mapping
// would then fault, SIGBUS, at the next read) or rewritten in place (a mapping would change the
// weights with no error) leaves them as loaded. The next load reads the file as it is now: the
// rewritten values, or an error naming the shard cut short.
TEST_F(TensorCache, ShardChangedAfterTheLoadLeavesTheLoadedWeights) {
  ScratchDir dir("tensor_cache");
  write_cache(dir.path());
  load(dir.path());
  const NDArray weight = get("weight"), index = get("index");
  const std::string shard0 = dir.path() + "/params_shard_0.bin";
  std::vector<float> other = kWeight;
  for (float& v : other) v = -v;
  {
    std::fstream f(shard0, std::ios::in | std::ios::out | std::ios::binary);  // in place: same inode
    f.write(bytes_of(other).data(), 32);
  }
  EXPECT_EQ(contents<float>(weight), kWeight);
  EXPECT_EQ(contents<float>(get("weight")), kWeight);
  ASSERT_EQ(::truncate(shard0.c_str(), 0), 0);
  EXPECT_EQ(contents<float>(weight), kWeight);  // no SIGBUS
  EXPECT_EQ(contents<int32_t>(index), kIndex);

  try {
    load(dir.path());
    FAIL() << "a shard cut short loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("params_shard_0.bin"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("the manifest says 52"), std::string::npos) << e.what();
  }
  EXPECT_EQ(contents<float>(get("weight")), kWeight);  // a failed load changes nothing

  write_cache(dir.path());  // written anew, then rewritten in place: the next load reads the change
  {
    std::fstream f(shard0, std::ios::in | std::ios::out | std::ios::binary);
    f.write(bytes_of(other).data(), 32);
  }
  load(dir.path());
  EXPECT_EQ(contents<float>(get("weight")), other);
  EXPECT_EQ(contents<float>(weight), kWeight);  // the earlier load's arrays are their own
}

Value value_of(const RetValue& r) { return graphrt::relax::value_from_arg(r.as_args(), 0); }

std::vector<Value> items(const Value& v) { return std::get<graphrt::Ref<graphrt::relax::TupleObj>>(v)->items; }

TEST_F(TensorCache, ParamLookupsByNameAndPrefix) {
  ScratchDir dir("tensor_cache");
  write_cache(dir.path());
  load(dir.path());
  const Value by_name = value_of(call("vm.builtin.param_array_from_cache_by_name_unpacked",
                                      ArgList().add_string("index").add_string("weight")));
  ASSERT_EQ(items(by_name).size(), 2u);
  EXPECT_EQ(contents<int32_t>(std::get<NDArray>(items(by_name)[0])), kIndex);
  EXPECT_EQ(contents<float>(std::get<NDArray>(items(by_name)[1])), kWeight);

  const Value three = value_of(call("vm.builtin.param_array_from_cache", ArgList().add_string("layer").add_int(3)));
  ASSERT_EQ(items(three).size(), 3u);
  EXPECT_EQ(contents<float>(std::get<NDArray>(items(three)[1])), kWidened);
  const Value all = value_of(call("vm.builtin.param_array_from_cache", ArgList().add_string("layer").add_int(-1)));
  EXPECT_EQ(items(all).size(), 3u);  // up to the first missing, layer_3
  try {
    call("vm.builtin.param_array_from_cache", ArgList().add_string("layer").add_int(4));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotFound);
    EXPECT_EQ(e.context_value("name"), "layer_3");
    EXPECT_EQ(e.context_value("builtin"), "vm.builtin.param_array_from_cache");
  }

  graphrt::Module m = call("vm.builtin.param_module_from_cache", ArgList().add_string("layer").add_int(2)).as_module();
  const Value params = value_of(graphrt::call_function(m->require_function("get_params"), ArgList()));
  ASSERT_EQ(items(params).size(), 2u);
  EXPECT_EQ(contents<float>(std::get<NDArray>(items(params)[0])), (std::vector<float>{4.0f, 5.0f}));
}

TEST_F(TensorCache, NamesArrayArgument) {
  ScratchDir dir("tensor_cache");
  write_cache(dir.path());
  load(dir.path());
  const RetValue names = call("runtime.Array", ArgList().add_string("bf").add_string("layer_2"));
  // One argument: the Array object (ArgList has no object adder).
  auto call_with_names = [&](const std::string& name) {
    RetValue ret;
    graphrt::registry_get(name)->call(names.as_args(), &ret);
    return ret;
  };
  const Value out = value_of(call_with_names("vm.builtin.param_array_from_cache_by_name"));
  ASSERT_EQ(items(out).size(), 2u);
  EXPECT_EQ(contents<uint16_t>(std::get<NDArray>(items(out)[0])), kBf16);
  graphrt::Module m = call_with_names("vm.builtin.param_module_from_cache_by_name").as_module();
  EXPECT_EQ(items(value_of(graphrt::call_function(m->require_function("get_params"), ArgList()))).size(), 2u);
  try {
    call("vm.builtin.param_array_from_cache_by_name_unpacked", ArgList().add_string("bf").add_string("nope"));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotFound);
    EXPECT_NE(std::string(e.what()).find("'nope'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("name 1"), std::string::npos) << e.what();
  }
}

TEST_F(TensorCache, UpdateRemoveClear) {
  NDArray a = NDArray::empty({2}, DLDataType{kDLInt, 64, 1}, graphrt::cpu());
  static_cast<int64_t*>(a->data)[0] = 5;
  static_cast<int64_t*>(a->data)[1] = 6;
  call("vm.builtin.tensor_cache.update", ArgList().add_string("x").add_ndarray(a));
  EXPECT_EQ(get("x")->data, a->data);  // an array is kept, not copied
  try {
    call("vm.builtin.tensor_cache.update", ArgList().add_string("x").add_ndarray(a));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kFailedPrecondition);
    EXPECT_EQ(e.context_value("builtin"), "vm.builtin.tensor_cache.update");
  }
  // A plain DLTensor is borrowed by the call: the cache keeps a copy.
  NDArray b = NDArray::empty({2}, DLDataType{kDLInt, 64, 1}, graphrt::cpu());
  static_cast<int64_t*>(b->data)[0] = 9;
  static_cast<int64_t*>(b->data)[1] = 10;
  call("vm.builtin.ndarray_cache.update", ArgList().add_string("x").add_tensor(b.handle()).add_int(1));
  EXPECT_NE(get("x")->data, b->data);
  EXPECT_EQ(contents<int64_t>(get("x")), (std::vector<int64_t>{9, 10}));
  call("vm.builtin.tensor_cache.remove", ArgList().add_string("x"));
  EXPECT_FALSE(get("x").defined());
  call("vm.builtin.tensor_cache.update", ArgList().add_string("y").add_ndarray(a));
  call("vm.builtin.ndarray_cache.clear", ArgList());
  EXPECT_FALSE(get("y").defined());
}

// An executable calls the lookup itself (R.call_packed with the names as string constants).
TEST_F(TensorCache, ExecutableCallsTheLookup) {
  ScratchDir dir("tensor_cache");
  write_cache(dir.path());
  load(dir.path());
  graphrt_test::Builder b;
  const int64_t main = b.function("main", graphrt::relax::FunctionKind::kVMFunc);
  const int64_t lookup = b.function("vm.builtin.param_array_from_cache_by_name_unpacked");
  b.begin(main, {}, 1);
  b.call(0, lookup, {b.constant(std::make_shared<const std::string>("layer_1")),
                     b.constant(std::make_shared<const std::string>("weight"))});
  b.ret(0);
  const Value out = graphrt_test::run(b.vm(), {});
  ASSERT_EQ(items(out).size(), 2u);
  EXPECT_EQ(contents<float>(std::get<NDArray>(items(out)[0])), kWidened);
  EXPECT_EQ(contents<float>(std::get<NDArray>(items(out)[1])), kWeight);
}

// --- Refusals: one Error naming the file, the record and the field.

struct Refusal {
  std::string file;    // expected "file" context (a suffix of it)
  std::string field;   // expected "field" context ("" when none)
  std::string record;  // expected "record" context ("" when none)
  std::string text;    // in the message
};

void expect_refused(const std::string& dir, const Refusal& r) {
  try {
    load(dir);
    FAIL() << "no error for " << r.text;
  } catch (const Error& e) {
    const std::string file = e.context_value("file");
    EXPECT_EQ(file.substr(file.size() - std::min(file.size(), r.file.size())), r.file) << e.what();
    EXPECT_EQ(e.context_value("field"), r.field) << e.what();
    EXPECT_EQ(e.context_value("record"), r.record) << e.what();
    EXPECT_NE(std::string(e.what()).find(r.text), std::string::npos) << e.what();
    EXPECT_EQ(e.context_value("builtin"), "vm.builtin.tensor_cache.load") << e.what();
  }
  EXPECT_FALSE(get("weight").defined()) << "a failed load kept tensors";
}

// Writes the good cache, then the manifest edited by `edit`.
template <typename Edit>
void with_manifest(const std::string& dir, Edit edit) {
  json m = write_cache(dir);
  edit(m);
  write_file(dir + "/tensor-cache.json", m.dump());
}

json& first_tensor(json& m) { return m["records"][0]["records"][0]; }

TEST_F(TensorCache, RefusesBadRecordsNamingFileRecordAndField) {
  ScratchDir dir("tensor_cache");
  const std::string manifest = "tensor-cache.json";
  with_manifest(dir.path(), [](json& m) { first_tensor(m).erase("byteOffset"); });
  expect_refused(dir.path(), {manifest, "byteOffset", "tensor 0", "\"byteOffset\" is missing"});
  with_manifest(dir.path(), [](json& m) { m["records"][0]["records"][1]["nbytes"] = 16; });
  expect_refused(dir.path(), {manifest, "nbytes", "tensor 1", "shape (3,) of int32 takes 12"});
  with_manifest(dir.path(), [](json& m) { m["records"][1]["records"][0]["nbytes"] = 16; });
  expect_refused(dir.path(), {manifest, "nbytes", "tensor 0", "stored as f32-to-bf16 takes 8"});
  with_manifest(dir.path(), [](json& m) { m["records"][0]["records"][2]["byteOffset"] = 48; });
  expect_refused(dir.path(), {manifest, "byteOffset", "tensor 2 'layer_0'", "pass the shard's end (52 bytes)"});
  with_manifest(dir.path(), [](json& m) { first_tensor(m)["format"] = "q4f16_1"; });
  expect_refused(dir.path(), {manifest, "format", "tensor 0", "\"raw\" or \"f32-to-bf16\""});
  with_manifest(dir.path(), [](json& m) { first_tensor(m)["dtype"] = "float33"; });
  expect_refused(dir.path(), {manifest, "dtype", "tensor 0", "float33"});
  with_manifest(dir.path(), [](json& m) { first_tensor(m)["shape"] = {2, -4}; });
  expect_refused(dir.path(), {manifest, "shape", "tensor 0", "must not be negative"});
  with_manifest(dir.path(), [](json& m) { first_tensor(m)["shape"] = {1LL << 40, 1LL << 40}; });
  expect_refused(dir.path(), {manifest, "shape", "tensor 0", ""});
  with_manifest(dir.path(), [](json& m) { first_tensor(m)["shape"] = "2x4"; });
  expect_refused(dir.path(), {manifest, "shape", "tensor 0", "must be an array of integers"});
  with_manifest(dir.path(), [](json& m) { first_tensor(m)["nbytes"] = 32.0; });
  expect_refused(dir.path(), {manifest, "nbytes", "tensor 0", "expected an integer"});
  with_manifest(dir.path(), [](json& m) { m["records"][1]["records"][2]["name"] = "weight"; });
  expect_refused(dir.path(), {manifest, "name", "tensor 2 'weight'", "given to another tensor before (in shard 0)"});
}

TEST_F(TensorCache, RefusesBadShardsAndText) {
  ScratchDir dir("tensor_cache");
  const std::string manifest = "tensor-cache.json";
  with_manifest(dir.path(), [](json& m) { m["records"][1]["dataPath"] = "../params_shard_1.bin"; });
  expect_refused(dir.path(), {manifest, "dataPath", "", "leaves the folder"});
  with_manifest(dir.path(), [](json& m) { m["records"][1]["dataPath"] = "/etc/passwd"; });
  expect_refused(dir.path(), {manifest, "dataPath", "", "absolute path"});
  with_manifest(dir.path(), [](json& m) { m["records"][0]["format"] = "zip"; });
  expect_refused(dir.path(), {manifest, "format", "", "\"raw-shard\""});
  with_manifest(dir.path(), [](json& m) { m.erase("records"); });
  expect_refused(dir.path(), {manifest, "records", "", "\"records\" is missing"});
  with_manifest(dir.path(), [](json& m) { m = json::array(); });
  expect_refused(dir.path(), {manifest, "", "", "must be a JSON object"});

  write_cache(dir.path());
  write_file(dir.path() + "/tensor-cache.json", "{\"records\": [{\"dataPath\": \"params_shard_0.bin\",");
  expect_refused(dir.path(), {manifest, "", "", "not valid JSON"});
  write_file(dir.path() + "/tensor-cache.json", "{\"metadata\":" + std::string(100, '[') + std::string(100, ']') + "}");
  expect_refused(dir.path(), {manifest, "", "", "nested more than 64 deep"});

  // A shard cut short (an interrupted download): named by its own file.
  write_cache(dir.path());
  write_file(dir.path() + "/params_shard_1.bin", bytes_of(kHalves));
  expect_refused(dir.path(), {"params_shard_1.bin", "nbytes", "", "the manifest says 18"});
  // A shard that is missing.
  write_cache(dir.path());
  std::remove((dir.path() + "/params_shard_0.bin").c_str());
  try {
    load(dir.path());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotFound) << e.what();
    EXPECT_NE(e.context_value("file").find("params_shard_0.bin"), std::string::npos) << e.what();
  }
  // No manifest at all.
  ScratchDir empty("tensor_cache_empty");
  try {
    load(empty.path());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotFound) << e.what();
    EXPECT_NE(std::string(e.what()).find("tensor-cache.json"), std::string::npos) << e.what();
  }
}

TEST_F(TensorCache, RefusesBadArguments) {
  try {
    call("vm.builtin.tensor_cache.load", ArgList().add_int(3).add_int(1).add_int(0));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kTypeMismatch);
    EXPECT_EQ(e.context_value("argument"), "0");
  }
  try {
    call("vm.builtin.tensor_cache.update", ArgList().add_string("x"));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("usage (name, tensor[, override])"), std::string::npos) << e.what();
  }
  try {
    call("vm.builtin.param_array_from_cache_by_name", ArgList().add_string("x"));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kTypeMismatch) << e.what();
    EXPECT_EQ(e.context_value("builtin"), "vm.builtin.param_array_from_cache_by_name");
  }
}

}  // namespace
