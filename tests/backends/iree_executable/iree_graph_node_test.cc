// A graph node dispatching to an IREE executable library's entry point.
#include "fixture_cases.h"
#include "graphrt/blob_reader.h"
#include "backends/iree_executable/iree_executable_module.h"

using namespace graphrt;
using namespace graphrt_test;

namespace {

// x, y -> out = node(x, y): three float32[4] entries.
std::string elementwise_graph(const std::string& func_name) {
  nlohmann::json g = {
      {"nodes",
       {{{"op", "null"}, {"name", "x"}, {"inputs", nlohmann::json::array()}},
        {{"op", "null"}, {"name", "y"}, {"inputs", nlohmann::json::array()}},
        {{"op", "tvm_op"},
         {"name", "mul"},
         {"inputs", {{0, 0, 0}, {1, 0, 0}}},
         {"attrs", {{"func_name", func_name}, {"num_inputs", "2"}, {"num_outputs", "1"}, {"flatten_data", "0"}}}}}},
      {"arg_nodes", {0, 1}},
      {"heads", {{2, 0, 0}}},
      {"attrs",
       {{"dltype", {"list_str", {"float32", "float32", "float32"}}},
        {"shape", {"list_shape", {{4}, {4}, {4}}}},
        {"storage_id", {"list_int", {0, 1, 2}}}}},
      {"node_row_ptr", {0, 1, 2, 3}}};
  return g.dump();
}

Module iree_module_from_blob_record() {
  std::vector<uint8_t> image = read_file(fixture_path("iree/elementwise_mul_x86_64.so"));
  BlobWriter payload;
  payload.write_string(std::string(image.begin(), image.end()));
  std::string bytes = payload.take();
  BlobReader reader(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "record");
  Module m = load_binary("iree_executable", reader);
  EXPECT_TRUE(reader.at_end());
  return m;
}

}  // namespace

TEST(IreeGraphNode, NodeDispatchesToExecutableEntryPoint) {
  GRAPHRT_REQUIRE_FIXTURES();
  Module iree = iree_module_from_blob_record();
  EXPECT_EQ(iree->type_key(), "iree_executable");
  std::vector<std::string> names = iree->function_names();
  ASSERT_FALSE(names.empty());
  for (const std::string& func : {names.front(), std::string("dispatch_0")}) {
    auto ex = GraphExecutor::create(elementwise_graph(func), iree, {cpu()});
    std::vector<float> x{1, 2, 3, 4}, y{100, 200, 300, 400}, out(4);
    NDArray xa = NDArray::empty({4}, DLDataType{kDLFloat, 32, 1}, cpu());
    NDArray ya = NDArray::empty({4}, DLDataType{kDLFloat, 32, 1}, cpu());
    xa.copy_from_bytes(x.data(), 16);
    ya.copy_from_bytes(y.data(), 16);
    ex->set_input("x", xa.handle());
    ex->set_input("y", ya.handle());
    ex->run();
    ex->get_output(0).copy_to_bytes(out.data(), 16);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(out[i], x[i] * y[i]) << func << " element " << i;
  }
}

TEST(IreeGraphNode, UnknownEntryPointIsNamed) {
  GRAPHRT_REQUIRE_FIXTURES();
  Module iree = iree_module_from_blob_record();
  try {
    GraphExecutor::create(elementwise_graph("dispatch_7"), iree, {cpu()});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("dispatch_7"), std::string::npos) << e.what();
  }
}
