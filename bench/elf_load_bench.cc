// Load-time benchmark: graphrt's embedded ELF loader vs dlopen+dlclose on the
// largest TVM fixture. A plain program, not a test.
//
//   elf_load_bench [path-to-.so] [iterations]
// Default path: $GRAPHRT_FIXTURES or ../shared/fixtures, squeezenet1.1/deploy_factory.so.
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "src/elf/elf_image.h"
#include "src/elf/elf_imports.h"
#include "graphrt/error.h"

namespace {

double median_ms(int iterations, const std::function<void()>& body) {
  std::vector<double> samples;
  for (int i = 0; i < iterations; ++i) {
    const auto start = std::chrono::steady_clock::now();
    body();
    samples.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

std::string default_path() {
  const char* env = std::getenv("GRAPHRT_FIXTURES");
  const std::string dir = env ? env : GRAPHRT_BENCH_FIXTURES_DIR;
  return dir + "/squeezenet1.1/deploy_factory.so";
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : default_path();
  const int iterations = argc > 2 ? std::max(1, std::atoi(argv[2])) : 51;
  graphrt::elf::LoadOptions options;
  options.imports = &graphrt::elf::libc_allowlist_symbol;
  try {
    const double elf = median_ms(iterations, [&] {
      auto image = graphrt::elf::ElfImage::load_file(path, options);
      if (!image->symbol("__TVMAPISetLastError")) throw graphrt::Error("no __TVMAPISetLastError");
    });
    const double dl = median_ms(iterations, [&] {
      void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!h) throw graphrt::Error(std::string("dlopen failed: ") + dlerror());
      if (!dlsym(h, "__TVMAPISetLastError")) throw graphrt::Error("no __TVMAPISetLastError");
      dlclose(h);
    });
    std::printf("file: %s\niterations: %d\n", path.c_str(), iterations);
    std::printf("elf loader (load+lookup+unload): median %.3f ms\n", elf);
    std::printf("dlopen+dlsym+dlclose:            median %.3f ms\n", dl);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "elf_load_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
