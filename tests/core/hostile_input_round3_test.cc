// Hostile input, round 3, through the C++ and C APIs: TVM's sizes for bool
// and sub-byte dtypes, special files refused by the one file helper, graph
// JSON that lies, and module import trees (DAGs accepted, cycles refused).
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "graphrt/binary_loader.h"
#include "graphrt/blob_reader.h"
#include "graphrt/c_api.h"
#include "graphrt/graph_executor.h"
#include "graphrt/graph_json.h"
#include "graphrt/module.h"
#include "graphrt/ndarray.h"
#include "graphrt/regular_file.h"
#include "graphrt/runtime.h"
#include "graphrt/tvm_abi.h"
#include "tvm/runtime/c_runtime_api.h"

using namespace graphrt;

namespace {

// One NDArray record in TVM's layout, written here from the format so the
// reader is not checked against its own writer.
std::string ndarray_record(uint8_t code, uint8_t bits, const std::vector<int64_t>& shape, const std::string& data) {
  BlobWriter w;
  w.write_u64(0xDD5E40F096B4A13FULL);
  w.write_u64(0);
  w.write_u32(kDLCPU);
  w.write_u32(0);
  w.write_u32(static_cast<uint32_t>(shape.size()));
  w.write_u8(code);
  w.write_u8(bits);
  w.write_u16(1);
  for (int64_t d : shape) w.write_u64(static_cast<uint64_t>(d));
  w.write_u64(data.size());
  w.write_raw(data.data(), data.size());
  return w.take();
}

std::string params_file(const std::string& name, const std::string& record) {
  BlobWriter w;
  w.write_u64(0xF7E58D4F05049CB7ULL);
  w.write_u64(0);
  w.write_u64(1);
  w.write_string(name);
  w.write_u64(1);
  w.write_raw(record.data(), record.size());
  return w.take();
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/graphrt_round3_XXXXXX";
    path_ = mkdtemp(pattern);
  }
  ~TempDir() {
    for (const std::string& f : files_) std::remove(f.c_str());
    rmdir(path_.c_str());
  }
  std::string file(const std::string& name) {
    files_.push_back(path_ + "/" + name);
    return files_.back();
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::vector<std::string> files_;
};

}  // namespace

TEST(SubByteDtypes, SizesFollowTvmRule) {
  EXPECT_EQ(dtype_bytes(DLDataType{kDLUInt, 1, 1}, 100000), 100000u);  // bool: a byte each
  EXPECT_EQ(dtype_bytes(DLDataType{kDLInt, 4, 1}, 7), 7u);
  EXPECT_EQ(dtype_bytes(DLDataType{kDLInt, 1, 1}, 3), 3u);
  EXPECT_EQ(dtype_bytes(DLDataType{kDLInt, 4, 4}, 5), 10u);  // int4x4: 16 bits per element
  EXPECT_EQ(dtype_bytes(DLDataType{kDLFloat, 32, 4}, 2), 32u);
}

TEST(SubByteDtypes, BoolAndInt4ParamsLoadWhole) {
  const std::string bools("\x01\x00\x01\x01\x00\x01\x00\x00\x01\x01\x01", 11);
  ParamList bool_params = load_param_dict(params_file("b", ndarray_record(kDLUInt, 1, {11}, bools)));
  ASSERT_EQ(bool_params.size(), 1u);
  const NDArray& b = bool_params[0].second;
  EXPECT_EQ(dtype_to_string(b.dtype()), "bool");
  EXPECT_EQ(std::memcmp(b->data, bools.data(), bools.size()), 0);

  std::string int4s;
  for (int i = -8; i < 8; ++i) int4s.push_back(static_cast<char>(i));
  ParamList int4_params = load_param_dict(params_file("q", ndarray_record(kDLInt, 4, {4, 4}, int4s)));
  EXPECT_EQ(std::memcmp(int4_params[0].second->data, int4s.data(), 16), 0);
  // and back out in the same layout
  const std::string saved = save_param_dict(int4_params);
  EXPECT_EQ(saved, params_file("q", ndarray_record(kDLInt, 4, {4, 4}, int4s)));
}

TEST(SubByteDtypes, PackedBitSizesAreRefused) {
  // 100 bools stored as 13 bytes (packed bits) is not TVM's layout
  // (bytes after the record, so that only the size is wrong)
  const std::string bytes = params_file("b", ndarray_record(kDLUInt, 1, {100}, std::string(13, '\1'))) + std::string(87, '\0');
  const std::string error = error_of([&] { load_param_dict(bytes, "x.params"); });
  EXPECT_NE(error.find("data_byte_size 13"), std::string::npos) << error;
  EXPECT_NE(error.find("param: b"), std::string::npos) << error;
}

TEST(SubByteDtypes, BitsNotAPowerOfTwoRefusedByName) {
  const std::string error =
      error_of([] { load_param_dict(params_file("w", ndarray_record(kDLInt, 3, {4}, std::string(4, '\0'))), "w.params"); });
  EXPECT_NE(error.find("int3 has 3 bits, not a power of two"), std::string::npos) << error;
  EXPECT_NE(error.find("param: w"), std::string::npos) << error;
  EXPECT_NE(error.find("file: w.params"), std::string::npos) << error;
}

TEST(SubByteDtypes, CApiLoadsBoolParams) {
  const std::string bytes = params_file("b", ndarray_record(kDLUInt, 1, {3}, std::string("\1\0\1", 3)));
  int count = 0;
  const char* names = nullptr;
  TVMArrayHandle* arrays = nullptr;
  ASSERT_EQ(graphrt_params_load(bytes.data(), bytes.size(), &count, &names, &arrays), 0) << TVMGetLastError();
  ASSERT_EQ(count, 1);
  EXPECT_EQ(arrays[0]->dtype.bits, 1);
  EXPECT_EQ(static_cast<const char*>(arrays[0]->data)[2], 1);
  TVMArrayFree(arrays[0]);
  graphrt_free_handle_array(arrays);
}

