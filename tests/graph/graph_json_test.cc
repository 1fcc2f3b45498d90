// Graph JSON validation: every inconsistency names where it is.
#include "fixture_cases.h"
#include "graphrt/graph_json.h"

using namespace graphrt;

namespace {

nlohmann::json valid_graph() {
  return nlohmann::json::parse(R"({
    "nodes": [{"op": "null", "name": "x", "inputs": []},
              {"op": "tvm_op", "name": "relu", "inputs": [[0, 0, 0]],
               "attrs": {"func_name": "f", "num_inputs": "1", "num_outputs": "1", "flatten_data": "0"}}],
    "arg_nodes": [0], "heads": [[1, 0, 0]],
    "attrs": {"dltype": ["list_str", ["float32", "float32"]],
              "shape": ["list_shape", [[1, 4], [1, 4]]],
              "storage_id": ["list_int", [0, 1]],
              "device_index": ["list_int", [1, 1]]},
    "node_row_ptr": [0, 1, 2]})");
}

std::string error_for(const nlohmann::json& g) {
  try {
    parse_graph_json(g.dump());
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(GraphJson, ValidGraphParses) {
  GraphDef g = parse_graph_json(valid_graph().dump());
  EXPECT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[1].func_name, "f");
  EXPECT_EQ(g.num_entries(), 2u);
}

TEST(GraphJson, InputIndexOutOfRange) {
  auto g = valid_graph();
  g["nodes"][1]["inputs"][0][0] = 5;
  std::string msg = error_for(g);
  EXPECT_NE(msg.find("graph node 1 'relu'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("node 5"), std::string::npos) << msg;
}

TEST(GraphJson, OutputCountMismatch) {
  auto g = valid_graph();
  g["nodes"][1]["attrs"]["num_outputs"] = "2";
  EXPECT_NE(error_for(g).find("graph node 1 'relu': node_row_ptr gives 1 outputs but the node has 2"), std::string::npos)
      << error_for(g);
}

TEST(GraphJson, UnknownDtype) {
  auto g = valid_graph();
  g["attrs"]["dltype"][1][1] = "floaty32";
  std::string msg = error_for(g);
  EXPECT_NE(msg.find("unknown dtype 'floaty32'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("dltype[1]"), std::string::npos) << msg;
}

TEST(GraphJson, MissingAttr) {
  auto g = valid_graph();
  g["nodes"][1]["attrs"].erase("func_name");
  EXPECT_NE(error_for(g).find("missing attribute 'func_name'"), std::string::npos) << error_for(g);
  auto h = valid_graph();
  h["attrs"].erase("storage_id");
  EXPECT_NE(error_for(h).find("attrs has no 'storage_id'"), std::string::npos) << error_for(h);
}

TEST(GraphJson, AttrLengthMismatchAndBadRowPtr) {
  auto g = valid_graph();
  g["attrs"]["shape"][1].erase(1);
  EXPECT_NE(error_for(g).find("attrs.shape has 1 values for 2 entries"), std::string::npos) << error_for(g);
  auto h = valid_graph();
  h["node_row_ptr"] = {0, 1};
  EXPECT_NE(error_for(h).find("node_row_ptr has 2 entries for 2 nodes"), std::string::npos) << error_for(h);
}

TEST(GraphJson, ArgNodeMustBeInputAndHeadMustExist) {
  auto g = valid_graph();
  g["arg_nodes"] = {1};
  EXPECT_NE(error_for(g).find("listed in arg_nodes but is not an input"), std::string::npos) << error_for(g);
  auto h = valid_graph();
  h["heads"][0][1] = 3;
  EXPECT_NE(error_for(h).find("heads[0]"), std::string::npos) << error_for(h);
}

TEST(GraphJson, NotJsonAndUnknownKeys) {
  try {
    parse_graph_json("{nodes: oops");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not valid JSON"), std::string::npos);
  }
  auto g = valid_graph();
  g["surprise"] = 1;
  EXPECT_NE(error_for(g).find("unknown top-level key 'surprise'"), std::string::npos);
  auto h = valid_graph();
  h["nodes"][1]["op"] = "relay_op";
  EXPECT_NE(error_for(h).find("unknown op 'relay_op'"), std::string::npos);
}

// Shapes whose byte size overflows 64 bits are refused at parse time, naming
// the node (before the check [2^62,1,28,28] "ran" and [2^32,2^32,16] planned 0 bytes).
TEST(GraphJson, OverflowingShapesNameTheNode) {
  const std::vector<std::vector<int64_t>> shapes = {{int64_t(1) << 62, 1, 28, 28},
                                                    {int64_t(1) << 32, int64_t(1) << 32, 16},
                                                    {int64_t(1) << 61, 4}};
  for (const auto& shape : shapes) {
    nlohmann::json g = valid_graph();
    g["attrs"]["shape"][1][0] = shape;
    std::string error = error_for(g);
    EXPECT_NE(error.find("graph node 0 'x'"), std::string::npos) << error;
    EXPECT_NE(error.find("64"), std::string::npos) << error;
  }
  nlohmann::json g = valid_graph();
  g["attrs"]["shape"][1][1] = std::vector<int64_t>{int64_t(1) << 40, int64_t(1) << 22};
  EXPECT_NE(error_for(g).find("graph node 1 'relu'"), std::string::npos) << error_for(g);
}

// A number past double's range is a JSON error too (fuzz finding: nlohmann
// throws out_of_range there, which escaped as a non-graphrt exception).
TEST(GraphJson, NumberOverflowIsAGraphrtError) {
  EXPECT_THROW(parse_graph_json(R"({"nodes": [2e22222]})"), Error);
}

// A device_index outside DLDeviceType's values (fuzz finding: 21 reached a
// DLDevice and was read back as an invalid enum value).
TEST(GraphJson, DeviceIndexMustBeADlpackDeviceType) {
  auto g = valid_graph();
  g["attrs"]["device_index"][1][1] = 21;
  std::string msg = error_for(g);
  EXPECT_NE(msg.find("device_index 21 is not a DLPack device type"), std::string::npos) << msg;
  g["attrs"]["device_index"][1][1] = 2;  // kDLCUDA stays valid
  EXPECT_EQ(error_for(g), "");
}
