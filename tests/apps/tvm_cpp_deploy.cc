// TVM v0.18's apps/howto_deploy/cpp_deploy.cc, graph-executor part, built
// against graphrt's TVM-compatible headers with no source change beyond what
// a different model needs: the model path (a fixture's deploy_factory.so),
// its input's name and shape, and the expected output (TVM's own, from the
// fixture) in place of "x + 1".
//
// usage: tvm_cpp_deploy FIXTURE_DIR   (exit 77: fixture absent, skipped)
#include <dlpack/dlpack.h>
#include <tvm/runtime/module.h>
#include <tvm/runtime/packed_func.h>
#include <tvm/runtime/registry.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

// The float32 payload of a little-endian, C-order .npy file (format 1.0).
static std::vector<float> ReadNpyFloat32(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  ICHECK(in) << "cannot open " << path;
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ICHECK_GE(bytes.size(), 10u) << path;
  size_t header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
  std::string header(bytes.data() + 10, header_len);
  ICHECK(header.find("'<f4'") != std::string::npos) << path << ": not float32: " << header;
  std::vector<float> values((bytes.size() - 10 - header_len) / sizeof(float));
  std::memcpy(values.data(), bytes.data() + 10 + header_len, values.size() * sizeof(float));
  return values;
}

void DeployGraphExecutor(const std::string& fixture) {
  LOG(INFO) << "Running graph executor...";
  std::vector<float> input = ReadNpyFloat32(fixture + "/input_data.npy");
  std::vector<float> expected = ReadNpyFloat32(fixture + "/output_0.npy");
  // load in the library
  DLDevice dev{kDLCPU, 0};
  tvm::runtime::Module mod_factory = tvm::runtime::Module::LoadFromFile(fixture + "/deploy_factory.so");
  // create the graph executor module
  tvm::runtime::Module gmod = mod_factory.GetFunction("default")(dev);
  tvm::runtime::PackedFunc set_input = gmod.GetFunction("set_input");
  tvm::runtime::PackedFunc get_output = gmod.GetFunction("get_output");
  tvm::runtime::PackedFunc run = gmod.GetFunction("run");

  // Use the C++ API
  tvm::runtime::NDArray x = tvm::runtime::NDArray::Empty({1, 1, 28, 28}, DLDataType{kDLFloat, 32, 1}, dev);
  tvm::runtime::NDArray y = tvm::runtime::NDArray::Empty({1, 10}, DLDataType{kDLFloat, 32, 1}, dev);

  ICHECK_EQ(input.size(), 28u * 28u);
  for (int i = 0; i < 28; ++i) {
    for (int j = 0; j < 28; ++j) {
      static_cast<float*>(x->data)[i * 28 + j] = input[i * 28 + j];
    }
  }
  // set the right input
  set_input("data", x);
  // run the code
  run();
  // get the output
  get_output(0, y);

  ICHECK_EQ(expected.size(), 10u);
  for (int i = 0; i < 10; ++i) {
    // bit-exact: the same kernels on the same inputs as TVM's own run
    float got = static_cast<float*>(y->data)[i];
    ICHECK_EQ(std::memcmp(&got, &expected[i], sizeof(float)), 0)
        << "output " << i << ": " << got << " vs. TVM's " << expected[i];
  }
  LOG(INFO) << "output matches TVM's bit for bit";
}

int main(int argc, char** argv) {
  if (argc < 2) return std::fprintf(stderr, "usage: %s FIXTURE_DIR\n", argv[0]), 2;
  if (!std::ifstream(std::string(argv[1]) + "/deploy_factory.so")) {
    std::fprintf(stderr, "skipped: no fixture at %s\n", argv[1]);
    return 77;
  }
  DeployGraphExecutor(argv[1]);
  return 0;
}