TEST(SpecialFiles, FifoDeviceAndDirectoryRefusedWithoutBlocking) {
  TempDir dir;
  const std::string fifo = dir.file("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::string error = error_of([&] { read_regular_file(fifo, "graph JSON"); });
  EXPECT_NE(error.find("graph JSON is a FIFO, not a regular file [file: " + fifo + "]"), std::string::npos) << error;
  error = error_of([&] { read_regular_file("/dev/zero", "input"); });
  EXPECT_NE(error.find("input is a character device"), std::string::npos) << error;
  error = error_of([&] { read_regular_file(dir.path(), "params file"); });
  EXPECT_NE(error.find("params file is a directory"), std::string::npos) << error;
  error = error_of([&] { load_module(fifo); });
  EXPECT_NE(error.find("FIFO"), std::string::npos) << error;
  LoadOptions elf;
  elf.loader = "elf";
  error = error_of([&] { load_module(fifo, elf); });
  EXPECT_NE(error.find("FIFO"), std::string::npos) << error;
  error = error_of([&] { load_plugin(fifo); });
  EXPECT_NE(error.find("plugin is a FIFO"), std::string::npos) << error;
  TVMModuleHandle handle = nullptr;
  EXPECT_NE(TVMModLoadFromFile(fifo.c_str(), "so", &handle), 0);
  EXPECT_NE(std::string(TVMGetLastError()).find("FIFO"), std::string::npos) << TVMGetLastError();
}

TEST(SpecialFiles, MissingFileIsNotFoundAndSizeBoundHolds) {
  Error missing("");
  try {
    read_regular_file("/nonexistent/graph.json", "graph JSON");
  } catch (const Error& e) {
    missing = e;
  }
  EXPECT_EQ(missing.kind(), ErrorKind::kNotFound);
  EXPECT_EQ(missing.context_value("file"), "/nonexistent/graph.json");
  TempDir dir;
  const std::string path = dir.file("big.txt");
  FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_TRUE(f);
  std::fputs("0123456789", f);
  std::fclose(f);
  EXPECT_EQ(read_regular_file(path, "text", 10), "0123456789");
  const std::string error = error_of([&] { read_regular_file(path, "text", 9); });
  EXPECT_NE(error.find("text is 10 bytes, more than the 9 bytes graphrt reads"), std::string::npos) << error;
}

namespace {
// x -> __nop -> out, with the alias's attributes given.
std::string alias_graph(const std::string& out_dtype, const std::string& out_shape, int out_sid,
                        const std::string& arg_nodes = "[0]") {
  return R"({"nodes":[{"op":"null","name":"x","inputs":[]},
    {"op":"tvm_op","name":"r","inputs":[[0,0,0]],"attrs":{"func_name":"__nop","num_inputs":"1","num_outputs":"1","flatten_data":"0"}}],
    "arg_nodes":)" + arg_nodes + R"(,"heads":[[1,0,0]],"node_row_ptr":[0,1,2],
    "attrs":{"dltype":["list_str",["float32",")" + out_dtype + R"("]],
             "shape":["list_shape",[[2,3],)" + out_shape + R"(]],
             "storage_id":["list_int",[0,)" + std::to_string(out_sid) + "]]}}";
}
}  // namespace

TEST(GraphJsonThatLies, AliasesMustBeOneTensor) {
  EXPECT_NO_THROW(parse_graph_json(alias_graph("float32", "[6]", 0)));
  std::string error = error_of([] { parse_graph_json(alias_graph("int32", "[6]", 0)); });
  EXPECT_NE(error.find("graph node 1 'r': __nop (an alias) has output dtype int32 but its input has float32"),
            std::string::npos) << error;
  EXPECT_NE(error.find("attribute: dltype"), std::string::npos) << error;
  error = error_of([] { parse_graph_json(alias_graph("float32", "[10000]", 0)); });
  EXPECT_NE(error.find("output shape (10000,) but its input has (2, 3)"), std::string::npos) << error;
  error = error_of([] { parse_graph_json(alias_graph("float32", "[6]", 1)); });
  EXPECT_NE(error.find("output storage_id 1 but its input has 0"), std::string::npos) << error;
  EXPECT_NE(error.find("attribute: storage_id"), std::string::npos) << error;
}

TEST(GraphJsonThatLies, InputNodesMustBeListed) {
  const std::string error = error_of([] { parse_graph_json(alias_graph("float32", "[6]", 0, "[]")); });
  EXPECT_NE(error.find("graph node 0 'x': is an input (op null) but arg_nodes does not list it"), std::string::npos)
      << error;
}

TEST(ImportTree, WriterAcceptsDagsAndRefusesCycles) {
  // A module imported by two others may come first (TVM numbers depth-first).
  const std::vector<ModuleBlobRecord> records{{"a", ""}, {"b", ""}, {"c", ""}};
  EXPECT_NO_THROW(write_module_blob(records, {{2, 1}, {2}, {}}));
  EXPECT_NO_THROW(write_module_blob(records, {{}, {0}, {0, 1}}));
  std::string error = error_of([&] { write_module_blob(records, {{1}, {2}, {0}}); });
  EXPECT_NE(error.find("imports itself through a cycle"), std::string::npos) << error;
  error = error_of([&] { write_module_blob(records, {{0}}); });
  EXPECT_NE(error.find("record 0 ('a') imports itself"), std::string::npos) << error;
}
