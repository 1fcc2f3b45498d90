// Loads a one-file TVM model (deploy.so), runs it on the CPU, prints output 0.
#include <graphrt/graph_executor.h>
#include <graphrt/runtime.h>

#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 2) return std::fprintf(stderr, "usage: %s MODEL.so\n", argv[0]), 2;
  try {
    graphrt::Module lib = graphrt::load_module(argv[1]);
    graphrt::Module gmod = graphrt::call_function(lib->require_function("default"),
                                                  graphrt::ArgList().add_device(graphrt::cpu())).as_module();
    auto executor = graphrt::graph_executor_of(gmod);
    for (const graphrt::TensorInfo& in : executor->input_info()) {
      graphrt::NDArray x = graphrt::NDArray::empty(in.shape, in.dtype, graphrt::cpu());
      std::vector<char> zeros(x.nbytes(), 0);
      x.copy_from_bytes(zeros.data(), zeros.size());
      executor->set_input(in.name, x.handle());
    }
    executor->run();
    graphrt::NDArray out = executor->get_output(0).copy_to_device(graphrt::cpu());
    std::printf("output 0: %s %s\n", graphrt::shape_to_string(out.shape()).c_str(),
                graphrt::dtype_to_string(out.dtype()).c_str());
  } catch (const graphrt::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
