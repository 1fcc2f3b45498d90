// C++ deploy code written for TVM v0.26 (the tvm-ffi C++ API: tvm::ffi::Module,
// Function, Any, Array, Shape, tvm::runtime::Tensor), built unchanged against graphrt's
// headers and libgraphrt: nothing here names graphrt. It runs TVM v0.26 Relax exports
// (relax-ffi/relax_mlp; relax-ffi/relax_tuple_io, whose nested tuple result reads as
// Arrays) and a graph executor factory (mlp) and compares every output with TVM's own,
// bit for bit; then the errors deploy code meets.
//
// usage: tvm_ffi_deploy FIXTURES_DIR   (exit 77: fixtures absent, skipped)
#include <dlpack/dlpack.h>
#include <tvm/ffi/any.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>
#include <tvm/runtime/tensor.h>

#include <cstdio>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ffi = tvm::ffi;
using tvm::runtime::Tensor;

namespace {

void Check(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error("check failed: " + what);
}

// A little-endian, C-order .npy file (format 1.0): its dtype, shape and bytes.
struct Npy {
  DLDataType dtype;
  std::vector<int64_t> shape;
  std::vector<char> bytes;
};

Npy ReadNpy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  Check(static_cast<bool>(in), "cannot open " + path);
  std::vector<char> file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Check(file.size() >= 10, path + ": too short");
  const size_t header_len = static_cast<unsigned char>(file[8]) | (static_cast<unsigned char>(file[9]) << 8);
  const std::string header(file.data() + 10, header_len);
  Npy npy;
  if (header.find("'<f4'") != std::string::npos) {
    npy.dtype = DLDataType{kDLFloat, 32, 1};
  } else if (header.find("'<i4'") != std::string::npos) {
    npy.dtype = DLDataType{kDLInt, 32, 1};
  } else {
    throw std::runtime_error(path + ": dtype not float32 or int32: " + header);
  }
  const size_t open = header.find("'shape': (") + 10;
  const size_t close = header.find(')', open);
  std::string dims = header.substr(open, close - open);
  for (size_t pos = 0; pos < dims.size();) {
    const size_t comma = dims.find(',', pos);
    const std::string item = dims.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (item.find_first_of("0123456789") != std::string::npos) npy.shape.push_back(std::stoll(item));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  npy.bytes.assign(file.begin() + 10 + static_cast<std::ptrdiff_t>(header_len), file.end());
  return npy;
}

Tensor TensorFromNpy(const std::string& path, DLDevice dev) {
  Npy npy = ReadNpy(path);
  Tensor t = Tensor::Empty(ffi::Shape(npy.shape), npy.dtype, dev);
  t.CopyFromBytes(npy.bytes.data(), npy.bytes.size());
  return t;
}

// The tensor equals TVM's output bit for bit: same shape, dtype and bytes.
void ExpectSameAsTvm(const Tensor& got, const std::string& path) {
  Npy expected = ReadNpy(path);
  Check(ffi::Shape(got.shape()) == ffi::Shape(expected.shape), path + ": shape " +
        std::to_string(got->ndim) + "-d differs");
  Check(got.dtype().code == expected.dtype.code && got.dtype().bits == expected.dtype.bits, path + ": dtype differs");
  std::vector<char> bytes(expected.bytes.size());
  got.CopyToBytes(bytes.data(), bytes.size());
  Check(bytes == expected.bytes, path + ": values differ from TVM's");
}

ffi::Module LoadRelaxVM(const std::string& path, DLDevice dev) {
  ffi::Module executable = ffi::Module::LoadFromFile(path);
  ffi::Module vm = executable->GetFunction("vm_load_executable").value()().cast<ffi::Module>();
  // device type, device id, allocator kind (2: pooled)
  vm->GetFunction("vm_initialization").value()(static_cast<int>(dev.device_type), dev.device_id, 2);
  return vm;
}

void DeployRelaxMlp(const std::string& dir) {
  DLDevice dev{kDLCPU, 0};
  ffi::Module vm = LoadRelaxVM(dir + "/deploy_relax.so", dev);
  ffi::Function main = vm->GetFunction("main").value();
  Tensor x = TensorFromNpy(dir + "/input_x.npy", dev);
  ffi::Any out = main(x);
  Check(out.type_index() == ffi::TypeIndex::kTVMFFITensor, "relax_mlp returns a tensor, got " + out.GetTypeKey());
  Tensor y = out.cast<Tensor>();
  Check(y->ndim == 2 && y->shape[0] == 1 && y->shape[1] == 10 && y.numel() == 10, "relax_mlp output shape");
  ExpectSameAsTvm(y, dir + "/output_0.npy");
  // The output's data, read in place as deploy code does.
  Npy expected = ReadNpy(dir + "/output_0.npy");
  Check(std::memcmp(y->data, expected.bytes.data(), expected.bytes.size()) == 0, "relax_mlp output read in place");
  // A DLTensor* argument (a caller's own tensor) works as well.
  ExpectSameAsTvm(main(const_cast<DLTensor*>(x.GetDLTensorPtr())).cast<Tensor>(), dir + "/output_0.npy");
  std::cout << "relax_mlp: output matches TVM's bit for bit\n";
}

void DeployRelaxTupleIO(const std::string& dir) {
  DLDevice dev{kDLCPU, 0};
  ffi::Module vm = LoadRelaxVM(dir + "/deploy_relax.so", dev);
  ffi::Function main = vm->GetFunction("main").value();
  ffi::Any out = main(TensorFromNpy(dir + "/input_x.npy", dev), TensorFromNpy(dir + "/input_y.npy", dev));
  // (s, (m, r)): an Array whose second item is an Array of two tensors.
  Check(out.GetTypeKey() == "ffi.Array", "relax_tuple_io returns an Array, got " + out.GetTypeKey());
  ffi::Array<ffi::Any> result = out.cast<ffi::Array<ffi::Any>>();
  Check(result.size() == 2, "relax_tuple_io returns 2 items");
  ExpectSameAsTvm(result[0].cast<Tensor>(), dir + "/output_0.npy");
  ffi::Array<Tensor> inner = result[1].cast<ffi::Array<Tensor>>();
  Check(inner.size() == 2, "the inner tuple has 2 tensors");
  ExpectSameAsTvm(inner[0], dir + "/output_1.npy");
  ExpectSameAsTvm(inner.back(), dir + "/output_2.npy");
  // Not every item is a tensor: an Array<Tensor> of the outer tuple is a TypeError.
  Check(!out.try_cast<ffi::Array<Tensor>>().has_value(), "try_cast to Array<Tensor> of a nested tuple");
  try {
    out.cast<ffi::Array<Tensor>>();
    throw std::runtime_error("cast of a nested tuple to Array<Tensor> did not fail");
  } catch (const ffi::Error& e) {
    Check(e.kind() == "TypeError", "a failed cast is a TypeError, got " + e.kind());
    Check(std::string(e.what()).find("`ffi.Array` to `Array<ffi.Tensor>`") != std::string::npos,
          std::string("cast message: ") + e.what());
  }
  std::cout << "relax_tuple_io: 3 outputs match TVM's bit for bit\n";
}

void DeployGraphExecutor(const std::string& dir) {
  DLDevice dev{kDLCPU, 0};
  ffi::Module mod_factory = ffi::Module::LoadFromFile(dir + "/deploy_factory.so");
  // create the graph executor module
  ffi::Module gmod = mod_factory->GetFunction("default").value()(dev).cast<ffi::Module>();
  ffi::Function set_input = gmod->GetFunction("set_input").value();
  ffi::Function get_output = gmod->GetFunction("get_output").value();
  ffi::Function run = gmod->GetFunction("run").value();

  Tensor x = Tensor::Empty({1, 1, 28, 28}, DLDataType{kDLFloat, 32, 1}, dev);
  Tensor y = Tensor::Empty({1, 10}, DLDataType{kDLFloat, 32, 1}, dev);
  Npy input = ReadNpy(dir + "/input_data.npy");
  x.CopyFromBytes(input.bytes.data(), input.bytes.size());
  set_input("data", x);
  run();
  get_output(0, y);
  ExpectSameAsTvm(y, dir + "/output_0.npy");
  // get_output(index) returns the output itself.
  ExpectSameAsTvm(get_output(0).cast<Tensor>(), dir + "/output_0.npy");
  Check(gmod->GetFunction("get_num_outputs").value()().cast<int64_t>() == 1, "get_num_outputs");
  std::cout << "mlp (graph executor): output matches TVM's bit for bit\n";
}

// Values crossing a C++ function: Shape, Array, String, numbers.
void RoundTripValues() {
  ffi::Function echo = ffi::Function::FromPacked([](ffi::PackedArgs args, ffi::Any* rv) { *rv = args[0]; });
  Check(echo(ffi::Shape({2, 3, 4})).cast<ffi::Shape>() == ffi::Shape({2, 3, 4}), "Shape round trip");
  ffi::Array<ffi::String> names = echo(ffi::Array<ffi::String>{"a", "bc"}).cast<ffi::Array<ffi::String>>();
  Check(names.size() == 2 && names[1] == "bc", "Array<String> round trip");
  Check(echo(int64_t{-7}).cast<int>() == -7 && echo(2.5).cast<double>() == 2.5 && echo(true).cast<bool>(),
        "number round trips");
  Check(echo(ffi::String("s")).cast<std::string>() == "s", "String round trip");
  Check(echo(nullptr) == nullptr, "None round trip");
  ffi::Function count = ffi::Function::FromPacked(
      [](const ffi::AnyView* args, int32_t num_args, ffi::Any* rv) { *rv = num_args + (args ? 0 : 0); });
  Check(count(1, "two", 3.0).cast<int>() == 3, "AnyView* packed body");
}

void ErrorsDeployCodeMeets(const std::string& fixtures) {
  ffi::Module lib = ffi::Module::LoadFromFile(fixtures + "/relax-ffi/relax_mlp/deploy_relax.so");
  Check(!lib->GetFunction("no_such_function").has_value(), "a missing function is an empty Optional");
  Check(lib->ImplementsFunction("vm_load_executable"), "ImplementsFunction");
  try {
    lib->GetFunction("no_such_function").value();
    throw std::runtime_error("value() of an empty Optional did not throw");
  } catch (const ffi::Error& e) {
    Check(e.kind() == "RuntimeError", "empty Optional: " + e.kind());
  }
  try {
    ffi::Module::LoadFromFile(fixtures + "/no_such_dir/deploy.so");
    throw std::runtime_error("loading a missing file did not throw");
  } catch (const ffi::Error& e) {
    Check(std::string(e.what()).find("no_such_dir") != std::string::npos, std::string("missing file: ") + e.what());
  }
  // A wrong input (float32[1, 784] expected) fails inside the call as an ffi::Error.
  ffi::Module vm = LoadRelaxVM(fixtures + "/relax-ffi/relax_mlp/deploy_relax.so", DLDevice{kDLCPU, 0});
  try {
    vm->GetFunction("main").value()(Tensor::Empty({2, 2}, DLDataType{kDLFloat, 32, 1}, DLDevice{kDLCPU, 0}));
    throw std::runtime_error("a wrongly shaped input did not fail");
  } catch (const ffi::Error& e) {
    Check(!e.kind().empty() && !e.message().empty(), "wrong input error has a kind and message");
  }
  std::optional<ffi::Function> missing = ffi::Function::GetGlobal("no.such.global");
  Check(!missing.has_value(), "GetGlobal of an unknown name");
  std::cout << "errors: as TVM's API reports them\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return std::fprintf(stderr, "usage: %s FIXTURES_DIR\n", argv[0]), 2;
  const std::string fixtures = argv[1];
  if (!std::ifstream(fixtures + "/relax-ffi/relax_mlp/deploy_relax.so") || !std::ifstream(fixtures + "/mlp/deploy_factory.so")) {
    std::fprintf(stderr, "skipped: no fixtures at %s\n", argv[1]);
    return 77;
  }
  try {
    DeployRelaxMlp(fixtures + "/relax-ffi/relax_mlp");
    DeployRelaxTupleIO(fixtures + "/relax-ffi/relax_tuple_io");
    DeployGraphExecutor(fixtures + "/mlp");
    RoundTripValues();
    ErrorsDeployCodeMeets(fixtures);
  } catch (const ffi::Error& e) {
    std::cerr << "tvm_ffi_deploy: " << e.kind() << ": " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "tvm_ffi_deploy: " << e.what() << "\n";
    return 1;
  }
  std::cout << "tvm_ffi_deploy: all outputs match TVM's\n";
  return 0;
}
