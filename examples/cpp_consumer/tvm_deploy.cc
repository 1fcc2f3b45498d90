// The same job as main.cc, written against TVM's C++ runtime API: the
// tvm/runtime headers come with the installed graphrt package.
#include <tvm/runtime/module.h>
#include <tvm/runtime/packed_func.h>
#include <tvm/runtime/registry.h>

#include <iostream>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 2) return std::cerr << "usage: " << argv[0] << " MODEL.so\n", 2;
  try {
    DLDevice dev{kDLCPU, 0};
    tvm::runtime::Module lib = tvm::runtime::Module::LoadFromFile(argv[1]);
    tvm::runtime::Module gmod = lib.GetFunction("default")(dev);
    tvm::runtime::NDArray in = gmod.GetFunction("get_input")(0);
    tvm::runtime::NDArray zeros = tvm::runtime::NDArray::Empty(in.Shape(), in.DataType(), dev);
    std::vector<char> bytes(tvm::runtime::GetDataSize(*zeros.operator->()), 0);
    zeros.CopyFromBytes(bytes.data(), bytes.size());
    gmod.GetFunction("set_input")(0, zeros);
    gmod.GetFunction("run")();
    tvm::runtime::NDArray out = gmod.GetFunction("get_output")(0);
    std::cout << "output 0: " << out.Shape() << " " << out.DataType() << "\n";
  } catch (const tvm::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
