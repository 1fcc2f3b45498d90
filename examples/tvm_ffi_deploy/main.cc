// TVM v0.26 C++ deploy code (tvm-ffi's API), built against an installed graphrt.
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/function.h>
#include <tvm/runtime/tensor.h>

#include <iostream>
#include <vector>

namespace ffi = tvm::ffi;

int main(int argc, char** argv) {
  DLDevice dev{kDLCPU, 0};
  ffi::Module lib = ffi::Module::LoadFromFile(argc > 1 ? argv[1] : "deploy_relax.so");
  ffi::Module vm = lib->GetFunction("vm_load_executable").value()().cast<ffi::Module>();
  vm->GetFunction("vm_initialization").value()(static_cast<int>(kDLCPU), 0, 2);  // device, id, pooled
  ffi::Function main = vm->GetFunction("main").value();

  std::vector<float> x_data(784, 1.0f);
  auto x = tvm::runtime::Tensor::Empty({1, 784}, DLDataType{kDLFloat, 32, 1}, dev);
  x.CopyFromBytes(x_data.data(), x_data.size() * sizeof(float));
  ffi::Any out = main(x);  // a Tensor; a tuple result is an ffi::Array
  auto y = out.cast<tvm::runtime::Tensor>();
  std::vector<float> y_data(y.numel());
  y.CopyToBytes(y_data.data(), y_data.size() * sizeof(float));
  std::cout << "output " << y.shape() << " " << ffi::DLDataTypeToString(y.dtype()) << "\n";
  return 0;
}
